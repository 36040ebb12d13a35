"""`offline.diff`: two mock-engine runs of the real program compared as `pulumi up` would, and the
device story of the two plans; aliases, protect and replace-on-change handled generically."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from eks_devices.cli.report import plan_data
from eks_devices.offline import diff
from eks_devices.offline.preview import resources_data
from support import engine, stacks


def compare(before_cfg: dict[str, Any], after_cfg: dict[str, Any], stack: str) -> tuple[list[diff.Change], dict]:
    before, before_plan = engine.run_and_plan(before_cfg, stack)
    after, after_plan = engine.run_and_plan(after_cfg, stack)
    changes = diff.compare(before, after)
    return changes, diff.device_story(before_plan, after_plan, changes, (before, after))


def dev_at(version: str) -> dict[str, Any]:
    """The shipped dev stack at a Kubernetes version, without the two settings that need DRA on every
    version (a shared GPU claim, EFA aligned with the GPUs): 1.35 resolves `auto` to the plugins."""
    cfg = stacks.shipped("dev", overrides={"eks-devices:cluster": {"version": version}})
    del cfg["eks-devices:nodePools"]["gpu-dra"]["gpuSharing"]
    del cfg["eks-devices:nodePools"]["train-efa"]["efa"]
    return cfg


def by_name(changes: list[diff.Change]) -> dict[str, diff.Change]:
    return {c.name: c for c in changes}


def test_a_stack_against_itself_changes_nothing() -> None:
    """Two runs of the same stack (not one recording twice) compare equal."""
    before, before_plan = engine.run_and_plan(stacks.shipped("dev"), "dev")
    after = engine.main(stacks.shipped("dev"), stack="dev")
    changes = diff.compare(before, after)
    story = diff.device_story(before_plan, before_plan, changes, (before, after))
    assert changes == []
    assert story == {"pools": [], "flips": [], "releasesRemoved": [], "releasesAdded": [], "nodesRolled": [], "reservedCapacityRolled": [], "amiDrift": [],
                     "warnings": []}


def test_dev_at_136_against_135_replaces_the_flipped_node_pools() -> None:
    """The upgrade resolves `auto` to DRA on 1.36: the NodePools whose managers flip are replaced
    (their device-manager labels are replace-on-change paths), and the story names the flips and the
    plugin workloads that lose their nodes."""
    changes, story = compare(dev_at("1.35"), dev_at("1.36"), "dev")
    named = by_name(changes)
    for pool in ("gpu-dra", "train-efa"):
        pool_change = named[f"platform-{pool}"]
        assert (pool_change.type, pool_change.action) == ("kubernetes:karpenter.sh/v1:NodePool", "replace")
        assert any("replace-on-change path" in r and "device-manager-nvidia" in r for r in pool_change.reasons)
        assert pool_change.stateful
    assert named["platform-eks"].action == "update" and named["platform-eks"].changed == ["version"]
    assert {c.name for c in changes if c.action == "replace"} == {"platform-gpu-dra", "platform-train-efa"}
    assert {(f["pool"], f["family"], f["before"], f["after"]) for f in story["flips"]} == {
        ("gpu-dra", "nvidia", "device-plugin", "dra"), ("train-efa", "nvidia", "device-plugin", "dra"),
        ("train-efa", "efa", "device-plugin", "dra")}
    pools = {s["pool"]: s for s in story["pools"]}
    assert {(s["pool"], f) for s in story["pools"] for f, m in s["managers"].items() if m["flips"]} == {
        (f["pool"], f["family"]) for f in story["flips"]}  # the pools' flips are the story's
    assert pools["gpu-dra"]["nodes"] == "replaced"
    assert any("nvidia.com/gpu" in w for w in pools["gpu-dra"]["workloadsLosingNodes"])
    assert any("vpc.amazonaws.com/efa" in w for w in pools["train-efa"]["workloadsLosingNodes"])
    # g7e keeps the plugin on both versions, yet Auto Mode replaces every node after a control-plane upgrade
    assert pools["gpu-plugin"]["nodes"] == "rolled" and pools["gpu-plugin"]["managers"]["nvidia"]["flips"] is False
    [why] = pools["gpu-plugin"]["rolledBecause"]
    assert why.startswith("Kubernetes 1.35 → 1.36: EKS Auto Mode replaces every node after a control-plane upgrade")
    assert story["nodesRolled"] == ["gpu-plugin", "inference-neuron"]  # the other two are replaced outright


def test_a_vpc_cidr_change_replaces_subnets_naming_the_property_and_what_reads_them() -> None:
    """cidrBlock is replace-forcing on subnets; their new ids reach the node groups' subnetIds
    (replace-forcing too), so the capacity-block group is replaced, releasing its capacity first."""
    prod = stacks.shipped("prod")
    changes, story = compare(prod, stacks.shipped("prod", overrides={"eks-devices:network": {"cidr": "10.45.0.0/16"}}),
                             "prod")
    subnets = [c for c in changes if c.type == "aws:ec2/subnet:Subnet"]
    assert len(subnets) == 6 and all(c.action == "replace" for c in subnets)
    assert all(any(r.startswith("cidrBlock: replace-forcing property cidrBlock (hashicorp/terraform-provider-aws")
                   for r in c.reasons) for c in subnets)
    group = by_name(changes)["platform-p5-train"]
    assert group.type == "aws:eks/nodeGroup:NodeGroup" and group.action == "replace"
    assert any(r.startswith("subnetIds: computed from the outputs of aws:ec2/subnet:Subnet::") for r in group.reasons)
    assert any(r.startswith("subnetIds (unknown): replace-forcing property subnetIds") for r in group.reasons)
    p5 = next(s for s in story["pools"] if s["pool"] == "p5-train")
    assert p5["nodes"] == "replaced" and p5["reservedCapacityReleasedFirst"] is True
    assert {c.type for c in diff.stateful_losses(changes)} >= {"aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet",
                                                                "aws:eks/nodeGroup:NodeGroup"}


def test_an_update_in_place_names_the_changed_inputs() -> None:
    prod = stacks.shipped("prod")
    changes, _ = compare(prod, stacks.shipped("prod", {"inference": {"replicas": 3}}), "prod")
    assert [(c.name, c.action, c.changed) for c in changes] == [
        ("platform-inference", "update", ["scalingConfig.desiredSize", "scalingConfig.maxSize",
                                         "scalingConfig.minSize"])]


# --- aliases, protect and replace-on-change, on programs set up here ------------------------------------

def queue_program(name: str, **options: Any) -> Any:
    def program() -> None:
        aws.sqs.Queue(name, message_retention_seconds=60, opts=pulumi.ResourceOptions(**options))
    return program


def test_an_alias_matches_the_old_urn_and_keeps_the_resource() -> None:
    before = engine.run(queue_program("old", protect=True), {})
    after = engine.run(queue_program("new", protect=True, aliases=[pulumi.Alias(name="old")]), {})
    assert diff.compare(before, after) == []
    queue = engine.one(after.resources)
    assert queue.aliases == [before.resources[0].urn] and queue.protect is True


def _holder(name: str, **options: Any) -> Any:
    def program() -> None:
        holder = pulumi.ComponentResource("test:index:Holder", name, None, pulumi.ResourceOptions(**options))
        for child in (f"{name}-q", "other"):
            aws.sqs.Queue(child, message_retention_seconds=60, opts=pulumi.ResourceOptions(parent=holder))
    return program


def test_a_parent_alias_moves_the_children_named_after_it_as_the_engine_does() -> None:
    """With an alias on a renamed component alone, the engine finds a child named after the
    component under the component's old name too (`inheritedChildAlias`; the real engine judges it in
    tests/e2e/test_pulumi_engine.py, `parent-alias-only`): nothing is created or deleted."""
    before = engine.run(_holder("old"), {})
    after = engine.run(_holder("new", aliases=[pulumi.Alias(name="old")]), {})
    assert diff.compare(before, after) == []
    assert after.named("new-q").aliases == [before.named("old-q").urn]
    assert [c.action for c in diff.compare(before, engine.run(_holder("new"), {}))].count("create") == 2


def _queue_with_provider(provider: str, **options: Any) -> Any:
    def program() -> None:
        region = aws.Provider(provider, region="us-west-2", opts=pulumi.ResourceOptions(**options))
        aws.sqs.Queue("q", message_retention_seconds=60, opts=pulumi.ResourceOptions(provider=region))
    return program


def test_a_provider_renamed_with_an_alias_is_the_same_provider() -> None:
    """The engine takes a provider found by its alias for the old one: its resources see no change
    (the real engine judges it in tests/e2e/test_pulumi_engine.py, the cluster renamed). Without the
    alias the provider is new, and the queue goes with it."""
    before = engine.run(_queue_with_provider("old"), {})
    assert diff.compare(before, engine.run(_queue_with_provider("new", aliases=[pulumi.Alias(name="old")]), {})) == []
    changes = {(c.name, c.action): c for c in diff.compare(before, engine.run(_queue_with_provider("new"), {}))}
    assert sorted(changes) == [("new", "create"), ("old", "delete"), ("q", "replace")]
    assert changes["q", "replace"].reasons[0].startswith("its provider changed")


def test_preview_json_records_aliases_and_every_option() -> None:
    rec = engine.run(queue_program("new", protect=True, retain_on_delete=True, ignore_changes=["tags"],
                                   delete_before_replace=True, replace_on_changes=["name"],
                                   aliases=[pulumi.Alias(name="old")]), {"aws:region": "us-west-2"})
    [data] = resources_data(rec)
    assert data["aliases"] == ["urn:pulumi:test::eks-devices::aws:sqs/queue:Queue::old"]
    assert data["options"] == {"protect": True, "retainOnDelete": True, "ignoreChanges": ["tags"],
                               "deleteBeforeReplace": True, "replaceOnChanges": ["name"]}


def test_a_moved_urn_without_an_alias_is_a_new_identity_and_a_protected_one_is_flagged() -> None:
    before = engine.run(queue_program("q", protect=True), {})
    after = engine.run(queue_program("q", protect=True, parent=None, aliases=None), {})
    assert diff.compare(before, after) == []  # same URN: nothing to do
    moved = engine.run(lambda: _queue_under_component("q"), {})
    holder, change = diff.compare(before, moved)
    assert (holder.type, holder.action) == ("test:index:Holder", "create")
    assert change.action == "replace" and change.previous_urn == before.resources[0].urn
    assert change.reasons[0].startswith("a new identity") and change.protected and change.stateful
    assert diff.stateful_losses([change]) == [change]


def _queue_under_component(name: str) -> None:
    parent = pulumi.ComponentResource("test:index:Holder", "holder")
    aws.sqs.Queue(name, message_retention_seconds=60, opts=pulumi.ResourceOptions(parent=parent))


def claim_template(spec: dict[str, Any], replace_on_changes: list[str] | None = None) -> Any:
    def program() -> None:
        k8s.apiextensions.CustomResource(
            "claim", api_version="resource.k8s.io/v1", kind="ResourceClaimTemplate",
            metadata={"name": "claim", "namespace": "default"}, spec=spec,
            opts=pulumi.ResourceOptions(replace_on_changes=replace_on_changes))
    return program


@pytest.mark.parametrize(("replace_on_changes", "action", "fails"), [(None, "update", True), (["spec"], "replace", False)])
def test_an_immutable_claim_spec_fails_unless_replace_on_change(replace_on_changes: list[str] | None, action: str,
                                                                 fails: bool) -> None:
    spec = {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
    changed = copy.deepcopy(spec)
    changed["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    before = engine.run(claim_template(spec, replace_on_changes), {})
    after = engine.run(claim_template(changed, replace_on_changes), {})
    [change] = diff.compare(before, after)
    assert (change.action, change.fails) == (action, fails)
    assert change.changed == ["spec.spec.devices.requests"]


def _requests(empty_lists: bool) -> dict[str, Any]:
    """A claim template's spec, with or without the empty `selectors` and `requests` the API server omits."""
    exactly: dict[str, Any] = {"deviceClassName": "gpu.nvidia.com", **({"selectors": []} if empty_lists else {})}
    constraint: dict[str, Any] = {"matchAttribute": "gpu.nvidia.com/productName",
                                  **({"requests": []} if empty_lists else {})}
    return {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}], "constraints": [constraint]}}}


