"""`python -m components` runs the `eks-devices` command."""

from .cli import main

main()
