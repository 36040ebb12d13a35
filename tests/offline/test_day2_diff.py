"""`offline.diff` on the day-2 changes of issue 14's list that replace nodes or stateful resources
without a replace-forcing change of the pool itself: tags and disk sizes rolling nodes, zones
added, a Karpenter upgrade flipping `auto` managers, a brought KMS key. Each compares two mock-engine
runs of the real program (before and after the change)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rich.console import Console

from eks_devices.cli.diff_view import print_diff
from eks_devices.cli.report import plan_data
from eks_devices.core.knowledge import rollouts
from eks_devices.offline import diff
from support import engine, stacks

NODE_GROUP, NODE_POOL = "aws:eks/nodeGroup:NodeGroup", "kubernetes:karpenter.sh/v1:NodePool"
SUBNET = "aws:ec2/subnet:Subnet"
TWO_ZONES = ["us-west-2a", "us-west-2b"]
# two pools: one pinned to the NVIDIA device plugin, one whose `auto` managers depend on versions
POOLS = {"a": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}},
         "b": {"instanceTypes": ["p5.48xlarge"]}}
STATIC = {name: {**pool, "replicas": 1} for name, pool in POOLS.items()}
ARN = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
_RUNS: dict[str, tuple[engine.Recording, dict[str, Any]]] = {}


def stack(mode: str, *, karpenter: str = "1.15.0", zones: Any = None, pools: dict[str, Any] | None = None,
          **cluster: Any) -> dict[str, Any]:
    """A two-pool stack of `mode` (node groups: static pools) in two listed zones."""
    base = STATIC if mode == "managed-node-groups" else POOLS
    extra = {"karpenter": {"version": karpenter}} if mode == "karpenter" else {}
    return stacks.config(mode, "1.36", {**base, **(pools or {})}, name="ml",
                         network={"availabilityZones": zones or TWO_ZONES}, cluster={**extra, **cluster})


def run_and_plan(config: dict[str, Any]) -> tuple[engine.Recording, dict[str, Any]]:
    key = json.dumps(config, sort_keys=True)
    if key not in _RUNS:
        _RUNS[key] = engine.main(config, stack="day2"), plan_data(stacks.build(config))
    return _RUNS[key]


def compare(before_cfg: dict[str, Any], after_cfg: dict[str, Any]) -> tuple[list[diff.Change], dict[str, Any]]:
    before, before_plan = run_and_plan(before_cfg)
    after, after_plan = run_and_plan(after_cfg)
    changes = diff.compare(before, after)
    return changes, diff.device_story(before_plan, after_plan, changes, (before, after))


def pools_of(story: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["pool"]: s for s in story["pools"]}


# --- tags and disk sizes roll nodes although nothing is replaced ------------------------------------

@pytest.mark.parametrize("mode", ["managed-node-groups", "karpenter"])
def test_cluster_tags_roll_every_pool_and_warn(mode: str) -> None:
    """Tags are in every launch template's tagSpecifications (a new version, which EKS rolls each
    node group onto) and every EC2NodeClass's spec (Karpenter drift): nothing is replaced, yet every
    pool's nodes are, so the story lists them and warns that no pool keeps its capacity."""
    changes, story = compare(stack(mode), stack(mode, tags={"team": "ml"}))
    assert diff.summary(changes)["replace"] == 0 and diff.summary(changes)["delete"] == 0
    assert story["nodesRolled"] == ["a", "b", "platform-system"]  # the system node group too
    assert {s["pool"]: s["nodes"] for s in story["pools"]} == {"a": "rolled", "b": "rolled"}
    assert any("every pod on pool a is evicted" in w for w in pools_of(story)["a"]["workloadsLosingNodes"])
    warning, *held = story["warnings"]
    assert warning.startswith("every pool's nodes are replaced at once (a, b)")
    # node groups are static pools: each rolled one is named
    assert held == (["static pool a: every node is rolled", "static pool b: every node is rolled"]
                    if mode == "managed-node-groups" else [])
    named = {c.name: c for c in changes}
    if mode == "managed-node-groups":
        for pool in ("a", "b"):
            template = next(c for c in changes if c.type == rollouts.LAUNCH_TEMPLATE and c.name == f"platform-{pool}")
            group = next(c for c in changes if c.type == NODE_GROUP and c.name == f"platform-{pool}")
            assert template.action == "update" and template.rolls == [group.urn]
            assert template.rollout.startswith("tagSpecifications: a new launch template version")
            assert group.action == "update" and "launchTemplate.version" in group.changed
            assert group.rolls == [group.urn] and "internal/service/eks/node_group.go" in group.rollout
    else:
        for pool in ("a", "b"):
            node_class = named[f"platform-{pool}-class"]
            assert node_class.action == "update" and node_class.changed == ["spec.tags.team"]
            assert [urn.rsplit("::", 1)[1] for urn in node_class.rolls] == [f"platform-{pool}"]
            assert "drift" in node_class.rollout and "karpenter-provider-aws" in node_class.rollout
        assert not [c for c in changes if c.type == NODE_POOL]  # the NodePools themselves are unchanged