@pytest.mark.parametrize(("sent_before", "sent_after", "action"), [
    (True, True, "replace"), (True, False, None), (False, False, None), (False, True, "replace")],
    ids=["kept-sending", "no-longer-sent", "never-sent", "newly-sent"])
def test_an_empty_list_the_api_server_does_not_store_is_a_change_on_every_up(sent_before: bool, sent_after: bool,
                                                                            action: str | None) -> None:
    """pulumi-kubernetes compares the new inputs with the live object, stored without an empty `selectors` or
    `requests`: a program that keeps sending one replaces its claim template on every `up`, and one that stops
    sending it changes nothing (tests/e2e/test_pulumi_refresh.py holds both against the real engine)."""
    before = engine.run(claim_template(_requests(sent_before), ["spec"]), {})
    after = engine.run(claim_template(_requests(sent_after), ["spec"]), {})
    changes = diff.compare(before, after)
    assert [c.action for c in changes] == ([action] if action else [])
    if action:
        assert changes[0].changed == ["spec.spec.devices.constraints", "spec.spec.devices.requests"]


def test_ignore_changes_hides_a_change_as_the_engine_does() -> None:
    def program(retention: int) -> Any:
        return lambda: aws.sqs.Queue("q", message_retention_seconds=retention,
                                     opts=pulumi.ResourceOptions(ignore_changes=["messageRetentionSeconds"]))
    assert diff.compare(engine.run(program(60), {}), engine.run(program(120), {})) == []


