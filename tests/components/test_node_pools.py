"""The NodePools component under Pulumi's mock engine (one run per scenario, shared by its
assertions), and the pure managed-node-group helpers it uses."""

from __future__ import annotations

import base64
import tomllib
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi.errors
import pulumi_kubernetes as k8s
import pytest

from eks_devices.core import planner as planning
from eks_devices.core.knowledge import crd_schemas
from eks_devices.core.manifests import launch_templates as lt
from eks_devices.core.manifests import nodes as nm
from eks_devices.core.model import PoolPlan
from eks_devices.core.names import CLUSTER_TAG, POOL_LABEL
from eks_devices.core.names import NODE_POOLS_TYPE as TYPE_TOKEN
from eks_devices.core.rules.node_groups import reserved_label
from eks_devices.node_pools import NodePools, NodePoolsArgs
from support import engine, stacks

ZONES = {"us-west-2a": "subnet-0000000a", "us-west-2b": "subnet-0000000b", "us-west-2c": "subnet-0000000c"}
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
AUTO_NODE_CLASS = "kubernetes:eks.amazonaws.com/v1:NodeClass"
EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
MANAGER_PATHS = ["eks-devices.io/device-manager-nvidia", "eks-devices.io/device-manager-efa",
                 "eks-devices.io/device-manager-neuron"]


@dataclass
class Run:
    plan: planning.Plan
    recording: engine.Recording
    rejected: pulumi.InputPropertiesError | None = None

    def of_type(self, type_: str) -> dict[str, engine.Registered]:
        """Resources of one type by pool name (logical names are `pools-<pool>`)."""
        return engine.keyed(self.recording.of_type(type_), "pools-", "-class")

    def urn(self, name: str) -> str:
        return self.recording.named(name).urn


def run(stack: str, public: dict[str, str] | None = None, tags: dict[str, str] | None = None,
        **pool_changes: dict[str, Any]) -> Run:
    """NodePools for a (varied) shipped stack, with a stand-in for cluster readiness."""
    # the shipped claims fit the shipped managers; a varied stack is about its pools
    config = stacks.shipped(stack, pool_changes, claims=not pool_changes,
                            overrides={"eks-devices:cluster": {"tags": tags}} if tags is not None else None)
    plan = stacks.build(config)
    out = Run(plan, engine.Recording())

    def program() -> None:
        ready = pulumi.CustomResource("test:index:Ready", "cluster-ready", {})
        provider = k8s.Provider("k8s", kubeconfig="{}")
        inputs = NodePoolsArgs(
            plan=plan, cluster_name=pulumi.Output.from_input("ml"), k8s_provider=provider,
            node_role_name=pulumi.Output.from_input("ml-node"),
            node_role_arn="arn:aws:iam::123456789012:role/ml-node",
            private_subnet_ids=pulumi.Output.from_input(sorted(ZONES.values())),
            private_subnets_by_zone=pulumi.Output.from_input(ZONES),
            efa_security_group_id=pulumi.Output.from_input("sg-0efa"),
            cluster_security_group_id="sg-0cluster", discovery_tag="ml", depends_on=[ready],
            public_subnets_by_zone=pulumi.Output.from_input(public) if public is not None else None)
        try:
            NodePools("pools", inputs)
        except pulumi.InputPropertiesError as exc:
            out.rejected = exc

    out.recording = engine.run(program, config, stack=stack)
    return out


@pytest.fixture(scope="module")
def dev() -> Run:
    return run("dev")


@pytest.fixture(scope="module")
def staging() -> Run:
    return run("staging")


@pytest.fixture(scope="module")
def prod() -> Run:
    return run("prod")


def labels_of(resource: engine.Registered) -> dict[str, str]:
    return resource.inputs["spec"]["template"]["metadata"]["labels"]


def assert_children(run_: Run, resources: list[engine.Registered]) -> None:
    component = run_.recording.of_type(TYPE_TOKEN)
    assert len(component) == 1
    for resource in resources:
        assert resource.parent == component[0].urn


# --- Auto Mode --------------------------------------------------------------------------------

