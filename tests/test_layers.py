"""The package's layers as a user meets them: the core imports without Pulumi, boto3, rich or typer;
the public surface is importable from the top."""

from __future__ import annotations

import json
import pkgutil

import eks_devices.core
from support.cli import fresh

HEAVY = ("pulumi", "pulumi_aws", "pulumi_eks", "pulumi_kubernetes", "boto3", "botocore", "rich", "typer")


def test_every_core_module_imports_without_heavy_libraries() -> None:
    modules = [m.name for m in pkgutil.walk_packages(eks_devices.core.__path__, "eks_devices.core.")]
    assert len(modules) > 30, modules  # the walk found the core, not an empty folder
    script = ("import importlib, json, sys\n"
              f"for m in {modules!r}: importlib.import_module(m)\n"
              f"print(json.dumps(sorted({{n.split('.')[0] for n in sys.modules}} & set({HEAVY!r}))))")
    loaded = json.loads(fresh(script).stdout)
    assert loaded == []