@pytest.mark.parametrize("mode", ["managed-node-groups", "karpenter"])
def test_a_pools_disk_size_rolls_that_pool_only(mode: str) -> None:
    """diskSizeGib is in one pool's launch template / EC2NodeClass block devices: that pool's nodes
    roll, the other pool keeps its nodes, and there is no every-pool warning."""
    changes, story = compare(stack(mode), stack(mode, pools={"a": {**stack(mode)["eks-devices:nodePools"]["a"],
                                                                   "diskSizeGib": 400}}))
    assert diff.summary(changes)["replace"] == 0
    assert story["nodesRolled"] == ["a"]
    assert story["warnings"] == (["static pool a: every node is rolled"] if mode == "managed-node-groups" else [])
    assert [(s["pool"], s["nodes"]) for s in story["pools"]] == [("a", "rolled")]
    rolled = [c for c in changes if c.rolls]
    assert rolled and all("blockDeviceMappings" in c.rollout for c in rolled if c.type != NODE_GROUP)


# --- zones ------------------------------------------------------------------------------------------------

def test_a_zone_sorting_after_the_listed_ones_keeps_subnets_but_replaces_spanning_node_groups() -> None:
    """us-west-2c added to [a, b]: every existing subnet keeps its CIDR (nothing stateful of the
    network is replaced), the new zone's subnets are created, and the node groups that span every
    zone are replaced for their subnetIds (a pool in one zone, like the EFA pool b, is kept); a pool with a given, unchanged nodeGroupName loses its
    nodes first (the provider deletes the old group before creating the new one)."""
    changes, story = compare(stack("managed-node-groups"),
                             stack("managed-node-groups", zones=[*TWO_ZONES, "us-west-2c"]))
    subnets = [c for c in changes if c.type == SUBNET]
    assert {(c.name, c.action) for c in subnets} == {("platform-private-us-west-2c", "create"),
                                                    ("platform-public-us-west-2c", "create")}
    groups = {c.name: c for c in changes if c.type == NODE_GROUP}
    assert set(groups) == {"platform-a", "platform-system"}  # b (EFA) lives in one zone: kept
    for group in groups.values():
        assert group.action == "replace" and group.changed == ["subnetIds"]
        assert group.reasons[0].startswith("subnetIds: replace-forcing property subnetIds")
    assert groups["platform-a"].delete_before_replace and not groups["platform-system"].delete_before_replace
    assert any("nameRequiresDeleteBeforeReplace" in r for r in groups["platform-a"].reasons)
    assert {c.type for c in diff.stateful_losses(changes)} == {NODE_GROUP}
    a = pools_of(story)["a"]
    assert (a["nodes"], a["oldNodesDeletedFirst"], a["reservedCapacityReleasedFirst"]) == ("replaced", True, False)


def test_going_past_four_zones_recuts_the_protected_public_subnets() -> None:
    """4 → 5 zones: the public subnets are cut smaller, so every existing one is replaced for its
    cidrBlock. They are protected, so `diff` flags them and `--fail-on replace` (stateful losses)
    stops CI; the private subnets keep their CIDRs."""
    before = stacks.config("managed-node-groups", name="ml", network={"availabilityZones": 4})
    changes, _ = compare(before, stacks.config("managed-node-groups", name="ml", network={"availabilityZones": 5}))
    subnets = {c.name: c for c in changes if c.type == SUBNET}
    recut = {n for n, c in subnets.items() if c.action == "replace"}
    assert recut == {f"platform-public-{i}" for i in range(4)}
    assert {n for n, c in subnets.items() if c.action == "create"} == {"platform-public-4", "platform-private-4"}
    for name in recut:
        assert subnets[name].protected and subnets[name].stateful
        assert subnets[name].reasons[0].startswith("cidrBlock: replace-forcing property cidrBlock")
    assert {c.urn for c in diff.stateful_losses(changes)} >= {subnets[n].urn for n in recut}