def test_auto_mode_creates_a_node_pool_per_pool_and_a_node_class_per_configuration(dev: Run) -> None:
    counts = dev.recording.counts()
    assert counts[NODE_POOL] == len(dev.plan.pools) == 4
    assert counts[AUTO_NODE_CLASS] == 2
    assert not [t for t in counts if t.startswith("aws:")]
    assert_children(dev, [*dev.recording.of_type(NODE_POOL), *dev.recording.of_type(AUTO_NODE_CLASS)])


def test_auto_mode_objects_use_the_cluster_provider_and_wait_for_readiness_only(dev: Run) -> None:
    provider = dev.urn("k8s")
    ready = dev.urn("cluster-ready")
    classes = {r.inputs["metadata"]["name"]: r for r in dev.recording.of_type(AUTO_NODE_CLASS)}
    pools = dev.of_type(NODE_POOL)
    assert len(classes) == 2 and sorted(pools) == sorted(dev.plan.pools)  # nothing checked vacuously
    for cls in classes.values():
        assert cls.provider.startswith(provider + "::")
        assert cls.depends_on == [ready]
    for name, pool in pools.items():
        assert pool.provider.startswith(provider + "::")
        ref = pool.inputs["spec"]["template"]["spec"]["nodeClassRef"]
        assert ref["group"] == "eks.amazonaws.com" and ref["kind"] == "NodeClass"
        assert sorted(pool.depends_on) == sorted([ready, classes[ref["name"]].urn]), name


def test_auto_mode_pools_carry_plan_labels_taints_and_replicas(dev: Run) -> None:
    built = dev.of_type(NODE_POOL)
    assert sorted(built) == sorted(dev.plan.pools)
    for name, resource in built.items():
        pool = dev.plan.pools[name]
        assert labels_of(resource) == pool.labels
        assert resource.inputs["spec"]["template"]["spec"]["taints"] == list(pool.taints)
        assert resource.inputs["spec"].get("replicas") == pool.replicas
    assert dev.of_type(NODE_POOL)["train-efa"].inputs["spec"]["replicas"] == 1


def test_auto_mode_node_classes_get_the_role_and_security_groups(dev: Run) -> None:
    classes = dev.recording.of_type(AUTO_NODE_CLASS)
    assert len(classes) == 2
    for cls in classes:
        spec = cls.inputs["spec"]
        assert spec["role"] == "ml-node"
        assert {"id": "sg-0cluster"} in spec["securityGroupSelectorTerms"]
        assert cls.inputs["metadata"]["name"] != "default"
    efa_class = nm.auto_mode_node_class_name(dev.plan.pools["train-efa"])
    [efa] = [c for c in dev.recording.of_type(AUTO_NODE_CLASS) if c.inputs["metadata"]["name"] == efa_class]
    assert {"id": "sg-0efa"} in efa.inputs["spec"]["securityGroupSelectorTerms"]


def test_every_node_pool_is_replaced_when_a_device_manager_label_changes(dev: Run, staging: Run) -> None:
    for run_ in (dev, staging):
        built = run_.recording.of_type(NODE_POOL)
        assert len(built) == len(run_.plan.pools) == 4
        for resource in built:
            assert resource.replace_on_changes == [
                f'spec.template.metadata.labels["{key}"]' for key in MANAGER_PATHS]


def test_applied_objects_are_the_rendered_objects(dev: Run, staging: Run) -> None:
    """`pulumi up` and `render` agree: the component applies exactly the objects `render` returns."""
    facts = nm.ClusterFacts(cluster_name="ml", node_role_name="ml-node", discovery_tag="ml",
                            cluster_security_group_id="sg-0cluster", efa_security_group_id="sg-0efa")
    for run_ in (dev, staging):
        applied = sorted(((r.inputs["kind"], r.inputs["metadata"]["name"]), r.inputs)
                         for r in run_.recording.resources if r.type.startswith("kubernetes:") and r.custom
                         and "kind" in r.inputs)
        rendered = sorted(((o["kind"], o["metadata"]["name"]), o) for o in nm.render(run_.plan, facts))
        assert applied == rendered


@pytest.mark.parametrize(("stack", "pool", "node_class"), [("dev", "train-efa", AUTO_NODE_CLASS),
                                                         ("staging", "gpu-dra", EC2_NODE_CLASS)])