@pytest.mark.parametrize(("rule", "changed", "hit"), [
    ('labels["eks-devices.io/device-manager-nvidia"]', 'labels["eks-devices.io/device-manager-nvidia"]', True),
    ('labels["eks-devices.io/device-manager-nvidia"]', 'labels["eks-devices.io/device-manager-efa"]', False),
    ("spec", "spec.devices.requests", True), ("launchTemplate.id", "launchTemplate.version", False),
    ("launchTemplate.id", "launchTemplate", True), ("spec.*.labels", "spec.template.labels", True),
])
def test_property_paths_cover_as_the_engine_matches_them(rule: str, changed: str, hit: bool) -> None:
    assert diff.covers(rule, changed) is hit


def test_the_device_story_names_the_release_removed_by_a_node_group_upgrade() -> None:
    """Managed node groups 1.33 → 1.34: `auto` resolves the GPUs to DRA, so the NVIDIA device plugin
    release goes (the DRA driver comes) and pods requesting nvidia.com/gpu lose their nodes."""
    pools = {"gpu": {"instanceTypes": ["p5.48xlarge"], "replicas": 1}}
    before = plan_data(stacks.plan("managed-node-groups", "1.33", pools))
    after = plan_data(stacks.plan("managed-node-groups", "1.34", pools))
    story = diff.device_story(before, after, [], (engine.Recording(), engine.Recording()))
    assert (story["releasesRemoved"], story["releasesAdded"]) == (["nvidia-device-plugin"], ["nvidia-dra-driver"])
    [pool] = story["pools"]
    assert pool["managers"]["nvidia"] == {"before": "device-plugin", "after": "dra", "flips": True}
    assert pool["managers"]["efa"]["flips"] is False
    assert pool["workloadsLosingNodes"] == [
        "pods requesting nvidia.com/gpu on pool gpu: no nvidia device plugin serves its nodes after the change"]


