"""AMIs pinned per stack and per pool, and the node rolls `diff` reports for them: Karpenter alias
versions, node group release versions, Auto Mode's and Karpenter's rolls on a control-plane upgrade,
`@latest` drift, and `--fail-on roll-reserved`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from eks_devices.cli.report import plan_data
from eks_devices.core.config.errors import ConfigError
from eks_devices.core.manifests import launch_templates
from eks_devices.core.manifests import nodes as manifests
from eks_devices.offline import diff
from support import engine, stacks
from support.cli import run as cli

P5 = ["p5.48xlarge"]
CB = {"capacity": "capacity-block", "capacityReservationIds": ["cr-0123456789abcdef0"],
      "availabilityZone": "us-west-2a", "placementGroup": False, "provisioning": "static", "replicas": 1}
TWO_ZONES = {"availabilityZones": ["us-west-2a", "us-west-2b"]}


def karpenter(version: str = "1.35", **cluster: Any) -> dict[str, Any]:
    """A Karpenter stack with a dynamic pool and a static capacity-block pool."""
    return stacks.config("karpenter", version, {"dyn": {"instanceTypes": ["g6e.xlarge"]},
                                                "cb": {"instanceTypes": P5, **CB}},
                         name="ml", network=TWO_ZONES, cluster={"karpenter": {"version": "1.15.0"}, **cluster})


def compare(before_cfg: dict[str, Any], after_cfg: dict[str, Any]) -> tuple[list[diff.Change], dict[str, Any]]:
    before, after = engine.main(before_cfg, stack="ami"), engine.main(after_cfg, stack="ami")
    changes = diff.compare(before, after)
    story = diff.device_story(plan_data(stacks.build(before_cfg)), plan_data(stacks.build(after_cfg)), changes,
                              (before, after))
    return changes, story


# --- configuration --------------------------------------------------------------------------------

def problems(cfg: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigError) as caught:
        stacks.build(cfg)
    return {p.path: p.accepted for p in caught.value.problems}


def test_ami_versions_are_checked_in_the_form_the_mode_pins_by() -> None:
    """A Karpenter alias version per family, a node group release for the cluster's minor, nothing in
    Auto Mode; every problem at its path at once."""
    found = problems(stacks.config("karpenter", "1.36", {
        "a": {"instanceTypes": P5, "amiVersion": "20251117"},
        "b": {"instanceTypes": P5, "ami": "bottlerocket", "amiVersion": "v20251117"}}))
    assert found["nodePools.a.amiVersion"].startswith("'latest' or an AL2023 release such as v20251117")
    assert found["nodePools.b.amiVersion"].startswith("'latest' or a Bottlerocket release such as v1.49.0")
    found = problems(stacks.config("managed-node-groups", "1.36", {
        "a": {"instanceTypes": P5, "replicas": 1, "amiVersion": "1.35.2-20251117"}}, cluster={"amiVersion": "v2"}))
    assert found["nodePools.a.amiVersion"].startswith("a release for Kubernetes 1.36")
    assert found["cluster.amiVersion"].startswith("'latest' or an EKS AL2023 release such as 1.36.0-20251117")
    found = problems(stacks.config("auto-mode", "1.36", {"a": {"instanceTypes": P5, "amiVersion": "v20251117"}}))
    assert "Auto Mode chooses and upgrades its own AMIs" in found["nodePools.a.amiVersion"]


def test_a_pinned_version_reaches_the_node_class_and_the_node_group() -> None:
    """The pool's own version wins over the stack's; `latest` leaves the node group's releaseVersion unset."""
    plan = stacks.build(karpenter("1.36", amiVersion="v20251117") | {"eks-devices:nodePools": {
        "dyn": {"instanceTypes": ["g6e.xlarge"], "amiVersion": "v20251201"},
        "cb": {"instanceTypes": P5, **CB}}})
    facts = manifests.ClusterFacts(cluster_name="ml", node_role_name="r", discovery_tag="ml",
                                   cluster_security_group_id="sg-1", efa_security_group_id="sg-2")
    terms = {n: manifests.karpenter_node_class_spec(p, facts)["amiSelectorTerms"] for n, p in plan.pools.items()}
    assert terms == {"dyn": [{"alias": "al2023@v20251201"}], "cb": [{"alias": "al2023@v20251117"}]}
    groups = stacks.build(stacks.config("managed-node-groups", "1.36", {
        "a": {"instanceTypes": P5, "replicas": 1, "amiVersion": "1.36.1-20251117"},
        "b": {"instanceTypes": P5, "replicas": 1}}))
    assert launch_templates.node_group_args(groups.pools["a"])["release_version"] == "1.36.1-20251117"
    assert "release_version" not in launch_templates.node_group_args(groups.pools["b"])