def test_zone_pinned_efa_pools_get_a_placement_group(stack: str, pool: str, node_class: str) -> None:
    """A placement group lives in one zone: NodePool EFA pools get one once they name their zone."""
    pinned = run(stack, **{pool: {"availabilityZone": "us-west-2b"}})
    groups = pinned.of_type(PLACEMENT_GROUP)
    assert set(groups) == {pool} and groups[pool].inputs["strategy"] == "cluster"
    [cls] = [r for r in pinned.recording.of_type(node_class)
             if r.inputs["spec"].get("placementGroupSelector")]
    # the generated name stays (a new name would replace existing groups under their instances)
    assert "name" not in groups[pool].inputs
    assert cls.inputs["spec"]["placementGroupSelector"] == {"name": groups[pool].outputs["id"]}
    assert groups[pool].urn in cls.depends_on
    assert nm.uses_placement_group(pinned.plan.mode, pinned.plan.pools[pool])
    assert crd_schemas.validate(cls.inputs) == []
    assert not run(stack).of_type(PLACEMENT_GROUP)  # unpinned: the pool spans zones, no group
    off = run(stack, **{pool: {"availabilityZone": "us-west-2b", "placementGroup": False}})
    assert not off.of_type(PLACEMENT_GROUP)


# --- Karpenter --------------------------------------------------------------------------------

def test_karpenter_creates_an_ec2_node_class_and_a_node_pool_per_pool(staging: Run) -> None:
    classes, pools = staging.of_type(EC2_NODE_CLASS), staging.of_type(NODE_POOL)
    assert set(classes) == set(pools) == set(staging.plan.pools)
    assert_children(staging, [*classes.values(), *pools.values()])
    for name, plan_pool in staging.plan.pools.items():
        assert classes[name].inputs["metadata"]["name"] == nm.node_pool_name(plan_pool)
        assert pools[name].inputs["metadata"]["name"] == nm.node_pool_name(plan_pool)
        assert pools[name].inputs["spec"]["template"]["spec"]["nodeClassRef"] == {
            "group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": nm.node_pool_name(plan_pool)}
        assert classes[name].urn in pools[name].depends_on
        assert labels_of(pools[name]) == plan_pool.labels
        assert pools[name].inputs["spec"]["template"]["spec"]["taints"] == list(plan_pool.taints)


def test_karpenter_static_pools_have_replicas_and_node_limits(staging: Run) -> None:
    pools = staging.of_type(NODE_POOL)
    for name in ("gpu-mig", "trn-static"):
        spec = pools[name].inputs["spec"]
        assert spec["replicas"] == staging.plan.pools[name].replicas
        assert spec["limits"] == {"nodes": nm.static_node_limit(staging.plan.pools[name])}
    assert spec["limits"] == {"nodes": staging.plan.pools["trn-static"].replicas}  # a Capacity Block: no spare
    assert pools["gpu-mig"].inputs["spec"]["limits"] == {"nodes": staging.plan.pools["gpu-mig"].replicas + 1}
    assert "replicas" not in pools["gpu-dra"].inputs["spec"]


def test_karpenter_node_classes_receive_cluster_facts(staging: Run) -> None:
    spec = staging.of_type(EC2_NODE_CLASS)["trn-static"].inputs["spec"]
    assert spec["role"] == "ml-node"
    assert spec["tags"] == {"eks-devices.io/cluster": "ml", "eks-devices.io/pool": "trn-static"}
    assert spec["securityGroupSelectorTerms"] == [
        {"tags": {"karpenter.sh/discovery": "ml"}}, {"id": "sg-0cluster"}, {"id": "sg-0efa"}]
    assert spec["capacityReservationSelectorTerms"] == [{"id": "cr-0a1b2c3d4e5f60718"}]


def test_only_reserved_capacity_pools_are_deleted_before_replacement(staging: Run, prod: Run) -> None:
    assert {n for n, r in staging.of_type(NODE_POOL).items() if r.delete_before_replace} == {"trn-static"}
    assert {n for n, r in prod.of_type(NODE_GROUP).items() if r.delete_before_replace} == {"p5-train"}
    assert not any(r.delete_before_replace for r in staging.recording.of_type(EC2_NODE_CLASS))


# --- managed node groups ----------------------------------------------------------------------