@pytest.mark.parametrize(("mode", "extended", "served"), [
    ("karpenter", None, True), ("auto-mode", None, True), ("auto-mode", False, False)])
def test_a_plugin_pool_turned_dra_says_whether_dra_serves_its_plain_gpu_requests(mode: str, extended: bool | None,
                                                                                   served: bool) -> None:
    """From Kubernetes 1.36 a DeviceClass that names nvidia.com/gpu as its extended resource lets DRA
    serve a Pod's plain nvidia.com/gpu request (KEP-5004): the story says so where the class does, not
    that nothing serves those Pods."""
    pools = {"gpu": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}}}
    cluster = {} if extended is None else {"cluster": {"draExtendedResources": extended}}
    before = plan_data(stacks.plan(mode, "1.36", pools, **cluster))
    after = plan_data(stacks.plan(mode, "1.36", {"gpu": {**pools["gpu"], "devices": {"nvidia": "dra"}}}, **cluster))
    [pool] = diff.device_story(before, after, [], (engine.Recording(), engine.Recording()))["pools"]
    lost = "pods requesting nvidia.com/gpu on pool gpu: no nvidia device plugin serves its nodes after the change"
    assert pool["workloadsLosingNodes"] == [lost + (
        "; DRA does (the gpu.nvidia.com DeviceClass names nvidia.com/gpu as its extended resource), one device of "
        "that class per unit requested" if served else "")]


