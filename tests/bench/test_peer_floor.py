"""bench/peer.py's SDK floor registers exactly the resources it is given, parents first, whatever
their order in the preview's listing (sorted by URN, where a child can come before its parent)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.stacks import ROOT

PEER = ROOT / "bench" / "peer.py"


def _replay(tmp_path: Path, resources: list[dict[str, object]], *flags: str,
            python: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "floor.json"
    spec.write_text(json.dumps({"modules": [], "resources": resources}))
    return subprocess.run([sys.executable, *python, str(PEER), "--replay", str(spec), *flags], capture_output=True,
                          text=True, timeout=120)


def _resource(type_: str, name: str, parent: str | None, component: bool = False) -> dict[str, object]:
    return {"type": type_, "name": name, "parent": parent, "component": component, "remote": False,
            "inputs": {"name": name, "tags": {"pool": name}}}


def test_the_floor_registers_every_resource_parents_first(tmp_path: Path) -> None:
    resources = [
        _resource("aws:ec2/subnet:Subnet", "child", "acme:index:Inner::inner"),
        _resource("acme:index:Inner", "inner", "acme:index:Outer::outer", component=True),
        _resource("acme:index:Outer", "outer", None, component=True),
        _resource("aws:ec2/vpc:Vpc", "vpc", None),
    ]
    result = _replay(tmp_path, resources)
    assert result.returncode == 0, result.stderr
    stack = "urn:pulumi:floor::eks-devices::"  # Pulumi's mocks name only the parent's type in a URN
    assert json.loads(result.stdout) == [
        f"{stack}acme:index:Inner$aws:ec2/subnet:Subnet::child",
        f"{stack}acme:index:Outer$acme:index:Inner::inner",
        f"{stack}pulumi:pulumi:Stack$acme:index:Outer::outer",
        f"{stack}pulumi:pulumi:Stack$aws:ec2/vpc:Vpc::vpc",
    ]


def test_a_resource_whose_parent_is_not_listed_stops_the_floor(tmp_path: Path) -> None:
    result = _replay(tmp_path, [_resource("aws:ec2/subnet:Subnet", "orphan", "acme:index:Gone::gone")])
    assert result.returncode != 0
    assert "no parent for ['orphan']" in result.stderr


def _imported(importtime: str) -> set[str]:
    """The modules `python -X importtime` reported importing (those `importlib.import_module` imports itself,
    the command's module here, are not reported; what they import is)."""
    return {line.rsplit("|", 1)[1].strip() for line in importtime.splitlines() if line.startswith("import time:")}


def test_the_floor_with_the_command_imports_the_command_and_registers_the_same(tmp_path: Path) -> None:
    resources = [_resource("acme:index:Outer", "outer", None, component=True),
                 _resource("aws:ec2/vpc:Vpc", "vpc", "acme:index:Outer::outer")]
    alone = _replay(tmp_path, resources, python=("-X", "importtime"))
    with_command = _replay(tmp_path, resources, "--with-command", python=("-X", "importtime"))
    assert alone.returncode == 0, alone.stderr[-500:]
    assert with_command.returncode == 0, with_command.stderr[-500:]
    assert json.loads(with_command.stdout) == json.loads(alone.stdout) != []
    assert {"eks_devices.core.planner", "eks_devices.cli.collector", "pydantic", "typer"} <= _imported(with_command.stderr)
    assert not any(name.startswith(("eks_devices", "pydantic", "typer")) for name in _imported(alone.stderr))