def test_managed_node_groups_create_a_group_and_template_per_pool(prod: Run) -> None:
    counts = prod.recording.counts()
    assert counts[NODE_GROUP] == counts[LAUNCH_TEMPLATE] == len(prod.plan.pools) == 3
    assert counts[PLACEMENT_GROUP] == 1  # trn-train; p5-train turns its placement group off
    assert NODE_POOL not in counts
    assert_children(prod, [r for r in prod.recording.resources if r.type.startswith("aws:")])
    ready = prod.urn("cluster-ready")
    groups = prod.of_type(NODE_GROUP)
    assert sorted(groups) == sorted(prod.plan.pools)
    for name, group in groups.items():
        template = prod.of_type(LAUNCH_TEMPLATE)[name]
        assert group.inputs["launchTemplate"]["id"] == template.outputs["id"]
        assert ready in group.depends_on
        assert group.inputs["clusterName"] == "ml"
        assert group.inputs["version"] == prod.plan.spec.cluster.version  # nodes follow the control plane
        assert group.inputs["nodeRoleArn"] == "arn:aws:iam::123456789012:role/ml-node"


def test_managed_node_groups_carry_toolkit_labels_and_plan_taints(prod: Run) -> None:
    groups = prod.of_type(NODE_GROUP)
    assert sorted(groups) == sorted(prod.plan.pools) == ["inference", "p5-train", "trn-train"]
    for name, group in groups.items():
        pool = prod.plan.pools[name]
        assert group.inputs["labels"] == pool.labels
        assert not [k for k in group.inputs["labels"] if k.split("/")[0].endswith(
            ("kubernetes.io", "k8s.io", "eks.amazonaws.com"))]
        effects = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}
        assert group.inputs["taints"] == [{**t, "effect": effects[t["effect"]]} for t in pool.taints]
        size = pool.replicas
        assert group.inputs["scalingConfig"] == {"desiredSize": size, "minSize": size, "maxSize": size}
        assert group.replace_on_changes == [f'labels["{key}"]' for key in MANAGER_PATHS]
        assert group.inputs["nodeGroupName"] == lt.node_group_name(pool)


def test_managed_node_group_ami_types(prod: Run) -> None:
    assert {n: g.inputs["amiType"] for n, g in prod.of_type(NODE_GROUP).items()} == {
        "inference": "AL2023_x86_64_NVIDIA", "p5-train": "AL2023_x86_64_NVIDIA", "trn-train": "AL2023_x86_64_NEURON"}


