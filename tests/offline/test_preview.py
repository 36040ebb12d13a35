"""The offline preview runs the real program; render writes validated manifests; the README's
reuse example is the tested file."""

from __future__ import annotations

import json
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from eks_devices.core.config import stack_file
from eks_devices.offline import render
from eks_devices.platform import PROGRAM_NAME
from support import engine, stacks
from support.cli import run as cli

ROOT = stacks.ROOT
STACKS = stacks.SHIPPED


@pytest.fixture(scope="module")
def previews() -> dict[str, dict]:
    out = {}
    for stack in STACKS:
        result = cli("preview", stack, "--json")
        assert result.returncode == 0, result.stderr
        assert "running the Pulumi program" in result.stderr  # progress goes to stderr, data to stdout
        out[stack] = json.loads(result.stdout)
    return out


def program_resources(stack: str) -> list[tuple[str, str, str | None, str]]:
    """(type, name, parent as `type::name`, inputs as JSON) of every resource `__main__.py` registers
    when this process runs it under the mock engine: no CLI, no preview code."""
    rec = engine.main(stacks.shipped(stack), stack=stack)
    by_urn = {r.urn: f"{r.type}::{r.name}" for r in rec.resources}
    return sorted((r.type, r.name, by_urn.get(r.parent), json.dumps(r.inputs, sort_keys=True)) for r in rec.resources)


def reported_resources(data: dict) -> list[tuple[str, str, str | None, str]]:
    return sorted((r["type"], r["name"], r["parent"], json.dumps(r["inputs"], sort_keys=True))
                  for r in data["resources"])


@pytest.mark.parametrize("stack", STACKS)
def test_preview_is_the_program(previews: dict[str, dict], stack: str) -> None:
    """What `eks-devices preview --json` reports (a subprocess) is what the program registers run here
    directly, resource by resource with its parent and inputs; and it is what the stack's plan asks for."""
    data = previews[stack]
    assert reported_resources(data) == program_resources(stack)
    types = [r["type"] for r in data["resources"]]
    assert data["resourceCounts"] == {t: types.count(t) for t in sorted(set(types))}
    # independent of the engine: one node object per planned pool and one Helm release per planned
    # release, under the components that own them
    plan = stacks.shipped_plan(stack)
    name = PROGRAM_NAME  # logical names do not follow the cluster's name
    node_type = {"auto-mode": "kubernetes:karpenter.sh/v1:NodePool", "karpenter": "kubernetes:karpenter.sh/v1:NodePool",
                 "managed-node-groups": "aws:eks/nodeGroup:NodeGroup"}[plan.mode]
    pools = [r["name"] for r in data["resources"]
             if r["type"] == node_type and r["parent"] == f"eks-devices:index:NodePools::{name}"]
    assert sorted(pools) == sorted(f"{name}-{pool}" for pool in plan.pools)
    releases = [r["inputs"]["name"] for r in data["resources"]
                if r["type"] == "kubernetes:helm.sh/v3:Release" and r["parent"] == f"eks-devices:index:DeviceSoftware::{name}"]
    assert sorted(releases) == sorted(plan.releases)


