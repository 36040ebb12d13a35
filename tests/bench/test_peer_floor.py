"""bench/peer.py's SDK floor registers exactly the resources it is given, parents first, whatever
their order in the preview's listing (sorted by URN, where a child can come before its parent)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.stacks import ROOT

PEER = ROOT / "bench" / "peer.py"


def _replay(tmp_path: Path, resources: list[dict[str, object]]) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "floor.json"
    spec.write_text(json.dumps({"modules": [], "resources": resources}))
    return subprocess.run([sys.executable, str(PEER), "--replay", str(spec)], capture_output=True, text=True,
                          timeout=120)


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
