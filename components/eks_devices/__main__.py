"""`python -m eks_devices` runs the `eks-devices` command."""

from eks_devices.cli import main

main()