@pytest.mark.parametrize(("stack", "expected"), [
    # Auto Mode installs no device software: no Helm release at all
    ("dev", {"kubernetes:karpenter.sh/v1:NodePool": 4, "kubernetes:eks.amazonaws.com/v1:NodeClass": 2,
             "kubernetes:resource.k8s.io/v1:DeviceClass": 2, "eks:index:Cluster": 1,
             "kubernetes:helm.sh/v3:Release": 0}),
    ("staging", {"kubernetes:karpenter.sh/v1:NodePool": 4, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": 4,
                 "kubernetes:helm.sh/v3:Release": 7, "aws:cloudwatch/eventRule:EventRule": 5}),
    ("prod", {"aws:eks/nodeGroup:NodeGroup": 4, "aws:ec2/launchTemplate:LaunchTemplate": 4,
              "kubernetes:helm.sh/v3:Release": 4, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate": 2}),
])
def test_shipped_stack_inventories(previews: dict[str, dict], stack: str, expected: dict[str, int]) -> None:
    counts = previews[stack]["resourceCounts"]
    assert {t: counts.get(t, 0) for t in expected} == expected


def test_preview_records_resource_options(previews: dict[str, dict]) -> None:
    pools = [r for r in previews["staging"]["resources"] if r["type"] == "kubernetes:karpenter.sh/v1:NodePool"]
    trn = next(r for r in pools if r["inputs"]["metadata"]["labels"]["eks-devices.io/pool"] == "trn-static")
    assert trn["options"]["deleteBeforeReplace"] is True  # capacity block: release it before the new pool
    assert any("device-manager-neuron" in path for path in trn["options"]["replaceOnChanges"])
    assert next(r for r in previews["dev"]["resources"] if r["type"] == "eks:index:Cluster")["remote"] is True


def test_preview_records_the_deploy_graph(previews: dict[str, dict]) -> None:
    """Each resource's URN, what it waits for (explicitly and through its inputs) and its provider,
    so the graph can be read offline."""
    resources = previews["prod"]["resources"]
    urns = {r["urn"] for r in resources}
    assert len(urns) == len(resources)
    # every edge ends at a recorded resource, or inside the remote pulumi-eks component (expanded at deploy)
    unknown = {u for r in resources for u in r["dependsOn"] if u not in urns}
    remote = {r["urn"].split("::")[2] for r in resources if r["type"] == "eks:index:Cluster"}
    assert unknown and all(u.split("::")[2].rsplit("$", 1)[0] in remote for u in unknown)
    group = next(r for r in resources if r["type"] == "aws:eks/nodeGroup:NodeGroup" and r["name"].endswith("p5-train"))
    template = next(r for r in resources if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"
                    and r["name"].endswith("p5-train"))
    assert template["urn"] in group["dependsOn"]  # through its launchTemplate input
    k8s = next(r for r in resources if r["type"] == "pulumi:providers:kubernetes" and r["name"] == f"{PROGRAM_NAME}-k8s")
    releases = [r for r in resources if r["type"] == "kubernetes:helm.sh/v3:Release"]
    assert releases and {r["provider"] for r in releases} == {k8s["urn"]}


@pytest.mark.parametrize("stack", STACKS)
def test_preview_leaves_the_pulumi_eks_contract_to_the_suite(previews: dict[str, dict], stack: str) -> None:
    """The contract guards the toolkit's program, not the user's stack (tests/offline/test_eks_contract.py)."""
    assert "eksContract" not in previews[stack]
    assert "pulumi-eks contract" not in cli("preview", stack).stdout


def test_preview_json_is_identical_across_runs(previews: dict[str, dict]) -> None:
    again = json.loads(cli("preview", "staging", "--json").stdout)
    assert again == previews["staging"]


def test_text_preview_shows_tree_plan_and_findings() -> None:
    result = cli("preview", "staging")
    assert result.returncode == 0
    text = result.stdout
    # staging keeps its static and capacity-block pools on @latest (a pre-production stack): warned, not refused
    # findings first, then the pools x families matrix, the resource tree last
    assert text.index("karpenter-ami-latest") < text.index("Device managers (pool x family)") < text.index(
        "eks-devices:index:Platform")
    assert "remote component" in text and "kubernetes:helm.sh/v3:Release x" in text


def test_text_preview_shows_each_claim_s_node_selector() -> None:
    """The nodeSelector a Pod using the claim must carry, in the text preview too (not only --json)."""
    result = cli("preview", "prod")
    assert result.returncode == 0
    claims = result.stdout[result.stdout.index("Claims"):]
    assert "nodeSelector" in claims and "device-manager-neuron=dra" in claims


def test_error_findings_register_no_resource(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (tmp_path / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    config = stacks.shipped("dev", overrides={"eks-devices:cluster": {"version": "1.35"}})  # Auto Mode DRA pools need 1.36
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text(yaml.safe_dump({"config": config}))
    result = cli("preview", "bad", "--json", "--project-dir", str(tmp_path))
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["resources"] == [] and data["summary"]["errors"] > 0
    assert cli("render", "bad", "--out", str(tmp_path / "out"), "--project-dir", str(tmp_path)).returncode == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("stack", STACKS)
def test_render_writes_valid_manifests_that_reparse(tmp_path: Path, stack: str) -> None:
    out = tmp_path / stack
    result = cli("render", stack, "--out", str(out), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    written = json.loads(result.stdout)["written"]
    assert written and sorted(written) == sorted(str(p.relative_to(out)) for p in out.rglob("*.yaml"))
    kinds = {path.split("/")[0] for path in written}
    assert {"auto-mode": {"deviceclass", "nodeclass", "nodepool"}, "karpenter": {"ec2nodeclass", "nodepool", "helm-values"},
            "managed-node-groups": {"helm-values", "resourceclaimtemplate"}}[
        stack_file.load(stack, ROOT / "stacks").mode] <= kinds
    for path in written:
        document = yaml.safe_load((out / path).read_text())
        assert isinstance(document, dict)
        if path.startswith("helm-values/"):
            continue
        item = render.Rendered(path, document)
        if render._builtin(document["apiVersion"]):
            for version in render.SCHEMA_VERSIONS:  # every supported Kubernetes version, strictly
                kubernetes_validate.validate(document, f"{version}.0", strict=True)
        else:
            assert render.problems(item, "1.36") == []


def test_render_refuses_invalid_objects() -> None:
    bad = render.Rendered("deviceclass/x.yaml", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                                 "metadata": {"name": "x"}, "spec": {"selectors": [{"cel": {}}]}})
    assert render.problems(bad, "1.36")
    crd = render.Rendered("nodepool/x.yaml", {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                                              "metadata": {"name": "x"}, "spec": {}})
    assert render.problems(crd, "1.36")


def test_render_output_is_byte_identical_across_runs(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert cli("render", "prod", "--out", str(tmp_path / name)).returncode == 0
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.yaml"))
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)


def test_documented_reuse_example_is_the_tested_program() -> None:
    example = (ROOT / "examples" / "own-program" / "__main__.py").read_text()
    assert example in (ROOT / "docs" / "reuse.md").read_text()
    assert len(example.splitlines()) <= 25
    recording = engine.main(stacks.example_config("own-program"), path=ROOT / "examples" / "own-program" / "__main__.py", stack="research",
                            project="research-gpus")
    counts = recording.counts()
    assert counts["kubernetes:karpenter.sh/v1:NodePool"] == 2
    assert counts["kubernetes:helm.sh/v3:Release"] == 5  # karpenter-crd, karpenter, DRA driver, DRANET, plugin
    assert recording.exports["h100NodeSelector"] == {"eks-devices.io/device-manager-nvidia": "dra",
                                                     "eks-devices.io/device-manager-efa": "dra"}