# --- a Karpenter upgrade flips `auto` managers ---------------------------------------------------------------

def test_karpenter_114_to_115_flips_auto_pools_to_dra() -> None:
    """Karpenter 1.15 provisions for DRA claims: the `auto` pool b flips from the plugins to DRA, so
    its NodePool is replaced (device-manager labels are replace-on-change), the plugin releases go,
    and pods requesting nvidia.com/gpu lose its nodes; pool a, pinned to the plugin, is untouched."""
    changes, story = compare(stack("karpenter", karpenter="1.14.0"), stack("karpenter"))
    pools = [c for c in changes if c.type == NODE_POOL]
    assert [(c.name, c.action) for c in pools] == [("platform-b", "replace")]
    assert any("replace-on-change path" in r and "device-manager-nvidia" in r for r in pools[0].reasons)
    assert {(f["pool"], f["family"], f["before"], f["after"]) for f in story["flips"]} == {
        ("b", "nvidia", "device-plugin", "dra"), ("b", "efa", "device-plugin", "dra")}
    assert story["releasesRemoved"] == ["aws-efa-k8s-device-plugin"]  # pool a still needs the NVIDIA plugin
    assert any("nvidia.com/gpu" in w for w in pools_of(story)["b"]["workloadsLosingNodes"])
    assert "a" not in pools_of(story)


# --- a brought KMS key on a cluster with the generated one -------------------------------------------------------

def test_setting_kms_key_arn_later_flags_the_protected_key_and_cluster() -> None:
    """The generated key would be deleted and the cluster replaced (its encryption key is
    replace-forcing): both are stateful and protected in the baseline, so `diff` flags them and
    `pulumi up` stops at them."""
    changes, _ = compare(stack("managed-node-groups"), stack("managed-node-groups", kmsKeyArn=ARN))
    key = next(c for c in changes if c.type == "aws:kms/key:Key")
    cluster = next(c for c in changes if c.type == "eks:index:Cluster")
    assert (key.action, key.protected, key.stateful) == ("delete", True, True)
    assert (cluster.action, cluster.protected, cluster.stateful) == ("replace", True, True)
    assert cluster.reasons[0].startswith("encryptionConfigKeyArn: replace-forcing property encryptionConfigKeyArn")
    assert {c.urn for c in diff.stateful_losses(changes)} >= {key.urn, cluster.urn}


@pytest.mark.parametrize(("type_", "changed", "rolling"), [
    (rollouts.LAUNCH_TEMPLATE, ["tags.team"], []),  # the template's own tags: no new version
    (rollouts.LAUNCH_TEMPLATE, ["tags.team", "tagSpecifications"], ["tagSpecifications"]),
    (NODE_GROUP, ["scalingConfig.desiredSize", 'labels["x"]', "tags.team"], []),  # in place, no new nodes
    (NODE_GROUP, ["releaseVersion", "launchTemplate.version"], ["releaseVersion", "launchTemplate.version"]),
    ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", ["spec.subnetSelectorTerms"], []),  # resolved, not hashed
    ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", ["spec.blockDeviceMappings"], ["spec.blockDeviceMappings"]),
    (NODE_POOL, ["spec.disruption.budgets", "spec.limits"], []),  # behavioural fields do not drift
    (NODE_POOL, ['spec.template.metadata.labels["x"]'], ['spec.template.metadata.labels["x"]']),
    (SUBNET, ["tags.team"], []),
])
def test_which_updates_roll_nodes(type_: str, changed: list[str], rolling: list[str]) -> None:
    assert rollouts.rolling_paths(type_, changed) == rolling


def test_the_diff_view_prints_the_rolled_nodes_and_the_warning() -> None:
    from rich.console import Console

    from eks_devices.cli.diff_view import print_diff

    changes, story = compare(stack("karpenter"), stack("karpenter", tags={"team": "ml"}))
    console = Console(record=True, width=400)
    print_diff(console, "t", changes, story, diff.summary(changes))
    text = console.export_text()
    assert "Nodes rolled (updated in place, every node replaced): a, b, platform-system" in text
    assert "warning: every pool's nodes are replaced at once (a, b)" in text
    assert "rolls nodes: spec.tags.team: drift of the nodes built from it" in text


