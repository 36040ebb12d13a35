"""The component provider's entry point: the Python language host runs `python <this folder>
<engine address>` (pulumi-language-python `RunPlugin`), and this folder is on `sys.path` first, so
`eks_devices` is imported from here."""

from eks_devices.package.provider import main

if __name__ == "__main__":
    main()