# --- the replace-forcing table on the shipped dev stack (Auto Mode), one input changed at a time ----------

def _dev_with(name: str, change: Any) -> tuple[engine.Recording, engine.Recording]:
    """The dev recording and a copy whose resource `name` has its inputs changed by `change`."""
    before, _ = engine.run_and_plan(stacks.shipped("dev"), "dev")
    after = copy.deepcopy(before)
    change(after.named(name).inputs)
    return before, after


def _set(path: str, value: Any) -> Any:
    *parents, key = path.split(".")

    def change(inputs: dict[str, Any]) -> None:
        for part in parents:
            inputs = inputs[part]
        if value is None:
            del inputs[key]
        else:
            inputs[key] = value
    return change


@pytest.mark.parametrize(("path", "value", "action", "fails"), [
    # pulumi-eks ignores it on the cluster it creates: no longer a false "replace"
    ("bootstrapSelfManagedAddons", True, "update", False),
    # a new Auto Mode node role replaces the cluster (aws_eks_cluster CustomizeDiff): no longer missed
    ("autoMode.computeConfig.nodeRoleArn", "arn:aws:iam::123456789012:role/other-auto-node", "replace", False),
    # EKS refuses another VPC for a cluster: pulumi up fails rather than replacing it
    ("vpcId", "vpc-0123456789abcdef0", "update", True),
    ("encryptionConfigKeyArn", None, "replace", False),  # envelope encryption cannot be removed
    ("subnetIds", ["subnet-0123456789abcdef0"], "update", False),
])
def test_cluster_input_changes_follow_pulumi_eks_and_the_eks_schema(path: str, value: Any, action: str,
                                                                   fails: bool) -> None:
    changes = diff.compare(*_dev_with("platform-eks", _set(path, value)))
    change = by_name(changes)["platform-eks"]
    assert (change.type, change.changed, change.action, change.fails) == ("eks:index:Cluster", [path], action, fails)
    # a replaced cluster's outputs are unknown in preview, which reaches what is computed from them (see
    # test_diff_unknowns.py); an update leaves them known
    assert (len(changes) > 1) == (action == "replace")
    assert change.stateful
    # `--fail-on replace` stops a replacement and an update that cannot apply alike
    assert diff.stateful_losses([change]) == ([change] if action == "replace" or fails else [])
    if fails:
        assert "immutable in the AWS API" in change.reasons[0]


def test_a_node_pools_node_class_group_is_immutable_and_its_name_is_not() -> None:
    pool = next(r.name for r in engine.run_and_plan(stacks.shipped("dev"), "dev")[0].of_type("kubernetes:karpenter.sh/v1:NodePool"))
    ref = "spec.template.spec.nodeClassRef"
    [group] = diff.compare(*_dev_with(pool, _set(f"{ref}.group", "karpenter.k8s.aws")))
    assert (group.changed, group.action, group.fails) == ([f"{ref}.group"], "update", True)
    [name] = diff.compare(*_dev_with(pool, _set(f"{ref}.name", "other")))
    assert (name.changed, name.action, name.fails) == ([f"{ref}.name"], "update", False)


def test_an_eip_customer_owned_pool_updates_in_place() -> None:
    [change] = diff.compare(*_dev_with("platform-nat-0-eip", _set("customerOwnedIpv4Pool", "ipv4pool-coip-1")))
    assert (change.changed, change.action, change.fails) == (["customerOwnedIpv4Pool"], "update", False)


def compute_domain(nodes: int) -> Any:
    def program() -> None:
        k8s.apiextensions.CustomResource(
            "domain", api_version="resource.nvidia.com/v1beta1", kind="ComputeDomain",
            metadata={"name": "domain", "namespace": "default"},
            spec={"numNodes": nodes, "channel": {"resourceClaimTemplate": {"name": "domain-channel"}}})
    return program


def test_a_compute_domain_spec_is_immutable() -> None:
    """The NVIDIA DRA driver's CRD refuses any spec change (`self == oldSelf`)."""
    [change] = diff.compare(engine.run(compute_domain(2), {}), engine.run(compute_domain(4), {}))
    assert (change.changed, change.action, change.fails) == (["spec.numNodes"], "update", True)