@pytest.mark.parametrize("mode", ["managed-node-groups", "karpenter"])
def test_a_zone_count_turned_into_the_same_zone_list_changes_nothing(mode: str) -> None:
    """The zone-keyed subnets, routes and NAT are aliased to the position-keyed ones, and an alias
    keeps the old resource's id (as pulumi up does): nothing that reads those ids changes."""
    changes, story = compare(stack(mode, zones=2), stack(mode))
    assert [c for c in changes if c.action in ("replace", "create", "delete")] == []
    assert story["nodesRolled"] == []


@pytest.mark.parametrize("mode", ["managed-node-groups", "karpenter", "auto-mode"])
def test_a_pool_renamed_with_renamed_from_is_one_pool_whose_nodes_roll(mode: str) -> None:
    """renamedFrom keeps every resource (aliases): the pool label changes, which is a new launch
    template version (EKS rolls the group) or NodePool drift (Karpenter, Auto Mode): one pool rolled,
    nothing replaced, created or deleted, no manager flip, in JSON and in the text alike."""
    base = stack(mode)
    pools = dict(base["eks-devices:nodePools"])
    renamed = {"c": {**pools.pop("a"), "renamedFrom": "a"}, **pools}
    changes, story = compare(base, stack(mode) | {"eks-devices:nodePools": renamed})
    assert {c.action for c in changes} == {"update"}
    assert [(s["pool"], s["renamedFrom"], s["nodes"]) for s in story["pools"]] == [("c", "a", "rolled")]
    assert story["flips"] == [] and story["nodesRolled"] == ["c"]
    (pool,) = story["pools"]
    assert pool["managers"] == {"nvidia": {"before": "device-plugin", "after": "device-plugin", "flips": False}}
    assert pool["workloadsLosingNodes"] == ["every pod on pool c is evicted while its nodes are rolled"]
    if mode == "managed-node-groups":
        group = next(c for c in changes if c.type == NODE_GROUP)
        assert group.rolls == [group.urn] and "launchTemplate.version" in group.changed and not group.reasons
    for verbose in (False, True):
        console = Console(record=True, width=80)
        print_diff(console, "rename", changes, story, diff.summary(changes), verbose)
        text = console.export_text()
        assert "c (renamed from a, the same pool): nodes rolled" in text
        assert "nvidia: device-plugin\n" in text and "flips" not in text and "create" not in text.replace(
            "0 to create", "")
        source = rollouts.source(NODE_GROUP if mode == "managed-node-groups" else NODE_POOL)
        assert (source.split()[0] in text) == verbose  # upstream citations only with --verbose
        assert max(len(line) for line in text.splitlines() if " " in line.strip()) <= 80


def test_a_capacity_block_pool_renamed_without_renamed_from_fails() -> None:
    """A new group on the same Capacity Block waits for the capacity the old one holds (the old one
    is deleted last): the create is marked as failing and names the fix."""
    cb = {"instanceTypes": ["p5.48xlarge"], "replicas": 1, "capacity": "capacity-block",
          "capacityReservationIds": ["cr-0123456789abcdef0"], "availabilityZone": "us-west-2a",
          "placementGroup": False}
    before = stack("managed-node-groups", pools={"cb": cb})
    after = stack("managed-node-groups")
    after["eks-devices:nodePools"]["cb2"] = cb
    changes, story = compare(before, after)
    # a pool created and one deleted: no manager of a kept pool flips, in the list and on the pools alike
    assert [(s["pool"], s["nodes"]) for s in story["pools"]] == [("cb", "deleted"), ("cb2", "created")]
    assert story["flips"] == [] and not any(m["flips"] for s in story["pools"] for m in s["managers"].values())
    group = next(c for c in changes if c.type == NODE_GROUP and c.action == "create")
    assert group.fails and "renamedFrom: cb" in group.reasons[-1]
    assert group in diff.stateful_losses(changes)  # --fail-on replace stops on it


def test_a_pinned_zone_move_under_a_placement_group_fails() -> None:
    efa = {"instanceTypes": ["p5.48xlarge"], "replicas": 1, "availabilityZone": "us-west-2a"}
    changes, _ = compare(stack("managed-node-groups", pools={"e": efa}),
                         stack("managed-node-groups", pools={"e": {**efa, "availabilityZone": "us-west-2b"}}))
    group = next(c for c in changes if c.type == NODE_GROUP and c.name == "platform-e")
    assert group.fails and any(r.startswith("availabilityZone us-west-2a → us-west-2b: the pool keeps its cluster "
                                            "placement group") for r in group.reasons)