def test_every_launch_template_requires_imdsv2_with_hop_limit_one(prod: Run) -> None:
    templates = prod.of_type(LAUNCH_TEMPLATE)
    assert sorted(templates) == sorted(prod.plan.pools) == ["inference", "p5-train", "trn-train"]
    for template in templates.values():
        assert template.inputs["metadataOptions"] == {
            "httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 1}
        assert template.inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 200


def test_capacity_block_pool_uses_a_capacity_block_launch_template(prod: Run) -> None:
    group, template = prod.of_type(NODE_GROUP)["p5-train"], prod.of_type(LAUNCH_TEMPLATE)["p5-train"]
    assert group.inputs["capacityType"] == "CAPACITY_BLOCK"
    assert "instanceTypes" not in group.inputs
    assert group.delete_before_replace
    assert template.inputs["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template.inputs["instanceType"] == "p5.48xlarge"
    assert template.inputs["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0f1e2d3c4b5a69788"}}
    assert "placement" not in template.inputs  # placementGroup: false in the stack
    assert group.inputs["subnetIds"] == ["subnet-0000000b"]  # the block's zone only


def test_efa_pools_get_one_interface_per_efa_card_in_one_zone(prod: Run) -> None:
    expected = {"p5-train": 32, "trn-train": 8}
    for name, efa_only in expected.items():
        interfaces = prod.of_type(LAUNCH_TEMPLATE)[name].inputs["networkInterfaces"]
        assert len(interfaces) == efa_only + 1
        primary, rest = interfaces[0], interfaces[1:]
        assert (primary["networkCardIndex"], primary["deviceIndex"]) == (0, 0)
        assert primary["interfaceType"] == "interface"  # ENA
        assert {n["interfaceType"] for n in rest} == {"efa-only"}
        for nic in interfaces:
            assert nic["securityGroups"] == ["sg-0efa", "sg-0cluster"]
            assert "subnetId" not in nic
    trn = prod.of_type(LAUNCH_TEMPLATE)["trn-train"]
    group = prod.of_type(PLACEMENT_GROUP)["trn-train"]
    assert group.inputs["strategy"] == "cluster"
    assert trn.inputs["placement"] == {"groupName": group.outputs["id"]}
    assert prod.of_type(NODE_GROUP)["trn-train"].inputs["subnetIds"] == ["subnet-0000000a"]


def test_non_efa_pools_span_every_zone_with_plain_templates(prod: Run) -> None:
    template, group = prod.of_type(LAUNCH_TEMPLATE)["inference"], prod.of_type(NODE_GROUP)["inference"]
    assert "networkInterfaces" not in template.inputs and "placement" not in template.inputs
    assert "instanceMarketOptions" not in template.inputs
    assert group.inputs["subnetIds"] == sorted(ZONES.values())
    assert group.inputs["instanceTypes"] == ["g6e.2xlarge"]
    assert group.inputs["capacityType"] == "ON_DEMAND"


# --- switching a pool's device manager --------------------------------------------------------

@pytest.fixture(scope="module")
def staging_switched() -> Run:
    return run("staging", **{"gpu-timeslice": {"devices": {"nvidia": "dra"}, "gpuSharing": {"strategy": "none"}},
                             "trn-static": {"devices": {"neuron": "device-plugin", "efa": "device-plugin"},
                                            "efa": {"alignWith": "none"}}})


@pytest.fixture(scope="module")
def prod_switched() -> Run:
    return run("prod", **{"inference": {"devices": {"nvidia": "dra"}},
                          "p5-train": {"devices": {"nvidia": "device-plugin"}, "efa": {"alignWith": "none"}}})


def _switch(before: engine.Registered, after: engine.Registered, labels: str, family: str) -> None:
    """The manager label at a replace-on-change path flips, so the engine replaces the pool."""
    key = f"eks-devices.io/device-manager-{family}"
    assert f'{labels}["{key}"]' in after.replace_on_changes
    pick = (lambda r: r.inputs["labels"]) if labels == "labels" else labels_of
    assert pick(before)[key] != pick(after)[key]


def test_karpenter_pool_switching_to_dra_is_replaced_under_a_new_name(staging: Run, staging_switched: Run) -> None:
    before, after = staging.of_type(NODE_POOL)["gpu-timeslice"], staging_switched.of_type(NODE_POOL)["gpu-timeslice"]
    _switch(before, after, "spec.template.metadata.labels", "nvidia")
    assert labels_of(after)["eks-devices.io/device-manager-nvidia"] == "dra"
    assert after.inputs["metadata"]["name"] != before.inputs["metadata"]["name"]
    assert not after.delete_before_replace  # on-demand: the new pool comes up before the old goes


def test_capacity_block_pool_switching_manager_is_deleted_first(staging: Run, staging_switched: Run) -> None:
    before, after = staging.of_type(NODE_POOL)["trn-static"], staging_switched.of_type(NODE_POOL)["trn-static"]
    _switch(before, after, "spec.template.metadata.labels", "neuron")
    assert after.delete_before_replace


def test_node_group_switching_manager_is_replaced_not_relabelled(prod: Run, prod_switched: Run) -> None:
    for name, family in (("inference", "nvidia"), ("p5-train", "nvidia")):
        before, after = prod.of_type(NODE_GROUP)[name], prod_switched.of_type(NODE_GROUP)[name]
        _switch(before, after, "labels", family)
        assert after.inputs["nodeGroupName"] != before.inputs["nodeGroupName"]
        assert after.delete_before_replace == (name == "p5-train")


# --- rejection before any resource ------------------------------------------------------------

def test_node_pools_reject_what_a_node_group_cannot_express() -> None:
    result = run("prod", **{"p5-train": {"availabilityZone": None, "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"]},
                            "extra": {"replicas": 1, "instanceTypes": ["g6e.xlarge"],
                                      "labels": {"node-role.kubernetes.io/gpu": "true"}}})
    assert result.rejected is not None
    message = str(result.rejected)
    assert "nodePools.p5-train.availabilityZone" in message
    assert "nodePools.p5-train.instanceTypes" in message
    assert "node-role.kubernetes.io/gpu" in message
    assert not [r for r in result.recording.resources if r.type in (TYPE_TOKEN, NODE_GROUP, LAUNCH_TEMPLATE)]