# --- diff ---------------------------------------------------------------------------------------

def test_a_karpenter_version_bump_rolls_every_pool_naming_the_capacity_block_one() -> None:
    """Nothing of a NodePool changes, yet alias AMIs follow the minor: every node drifts. The story
    says why, names the static capacity-block pool and lists it as reserved capacity rolled."""
    changes, story = compare(karpenter("1.35"), karpenter("1.36"))
    assert not [c for c in changes if c.action == "replace"]
    pools = {s["pool"]: s for s in story["pools"]}
    assert {p: s["nodes"] for p, s in pools.items()} == {"cb": "rolled", "dyn": "rolled"}
    assert pools["cb"]["rolledBecause"][0].startswith("Kubernetes 1.35 → 1.36: Karpenter resolves alias AMIs")
    assert (pools["cb"]["capacity"], pools["cb"]["provisioning"]) == ("capacity-block", "static")
    assert story["reservedCapacityRolled"] == ["cb"]
    assert any(w.startswith("static capacity-block pool cb: every node is rolled") for w in story["warnings"])
    # both pools stay on @latest: each AMI release drifts them too
    assert [(d["pool"], d["alias"]) for d in story["amiDrift"]] == [("cb", "al2023@latest"), ("dyn", "al2023@latest")]


def test_a_new_alias_version_drifts_the_pools_of_that_node_class_only() -> None:
    """amiSelectorTerms are outside the EC2NodeClass hash, but a new alias resolves to another AMI:
    the pool's nodes roll (AMIDrift); the other pool's do not, and pinned pools leave amiDrift."""
    pinned = {"cb": {"instanceTypes": P5, **CB, "amiVersion": "v20251117"}}
    before, after = karpenter("1.36"), karpenter("1.36")
    before["eks-devices:nodePools"].update(pinned)
    after["eks-devices:nodePools"].update({"cb": {**pinned["cb"], "amiVersion": "v20251201"}})
    changes, story = compare(before, after)
    node_class = next(c for c in changes if c.name == "platform-cb-class")
    assert node_class.action == "update" and node_class.changed == ['spec.amiSelectorTerms']
    assert node_class.rolls and node_class.rollout.startswith("spec.amiSelectorTerms: drift of the nodes")
    assert story["nodesRolled"] == ["cb"] and story["reservedCapacityRolled"] == ["cb"]
    assert [d["pool"] for d in story["amiDrift"]] == ["dyn"]


def test_a_node_group_release_version_rolls_that_group() -> None:
    before = stacks.config("managed-node-groups", "1.36", {"a": {"instanceTypes": P5, "replicas": 1}},
                           name="ml", network=TWO_ZONES)
    after = stacks.config("managed-node-groups", "1.36", {"a": {"instanceTypes": P5, "replicas": 1,
                                                                "amiVersion": "1.36.1-20251117"}},
                          name="ml", network=TWO_ZONES)
    changes, story = compare(before, after)
    group = next(c for c in changes if c.type == "aws:eks/nodeGroup:NodeGroup")
    assert group.action == "update" and group.changed == ["releaseVersion"] and group.rolls == [group.urn]
    assert story["nodesRolled"] == ["a"] and story["amiDrift"] == []


def test_fail_on_roll_reserved(tmp_path: Path) -> None:
    """`--fail-on roll-reserved` exits 1 when a reserved pool's nodes roll; `replace` does not for a roll."""
    root = tmp_path / "project"
    (root / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        (root / name).write_text((stacks.ROOT / name).read_text())
    (root / "stacks" / "Pulumi.ml.yaml").write_text(yaml.safe_dump({"config": karpenter("1.36")}))
    (root / "old.yaml").write_text(yaml.safe_dump({"config": karpenter("1.35")}))
    result = cli("diff", "ml", "--against", str(root / "old.yaml"), "--fail-on", "roll-reserved", "--json",
                 "--project-dir", str(root))
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["devices"]["reservedCapacityRolled"] == ["cb"]
    result = cli("diff", "ml", "--against", str(root / "old.yaml"), "--fail-on", "replace",
                 "--project-dir", str(root))
    assert result.returncode == 0, result.stderr
    assert "static pool" in result.stdout and "AMI drift: pool cb (static, capacity-block)" in result.stdout