def test_a_capacity_block_group_upgrade_with_nodes_fails_and_at_zero_does_not() -> None:
    cb = {"instanceTypes": ["p5.48xlarge"], "capacity": "capacity-block",
          "capacityReservationIds": ["cr-0123456789abcdef0"], "availabilityZone": "us-west-2a", "placementGroup": False}
    for replicas, fails in ((1, True), (0, False)):
        changes, _ = compare(stack("managed-node-groups", pools={"cb": {**cb, "replicas": replicas}}),
                             stack("managed-node-groups", pools={"cb": {**cb, "replicas": replicas}},
                                   tags={"team": "ml"}))
        group = next(c for c in changes if c.type == NODE_GROUP and c.name == "platform-cb")
        assert group.fails is fails, group.reasons
        assert any("upgraded only at desired size 0" in r for r in group.reasons) is fails


def test_a_capacity_block_group_upgrade_counts_the_nodes_it_has_when_the_upgrade_runs() -> None:
    """The provider upgrades a node group before it applies new scaling (terraform-provider-aws
    `resourceNodeGroupUpdate`: the version update first): replicas 1 → 0 with a tag change in one
    `pulumi up` still upgrades a group of 1 node and stalls; 0 → 1 with it upgrades the empty group."""
    cb = {"instanceTypes": ["p5.48xlarge"], "capacity": "capacity-block",
          "capacityReservationIds": ["cr-0123456789abcdef0"], "availabilityZone": "us-west-2a", "placementGroup": False}
    for before, after, fails in ((1, 0, True), (0, 1, False)):
        changes, _ = compare(stack("managed-node-groups", pools={"cb": {**cb, "replicas": before}}),
                             stack("managed-node-groups", pools={"cb": {**cb, "replicas": after}}, tags={"team": "ml"}))
        group = next(c for c in changes if c.type == NODE_GROUP and c.name == "platform-cb")
        assert "launchTemplate.version" in group.changed and "scalingConfig.desiredSize" in group.changed
        assert group.fails is fails, (before, after, group.reasons)
        assert (group in diff.stateful_losses(changes)) is fails  # --fail-on replace


def test_a_skipped_kubernetes_minor_fails() -> None:
    one = stacks.config("karpenter", "1.34", {}, name="ml", network={"availabilityZones": TWO_ZONES},
                        cluster={"karpenter": {"version": "1.15.0"}})
    for version, fails in (("1.36", True), ("1.35", False)):
        changes, _ = compare(one, one | {"eks-devices:cluster": {**one["eks-devices:cluster"], "version": version}})
        cluster = next(c for c in changes if c.type == "eks:index:Cluster")
        assert cluster.fails is fails
        assert any("1 skipped minor version(s): EKS refuses it" in r for r in cluster.reasons) is fails


def test_karpenter_requirements_drift_only_the_nodes_they_no_longer_accept() -> None:
    """Requirements are outside Karpenter's drift hash: adding an instance type drifts nothing,
    removing one drifts only that type's nodes (and says so)."""
    two = {"instanceTypes": ["p5.48xlarge", "p5e.48xlarge"]}
    one = {"instanceTypes": ["p5.48xlarge"]}
    changes, story = compare(stack("karpenter", pools={"b": one}), stack("karpenter", pools={"b": two}))
    pool = next(c for c in changes if c.type == NODE_POOL and c.name == "platform-b")
    assert pool.action == "update" and pool.rolls == [] and story["nodesRolled"] == []
    changes, story = compare(stack("karpenter", pools={"b": two}), stack("karpenter", pools={"b": one}))
    pool = next(c for c in changes if c.type == NODE_POOL and c.name == "platform-b")
    assert pool.rolls == [pool.urn] and pool.partial
    assert pool.rollout.startswith("spec.template.spec.requirements: only nodes with "
                                   "node.kubernetes.io/instance-type p5e.48xlarge drift, the other nodes are kept")
    assert story["nodesRolled"] == ["b"] and pools_of(story)["b"]["nodes"] == "partly rolled"
    assert pools_of(story)["b"]["rolledBecause"] == [f"platform-b: {pool.rollout}"]


