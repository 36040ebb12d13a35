"""`python -m eks_devices.core.rules` prints the rule table docs/rules.md holds."""

from eks_devices.core.rules import markdown_table

if __name__ == "__main__":  # importing the module (as a walk of the package does) prints nothing
    print(markdown_table(), end="")
