"""What `preview` says of a program's URNs is what the engine would: two resources with one URN fail
the program as `pulumi up` fails it, and resources told apart only by a grandparent's type are two."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support.cli import run
from support.stacks import ROOT

# a team's program after the platform's (the project's own program, then the lines given)
THINGS = """
import pulumi
outer_a = pulumi.ComponentResource("team:index:A", "a")
outer_b = pulumi.ComponentResource("team:index:B", "b")
for name, outer in (("a", outer_a), ("b", outer_b)):
    middle = pulumi.ComponentResource("team:index:Middle", f"middle-{name}",
                                      opts=pulumi.ResourceOptions(parent=outer))
    pulumi.ComponentResource("team:index:Leaf", "leaf", opts=pulumi.ResourceOptions(parent=middle))
"""


def _project(tmp_path: Path, extra: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: eks-devices\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "__main__.py").write_text((ROOT / "__main__.py").read_text() + extra)
    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "stacks" / "Pulumi.dev.yaml", tmp_path / "stacks")
    return tmp_path


def test_two_resources_with_one_urn_fail_the_program_as_the_engine_does(tmp_path: Path) -> None:
    extra = '\nimport pulumi\npulumi.ComponentResource("team:index:Thing", "x")\npulumi.ComponentResource("team:index:Thing", "x")\n'
    result = run("preview", "dev", "--project-dir", str(_project(tmp_path, extra)))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "the Pulumi program failed for stack dev: Duplicate resource URN "
        "'urn:pulumi:dev::eks-devices::team:index:Thing::x'; try giving it a unique name "
        "(EKS_DEVICES_TRACEBACK=1 shows where)")
    assert result.stdout == ""


def test_a_grandparents_type_tells_two_resources_apart(tmp_path: Path) -> None:
    result = run("preview", "dev", "--json", "--project-dir", str(_project(tmp_path, THINGS)))
    assert result.returncode == 0, result.stderr
    leaves = sorted(r["urn"] for r in json.loads(result.stdout)["resources"] if r["type"] == "team:index:Leaf")
    assert leaves == [f"urn:pulumi:dev::eks-devices::team:index:{outer}$team:index:Middle$team:index:Leaf::leaf"
                      for outer in ("A", "B")]
