"""The `eks-devices` command: preview, render, preflight, catalog. Nothing imports this package."""

import sys

from eks_devices.core.vocabulary import PluginError


def main() -> None:
    """Run the command; an installed device family that is not one stops it with the reason (exit 2)."""
    try:
        from eks_devices.cli.app import main as run
    except PluginError as exc:
        print(f"eks-devices: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    run()


__all__ = ["main"]
