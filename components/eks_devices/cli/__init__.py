"""The `eks-devices` command: preview, render, preflight, catalog. Nothing imports this package."""

import gc
import sys


def main() -> None:
    """Run the command; an installed device family that is not one stops it with the reason (exit 2).

    The cyclic garbage collector is off from the first import: each command is one short process
    (`cli/collector.py`), and its passes over the modules being imported cost every command
    3–6% of its CPU (docs/performance.md)."""
    gc.disable()
    from eks_devices.core.vocabulary import PluginError

    try:
        from eks_devices.cli.app import main as run
    except PluginError as exc:
        print(f"eks-devices: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    run()


__all__ = ["main"]