def test_public_pools_use_the_public_subnets_or_are_rejected() -> None:
    public = {"us-west-2a": "subnet-00000c0a", "us-west-2b": "subnet-00000c0b"}
    prod_public = run("prod", public=public, inference={"subnets": "public"})
    groups = prod_public.of_type(NODE_GROUP)
    assert groups["inference"].inputs["subnetIds"] == ["subnet-00000c0a", "subnet-00000c0b"]
    assert groups["trn-train"].inputs["subnetIds"] == ["subnet-0000000a"]
    staging_public = run("staging", public=public, **{"gpu-timeslice": {"subnets": "public"}})
    spec = staging_public.of_type(EC2_NODE_CLASS)["gpu-timeslice"].inputs["spec"]
    assert spec["subnetSelectorTerms"] == [{"id": "subnet-00000c0a"}, {"id": "subnet-00000c0b"}]
    rejected = run("staging", **{"gpu-timeslice": {"subnets": "public"}})
    assert rejected.rejected is not None and "nodePools.gpu-timeslice.subnets" in str(rejected.rejected)


# --- pure managed-node-group helpers ----------------------------------------------------------

def mng_plan(**settings: Any) -> planning.Plan:
    """The plan of a managed-node-group stack with one pool `p` (one replica unless `settings` say)."""
    return stacks.plan("managed-node-groups", pools={"p": {"replicas": 1, **settings}}, name="t")


def mng_pool(**settings: Any) -> PoolPlan:
    return mng_plan(**settings).pools["p"]


@pytest.mark.parametrize(("ami", "itype", "expected"), [
    ("al2023", "p5.48xlarge", "AL2023_x86_64_NVIDIA"),
    ("al2023", "g5g.xlarge", "AL2023_ARM_64_NVIDIA"),
    ("al2023", "trn1.32xlarge", "AL2023_x86_64_NEURON"),
    ("al2023", "inf2.xlarge", "AL2023_x86_64_NEURON"),
    ("bottlerocket", "g6e.xlarge", "BOTTLEROCKET_x86_64_NVIDIA"),
    ("bottlerocket", "g5g.xlarge", "BOTTLEROCKET_ARM_64_NVIDIA"),
    ("bottlerocket", "trn2.48xlarge", "BOTTLEROCKET_x86_64"),
])
def test_ami_type_from_family_architecture_and_accelerator(ami: str, itype: str, expected: str) -> None:
    assert lt.ami_type(mng_pool(ami=ami, instanceTypes=[itype])) == expected


@pytest.mark.parametrize(("key", "reserved"), [
    ("kubernetes.io/arch", True), ("node-role.kubernetes.io/gpu", True), ("k8s.io/x", True),
    ("eks.amazonaws.com/device-manager-nvidia", True), ("eks-devices.io/device-manager-nvidia", False),
    ("nvidia.com/gpu.present", False), ("team", False), ("mykubernetes.io/x", False)])
def test_reserved_label_prefixes(key: str, reserved: bool) -> None:
    assert reserved_label(key) is reserved


def shape_paths(**settings: Any) -> list[str]:
    return [f.path for f in stacks.findings(mng_plan(**settings), "managed-node-group-shape")]


def test_pools_a_node_group_cannot_express() -> None:
    assert shape_paths(instanceTypes=["p5.48xlarge"], capacity="capacity-block",
                       capacityReservationIds=["cr-0123456789abcdef0"], availabilityZone="us-west-2a") == []
    assert shape_paths(instanceTypes=["p5.48xlarge"], capacity="reserved",
                       capacityReservationIds=["cr-0123456789abcdef0", "cr-0123456789abcdef1"]) == [
        "nodePools.p.capacityReservationIds"]
    assert shape_paths(instanceTypes=["g6e.xlarge", "g5g.xlarge"]) == ["nodePools.p.instanceTypes"]
    assert shape_paths(instanceTypes=["p5.48xlarge", "p5e.48xlarge"], capacity="capacity-block",
                       capacityReservationIds=["cr-0123456789abcdef0"]) == [
        "nodePools.p.availabilityZone", "nodePools.p.instanceTypes"]


