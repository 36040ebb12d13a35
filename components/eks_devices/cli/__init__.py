"""The `eks-devices` command: preview, render, preflight, catalog. Nothing imports this package."""

from eks_devices.cli.app import main

__all__ = ["main"]
