"""`eks-devices diff STACK --against BASELINE` and `preview --against` through the CLI: baselines
from a stack file, a git revision and a devicePlan output; exit codes 0/1/2; `--json`."""

from __future__ import annotations

import json
import runpy
import shutil
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from eks_devices.offline.engine import config_strings
from support import engine, stacks
from support.cli import git
from support.cli import run as cli

SMALL = stacks.config("auto-mode", name="small", network={"cidr": "10.50.0.0/16", "availabilityZones": 2,
                                                          "natGateways": "single"})


def project(tmp_path: Path, config: dict[str, Any], stack: str = "small") -> Path:
    """A project folder with this checkout's program and one stack file."""
    root = tmp_path / "project"
    (root / "stacks").mkdir(parents=True)
    shutil.copy(stacks.ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copy(stacks.ROOT / "__main__.py", root / "__main__.py")
    write_stack(root / "stacks" / f"Pulumi.{stack}.yaml", config)
    return root


def write_stack(path: Path, config: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump({"config": config}), encoding="utf-8")


def test_a_git_revision_baseline_and_fail_on_replace(tmp_path: Path) -> None:
    """The stack file at HEAD (read with git, under Pulumi.yaml's stackConfigDir) against the edited
    file: a new VPC CIDR replaces the VPC (cidrBlock), stateful, so `--fail-on replace` exits 1."""
    root = project(tmp_path, SMALL)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "v1")
    write_stack(root / "stacks" / "Pulumi.small.yaml",
                stacks.config("auto-mode", name="small", network={"cidr": "10.51.0.0/16", "availabilityZones": 2,
                                                                  "natGateways": "single"}))
    result = cli("diff", "small", "--against", "HEAD", "--fail-on", "replace", "--json", cwd=root)
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert (data["baseline"], data["baselineKind"]) == ("HEAD:stacks/Pulumi.small.yaml", "git-revision")
    vpc = next(c for c in data["changes"] if c["type"] == "aws:ec2/vpc:Vpc")
    assert vpc["action"] == "replace" and vpc["stateful"] and vpc["urn"] in data["statefulReplacedOrDeleted"]
    assert any(r.startswith("cidrBlock: replace-forcing property cidrBlock") for r in vpc["reasons"])
    assert data["summary"]["replace"] >= 5  # the VPC, both zones' subnets of each kind, and what reads them


def test_a_device_plan_baseline_of_the_same_stack_reports_no_change(tmp_path: Path) -> None:
    """`pulumi stack output devicePlan --json` (here: the program's export under the mock engine)
    carries the stack config, so the deployed stack is rebuilt from it; unchanged → exit 0."""
    exported = device_plan_export(secret=False)
    plan = tmp_path / "device-plan.json"
    plan.write_text(json.dumps(exported), encoding="utf-8")
    root = project(tmp_path, SMALL)
    result = cli("diff", "small", "--against", str(plan), "--fail-on", "replace", "--project-dir", str(root))
    assert result.returncode == 0, result.stderr
    assert "No resource changes" in result.stdout and "0 to replace" in result.stdout
    assert "against devicePlan output" in result.stdout


@pytest.mark.parametrize(("against", "expected"), [
    ("no-such-revision", "neither a file nor a git revision"),
    ("--upload-pack=x", "'--upload-pack=x'"),
    ("plain.json", "JSON without a stackConfig mapping"),
    ("bad.yaml", "network.natGateways: given 'many'; accepted: "),  # each problem as check and preview say it
])
def test_unusable_baselines_exit_2_with_every_problem(tmp_path: Path, against: str, expected: str) -> None:
    root = project(tmp_path, SMALL)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "v1")
    (tmp_path / "plain.json").write_text(json.dumps({"mode": "auto-mode"}), encoding="utf-8")
    write_stack(tmp_path / "bad.yaml", stacks.config("auto-mode", name="small", overrides={
        "eks-devices:cluster": {"version": "one"}, "eks-devices:network": {"natGateways": "many"}}))
    for as_json in (False, True) if against == "bad.yaml" else (False,):
        result = cli("diff", "small", "--against", against, "--project-dir", str(root), *(["--json"] if as_json else []),
                     cwd=tmp_path)
        assert result.returncode == 2, (result.stdout, result.stderr)
        assert "Traceback" not in result.stderr
        if as_json:
            data = json.loads(result.stdout)
            assert data["error"] == f"stack small against {against!r}: {len(data['problems'])} problem(s), nothing compared"
            assert all({"in", "path", "given", "accepted"} <= set(p) for p in data["problems"]) and data["problems"]
        else:
            assert expected in result.stderr
    if against == "bad.yaml":
        paths = {p["path"] for p in json.loads(result.stdout)["problems"]}
        assert {"cluster.version", "network.natGateways"} <= paths