def test_node_group_subnets() -> None:
    all_ids = sorted(ZONES.values())
    assert lt.node_group_subnets(mng_pool(instanceTypes=["g6e.xlarge"]), all_ids, ZONES) == all_ids
    pinned = mng_pool(instanceTypes=["g6e.xlarge"], availabilityZone="us-west-2c")
    assert lt.node_group_subnets(pinned, all_ids, ZONES) == ["subnet-0000000c"]
    efa = mng_pool(instanceTypes=["p5.48xlarge"])  # EFA without a zone: the first zone, one subnet
    assert lt.node_group_subnets(efa, all_ids, ZONES) == ["subnet-0000000a"]
    missing = mng_pool(instanceTypes=["g6e.xlarge"], availabilityZone="us-west-2d")
    with pytest.raises(ValueError, match="no private subnet in zone us-west-2d"):
        lt.node_group_subnets(missing, all_ids, ZONES)


def test_bottlerocket_dra_node_group_template_switches_off_the_bundled_plugin() -> None:
    pool = mng_pool(ami="bottlerocket", instanceTypes=["g6e.xlarge"], devices={"nvidia": "dra"})
    args = lt.launch_template_args(pool, efa_security_group_id="sg-e", cluster_security_group_id="sg-c",
                                   placement_group_name=None)
    settings = tomllib.loads(base64.b64decode(args["user_data"]).decode())["settings"]
    assert settings["kubelet-device-plugins"]["nvidia"]["enabled"] is False
    assert [m["device_name"] for m in args["block_device_mappings"]] == ["/dev/xvda", "/dev/xvdb"]
    plugin = mng_pool(ami="bottlerocket", instanceTypes=["g6e.xlarge"], devices={"nvidia": "device-plugin"})
    assert "user_data" not in lt.launch_template_args(plugin, efa_security_group_id="sg-e",
                                                      cluster_security_group_id="sg-c", placement_group_name=None)


def test_placement_group_only_for_efa_pools_that_want_one() -> None:
    mng = "managed-node-groups"
    assert nm.uses_placement_group(mng, mng_pool(instanceTypes=["p5.48xlarge"]))
    assert not nm.uses_placement_group(mng, mng_pool(instanceTypes=["p5.48xlarge"], placementGroup=False))
    assert not nm.uses_placement_group(mng, mng_pool(instanceTypes=["p5.48xlarge"], devices={"efa": "none"}))
    assert not nm.uses_placement_group(mng, mng_pool(instanceTypes=["g6e.xlarge"]))


COST_TAGS = {"team": "ml-platform", "cost-center": "4711"}


def test_cluster_tags_reach_everything_the_node_pools_create_in_ec2() -> None:
    """Cost allocation: the cluster's tags land on node groups, launch templates (and through them
    on instances and volumes), placement groups and Karpenter's EC2NodeClasses; Auto Mode's
    NodeClass takes none (its managed policies reject user tags on instances)."""
    prod = run("prod", tags=COST_TAGS)
    resources = [*prod.of_type(NODE_GROUP).items(), *prod.of_type(LAUNCH_TEMPLATE).items(),
                 *prod.of_type(PLACEMENT_GROUP).items()]
    assert len(resources) == 7
    for pool, resource in resources:
        assert resource.inputs["tags"] == {**COST_TAGS, POOL_LABEL: pool}
    for pool, template in prod.of_type(LAUNCH_TEMPLATE).items():
        assert [spec["tags"] for spec in template.inputs["tagSpecifications"]] == [
            {**COST_TAGS, POOL_LABEL: pool}] * 2
    staging = run("staging", tags=COST_TAGS, **{"gpu-dra": {"availabilityZone": "us-west-2b"}})
    for pool, node_class in staging.of_type(EC2_NODE_CLASS).items():
        assert node_class.inputs["spec"]["tags"] == {**COST_TAGS, CLUSTER_TAG: "ml", POOL_LABEL: pool}
        assert crd_schemas.validate(node_class.inputs) == []
    assert staging.of_type(PLACEMENT_GROUP)["gpu-dra"].inputs["tags"] == {**COST_TAGS, POOL_LABEL: "gpu-dra"}
    dev = run("dev", tags=COST_TAGS)
    assert all("tags" not in c.inputs["spec"] for c in dev.recording.of_type(AUTO_NODE_CLASS))