def test_the_text_names_the_managers_of_a_pool_created_or_deleted() -> None:
    """A new pool has no manager before and a deleted one none after: the text says which manager
    each brings or takes (`- → device-plugin`, `device-plugin → -`), not flips and not a bare `-`."""
    base = stack("karpenter")
    pools = dict(base["eks-devices:nodePools"])
    pools["c"] = pools.pop("a")
    changes, story = compare(base, base | {"eks-devices:nodePools": pools})
    assert [(s["pool"], s["nodes"]) for s in story["pools"]] == [("a", "deleted"), ("c", "created")]
    console = Console(record=True, width=200)
    print_diff(console, "pool a replaced by c", changes, story, diff.summary(changes))
    lines = [line.strip() for line in console.export_text().splitlines()]
    assert lines[lines.index("a: nodes deleted") + 1] == "nvidia: device-plugin → -"
    assert lines[lines.index("c: nodes created") + 1] == "nvidia: - → device-plugin"


def test_the_text_does_not_say_every_node_of_a_partly_rolled_pool_is_replaced() -> None:
    """An instance type removed from a Karpenter pool drifts only that type's nodes: the summary line
    lists the pool as partly rolled, not under 'every node replaced'."""
    two, one = {"instanceTypes": ["p5.48xlarge", "p5e.48xlarge"]}, {"instanceTypes": ["p5.48xlarge"]}
    changes, story = compare(stack("karpenter", pools={"b": two}), stack("karpenter", pools={"b": one}))
    assert story["nodesRolled"] == ["b"] and pools_of(story)["b"]["nodes"] == "partly rolled"
    console = Console(record=True, width=200)
    print_diff(console, "an instance type removed", changes, story, diff.summary(changes))
    text = console.export_text()
    assert "every node replaced" not in text
    assert "Nodes partly rolled (updated in place, only some nodes replaced): b" in text


K8S_PROVIDER = "pulumi:providers:kubernetes"


def test_a_kubernetes_provider_pointed_at_another_cluster_replaces_every_object_it_manages() -> None:
    """A new cluster name points the kubeconfig's active cluster elsewhere: the provider's DiffConfig
    asks for a replacement, and the engine then replaces every resource the provider manages (its
    reference changes: pulumi/pulumi step_generator.go `providerChanged`), NodePools and all, so the
    Karpenter pools' nodes are replaced, not rolled."""
    before = stack("karpenter")
    after = stack("karpenter") | {"eks-devices:cluster": {**before["eks-devices:cluster"], "name": "ml2"}}
    changes, story = compare(before, after)
    provider = next(c for c in changes if c.type == K8S_PROVIDER)
    assert provider.action == "replace"
    managed = [c for c in changes if c.type.startswith("kubernetes:")]
    assert managed and {c.action for c in managed} == {"replace"}
    pools = [c for c in managed if c.type == NODE_POOL]
    assert {c.name for c in pools} == {"platform-a", "platform-b"}
    assert all(any(r.startswith("its provider platform-k8s is replaced") for r in c.reasons) for c in pools)
    assert {s["pool"]: s["nodes"] for s in story["pools"]} == {"a": "replaced", "b": "replaced"}


def test_a_kubeconfig_changing_only_its_credentials_updates_the_provider_in_place() -> None:
    """aws:profile changes the kubeconfig's user (the exec profile), not its active cluster: the
    provider's DiffConfig updates it in place, and nothing it manages changes."""
    before = stack("karpenter")
    changes, _ = compare(before, before | {"aws:profile": "ml-admin"})
    provider = next(c for c in changes if c.type == K8S_PROVIDER)
    assert provider.action == "update" and provider.changed == ["kubeconfig"] and not provider.reasons
    assert not [c for c in changes if c.type.startswith("kubernetes:")]


def test_pinning_an_ami_from_latest_rolls_unless_it_is_the_release_already_running() -> None:
    """Karpenter drifts a node when its class's AMI selector no longer resolves to its AMI: pinning the
    release an `@latest` pool already runs drifts nothing, which the stack file cannot tell."""
    pinned = {"a": {**POOLS["a"], "amiVersion": "v20251117"}}
    changes, _ = compare(stack("karpenter"), stack("karpenter", pools=pinned))
    node_class = next(c for c in changes if c.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert node_class.action == "update" and node_class.rolls
    assert "unless al2023@v20251117 is the release they already run" in node_class.rollout
    # any other change of the class still just drifts the nodes
    changes, _ = compare(stack("karpenter"), stack("karpenter", pools={"a": {**POOLS["a"], "diskSizeGib": 300}}))
    other = next(c for c in changes if c.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert other.rolls and "unless" not in other.rollout