def test_problems_of_the_stack_and_the_baseline_are_listed_together(tmp_path: Path) -> None:
    root = project(tmp_path, stacks.config("auto-mode", name="small", overrides={"eks-devices:cluster": {"mode": "x"}}))
    write_stack(tmp_path / "bad.yaml", stacks.config("auto-mode", name="small", overrides={
        "eks-devices:network": {"natGateways": "many"}}))
    result = cli("diff", "small", "--against", str(tmp_path / "bad.yaml"), "--project-dir", str(root), "--json")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    found = {(p["in"].split()[0], p["path"]) for p in json.loads(result.stdout)["problems"]}
    assert found == {("stack", "cluster.mode"), ("baseline", "network.natGateways")}


@pytest.mark.parametrize(("mode", "before", "after", "cluster"), [
    ("auto-mode", "1.35", "1.36", {}),
    ("managed-node-groups", "1.33", "1.34", {}),
    ("karpenter", "1.36", "1.36", "1.15.0"),
], ids=["auto-mode-1.36", "node-groups-1.34", "karpenter-1.15"])
def test_preview_against_a_baseline_warns_about_manager_flips(tmp_path: Path, mode: str, before: str, after: str,
                                                              cluster: Any) -> None:
    """Each upgrade that flips an `auto` GPU pool to DRA (Kubernetes for Auto Mode and node groups,
    Karpenter 1.14 → 1.15 on Kubernetes 1.36) is named by `preview --against` the old stack."""
    pool = {"gpu": {"instanceTypes": ["g6.xlarge"], **({"replicas": 1} if mode == "managed-node-groups" else {})}}

    def karpenter(version: str) -> dict[str, Any]:
        return {"cluster": {"karpenter": {"version": version}}} if cluster else {}

    current = stacks.config(mode, after, pool, name="small", **karpenter(cluster or ""))
    baseline = stacks.config(mode, before, pool, name="small", **karpenter("1.14.0"))
    assert current != baseline
    root = project(tmp_path, current)
    write_stack(tmp_path / "old.yaml", baseline)
    result = cli("preview", "small", "--against", str(tmp_path / "old.yaml"), "--project-dir", str(root))
    assert result.returncode == 0, result.stderr
    assert "warning: pool gpu nvidia: the manager flips from device-plugin to dra" in result.stderr


def device_plan_export(*, secret: bool) -> dict[str, Any]:
    """The program's `devicePlan` export for SMALL, with `eks-devices:network` a secret or not;
    checks the export carries the config and is a secret exactly when a config key is."""

    def program() -> None:
        pulumi.runtime.set_all_config(config_strings(SMALL), ["eks-devices:network"] if secret else [])
        runpy.run_path(str(engine.MAIN))
        plan = pulumi.runtime.settings.get_root_resource().outputs["devicePlan"]
        pulumi.export("planIsSecret", pulumi.Output.from_input(plan).is_secret())

    rec = engine.run(program, SMALL, stack="small")
    assert rec.exports["planIsSecret"] is secret
    assert rec.exports["devicePlan"]["stackConfig"] == SMALL
    return rec.exports["devicePlan"]


def test_the_device_plan_output_is_secret_when_a_config_key_is() -> None:
    """The export carries the config, so a secret config key makes the whole output a secret (the
    plain case is checked by the devicePlan baseline test)."""
    device_plan_export(secret=True)


def test_a_baseline_with_a_key_given_twice_is_checked_whole(tmp_path: Path) -> None:
    root = project(tmp_path, SMALL)
    (tmp_path / "bad.yaml").write_text("""config:
  eks-devices:cluster: {name: small, version: "1.36", mode: auto-mode}
  eks-devices:network: {natGateways: many}
  eks-devices:network: {natGateways: many}
""", encoding="utf-8")
    result = cli("diff", "small", "--against", str(tmp_path / "bad.yaml"), "--project-dir", str(root), "--json")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert [p["path"] for p in json.loads(result.stdout)["problems"]] == ["network", "network.natGateways"]
