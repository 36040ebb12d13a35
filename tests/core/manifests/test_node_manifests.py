"""Node-pool objects as pure data: NodePools, Auto Mode NodeClasses and Karpenter EC2NodeClasses
built from the plans of the shipped stacks and of variants of them, checked against the plan and
against the CRD schemas."""

from __future__ import annotations

import copy
import tomllib
from typing import Any

import pytest

from eks_devices.core import planner as planning
from eks_devices.core.config.stack import FAMILIES
from eks_devices.core.derive.pools import efa_interface_layout
from eks_devices.core.knowledge import catalog, crd_schemas
from eks_devices.core.manifests import nodes as nm
from eks_devices.core.names import POOL_LABEL, manager_label
from support import stacks

CLUSTER = nm.ClusterFacts(cluster_name="ml", node_role_name="ml-node", discovery_tag="ml",
                        cluster_security_group_id="sg-0cluster", efa_security_group_id="sg-0efa")


def plan_of(stack: str, **pool_changes: dict[str, Any]) -> planning.Plan:
    """The plan of a shipped stack, with some pools' settings replaced or added."""
    return stacks.build(stacks.shipped(stack, pool_changes))


def by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def pool_objects(plan: planning.Plan) -> dict[str, dict[str, Any]]:
    """NodePool object per pool name, from the rendered set."""
    pools = by_kind(nm.render(plan, CLUSTER), "NodePool")
    return {o["metadata"]["labels"][POOL_LABEL]: o for o in pools.values()}


VARIANTS = {
    "dev": lambda: plan_of("dev"),
    "staging": lambda: plan_of("staging"),
    "dev-reserved-layout": lambda: plan_of("dev", **{"train-efa": {
        "capacity": "capacity-block", "capacityReservationIds": ["cr-0123456789abcdef0"],
        "availabilityZone": "us-west-2c",
        "efa": {"alignWith": "gpu", "networkInterfaces": [
            {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
            {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}]}}}),
    "staging-bottlerocket-dra": lambda: plan_of("staging", **{"gpu-mig": {"ami": "bottlerocket"}}),
    "staging-consumable-capacity": lambda: plan_of("staging", **{"gpu-timeslice": {"devices": {"nvidia": "dra"}}}),
    "staging-arm-spot": lambda: plan_of("staging", **{"arm": {"instanceTypes": ["g5g.xlarge"], "capacity": "spot",
                                                              "diskSizeGib": 500}}),
}


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def variant(request: pytest.FixtureRequest) -> planning.Plan:
    return VARIANTS[request.param]()


def test_every_rendered_object_passes_the_structural_check(variant: planning.Plan) -> None:
    objects = nm.render(variant, CLUSTER)
    assert objects
    for obj in objects:
        assert set(obj) == {"apiVersion", "kind", "metadata", "spec"}
        assert crd_schemas.validate(obj) == [], obj["metadata"]["name"]


def test_one_node_pool_per_pool_carrying_the_plans_labels_and_taints(variant: planning.Plan) -> None:
    objects = pool_objects(variant)
    assert set(objects) == set(variant.pools)
    for name, pool in variant.pools.items():
        template = objects[name]["spec"]["template"]
        assert template["metadata"]["labels"] == pool.labels
        assert template["spec"].get("taints", []) == list(pool.taints)


def test_static_pools_have_replicas_and_limit_only_nodes(variant: planning.Plan) -> None:
    objects = pool_objects(variant)
    for name, pool in variant.pools.items():
        spec = objects[name]["spec"]
        if pool.provisioning == "static":
            assert spec["replicas"] == pool.replicas
            # room for one replacement node, except on reserved capacity (no spare instance there)
            spare = 0 if pool.capacity in ("reserved", "capacity-block") or pool.config.limits.nodes else 1
            assert spec["limits"] == {"nodes": (pool.config.limits.nodes or pool.replicas) + spare}
            assert "disruption" not in spec
        else:
            assert "replicas" not in spec
            assert spec["disruption"]["consolidationPolicy"] == "WhenEmpty"


def test_requirements_follow_instance_types_capacity_architecture_and_zone(variant: planning.Plan) -> None:
    objects = pool_objects(variant)
    for name, pool in variant.pools.items():
        reqs = {r["key"]: r["values"] for r in objects[name]["spec"]["template"]["spec"]["requirements"]}
        assert reqs["node.kubernetes.io/instance-type"] == list(pool.instance_types)
        archs = {catalog.instance_types()[t].architecture for t in pool.instance_types}
        assert reqs["kubernetes.io/arch"] == sorted({"x86_64": "amd64", "arm64": "arm64"}[a] for a in archs)
        expected_capacity = "reserved" if pool.capacity in ("reserved", "capacity-block") else pool.capacity
        assert reqs["karpenter.sh/capacity-type"] == [expected_capacity]
        zone = pool.config.availability_zone
        assert reqs.get("topology.kubernetes.io/zone") == ([zone] if zone else None)


def test_only_karpenter_pools_require_linux(variant: planning.Plan) -> None:
    """Auto Mode is Linux-only and does not support `kubernetes.io/os` in NodePool requirements
    (EKS user guide, "Create a Node Pool for EKS Auto Mode"); Karpenter pools keep the term."""
    for pool in pool_objects(variant).values():
        reqs = {r["key"]: r["values"] for r in pool["spec"]["template"]["spec"]["requirements"]}
        if variant.mode == "auto-mode":
            assert "kubernetes.io/os" not in reqs
        else:
            assert reqs["kubernetes.io/os"] == ["linux"]


def test_node_class_refs_resolve_to_rendered_node_classes(variant: planning.Plan) -> None:
    objects = nm.render(variant, CLUSTER)
    classes = {(o["apiVersion"].split("/")[0], o["kind"], o["metadata"]["name"])
               for o in objects if o["kind"] != "NodePool"}
    for pool in by_kind(objects, "NodePool").values():
        ref = pool["spec"]["template"]["spec"]["nodeClassRef"]
        assert (ref["group"], ref["kind"], ref["name"]) in classes
    assert not any(o["kind"] == "NodeClass" and o["metadata"]["name"] == "default" for o in objects)


def test_labels_partition_dra_and_plugin_pools_for_every_family(variant: planning.Plan) -> None:
    objects = pool_objects(variant)
    for family in FAMILIES:
        key = manager_label(family)
        for manager in ("dra", "device-plugin"):
            selected = {n for n, o in objects.items()
                        if o["spec"]["template"]["metadata"]["labels"].get(key) == manager}
            assert selected == {n for n, p in variant.pools.items() if p.manager(family) == manager}


# --- Auto Mode --------------------------------------------------------------------------------

def test_auto_mode_has_one_node_class_per_distinct_configuration() -> None:
    plan = plan_of("dev")
    classes = by_kind(nm.render(plan, CLUSTER), "NodeClass")
    # three pools without EFA share one class; the EFA pool needs the EFA security group
    assert len(classes) == 2
    efa_class = nm.auto_mode_node_class_name(plan.pools["train-efa"])
    assert {"id": "sg-0efa"} in classes[efa_class]["spec"]["securityGroupSelectorTerms"]
    shared = {nm.auto_mode_node_class_name(plan.pools[p]) for p in ("gpu-dra", "gpu-plugin", "inference-neuron")}
    assert len(shared) == 1
    for cls in classes.values():
        spec = cls["spec"]
        assert spec["role"] == "ml-node"
        assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "ml"}}]
        assert spec["ephemeralStorage"] == {"size": "200Gi"}
        # dynamic pools: Auto Mode puts an EFA on every EFA card itself; the static EFA pool lists them
        layout = spec.get("advancedNetworking", {}).get("networkInterfaces")
        if cls["metadata"]["name"] == efa_class:
            assert layout == list(efa_interface_layout(catalog.instance_types()["p5.48xlarge"]))
        else:
            assert layout is None
        assert "capacityReservationSelectorTerms" not in spec
        assert "tags" not in spec  # Auto Mode's managed policies reject user tags on its instances


def test_auto_mode_pools_carry_the_eks_device_manager_labels() -> None:
    objects = pool_objects(plan_of("dev"))
    labels = objects["train-efa"]["spec"]["template"]["metadata"]["labels"]
    assert labels["eks.amazonaws.com/device-manager-nvidia"] == "dra"
    assert labels["eks.amazonaws.com/device-manager-efa"] == "dra"
    assert objects["train-efa"]["spec"]["replicas"] == 1


def test_auto_mode_reserved_pool_gets_its_own_class_with_reservation_and_layout() -> None:
    plan = VARIANTS["dev-reserved-layout"]()
    pool = plan.pools["train-efa"]
    classes = by_kind(nm.render(plan, CLUSTER), "NodeClass")
    spec = classes[nm.auto_mode_node_class_name(pool)]["spec"]
    assert spec["capacityReservationSelectorTerms"] == [{"id": "cr-0123456789abcdef0"}]
    assert spec["advancedNetworking"]["networkInterfaces"] == [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}]
    assert len(classes) == 2


# --- Karpenter --------------------------------------------------------------------------------

def test_karpenter_has_one_ec2_node_class_per_pool() -> None:
    plan = plan_of("staging")
    classes = by_kind(nm.render(plan, CLUSTER), "EC2NodeClass")
    assert set(classes) == {nm.node_pool_name(p) for p in plan.pools.values()}
    for pool in plan.pools.values():
        spec = classes[nm.node_pool_name(pool)]["spec"]
        assert spec["role"] == "ml-node"
        assert spec["amiSelectorTerms"] == [{"alias": f"{pool.ami}@latest"}]
        assert spec["metadataOptions"]["httpTokens"] == "required"
        assert spec["metadataOptions"]["httpPutResponseHopLimit"] == 1
        assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "ml"}}]
        assert {"tags": {"karpenter.sh/discovery": "ml"}} in spec["securityGroupSelectorTerms"]
        assert ({"id": "sg-0efa"} in spec["securityGroupSelectorTerms"]) == (pool.manager("efa") != "none")
        if pool.provisioning == "dynamic" or pool.manager("efa") == "none":
            assert "networkInterfaces" not in spec  # Karpenter puts an EFA on every EFA card itself
        else:  # a static NodeClaim requests no EFA: without the list the node gets none
            expected = efa_interface_layout(catalog.instance_types()[pool.instance_types[0]])
            assert spec["networkInterfaces"] == list(expected)


def test_block_devices_are_sized_from_the_pool() -> None:
    plan = VARIANTS["staging-arm-spot"]()
    classes = by_kind(nm.render(plan, CLUSTER), "EC2NodeClass")
    arm = classes[nm.node_pool_name(plan.pools["arm"])]["spec"]["blockDeviceMappings"]
    assert arm == [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {
        "volumeSize": "500Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}}]
    bottlerocket = classes[nm.node_pool_name(plan.pools["trn-static"])]["spec"]["blockDeviceMappings"]
    assert [(b["deviceName"], b["ebs"]["volumeSize"], b.get("rootVolume", False)) for b in bottlerocket] == [
        ("/dev/xvda", "4Gi", False), ("/dev/xvdb", "200Gi", True)]
    reqs = {r["key"]: r["values"] for r in pool_objects(plan)["arm"]["spec"]["template"]["spec"]["requirements"]}
    assert reqs["kubernetes.io/arch"] == ["arm64"]
    assert reqs["karpenter.sh/capacity-type"] == ["spot"]


def test_capacity_block_pool_selects_its_reservation() -> None:
    plan = plan_of("staging")
    pool = plan.pools["trn-static"]
    spec = by_kind(nm.render(plan, CLUSTER), "EC2NodeClass")[nm.node_pool_name(pool)]["spec"]
    assert spec["capacityReservationSelectorTerms"] == [{"id": "cr-0a1b2c3d4e5f60718"}]
    others = [p for p in plan.pools.values() if p.capacity == "on-demand"]
    for other in others:
        other_spec = by_kind(nm.render(plan, CLUSTER), "EC2NodeClass")[nm.node_pool_name(other)]["spec"]
        assert "capacityReservationSelectorTerms" not in other_spec


def test_bottlerocket_nvidia_dra_pool_switches_off_the_bundled_plugin() -> None:
    plan = VARIANTS["staging-bottlerocket-dra"]()
    classes = by_kind(nm.render(plan, CLUSTER), "EC2NodeClass")
    spec = classes[nm.node_pool_name(plan.pools["gpu-mig"])]["spec"]
    assert spec["amiSelectorTerms"] == [{"alias": "bottlerocket@latest"}]
    settings = tomllib.loads(spec["userData"])["settings"]
    assert settings["kubelet-device-plugins"]["nvidia"]["enabled"] is False
    # the Neuron pool gets only its own setting (device ownership), not the NVIDIA one
    neuron = tomllib.loads(classes[nm.node_pool_name(plan.pools["trn-static"])]["spec"]["userData"])["settings"]
    assert neuron == {"kubernetes": {"device-ownership-from-security-context": True}}


@pytest.mark.parametrize("mode", ["karpenter", "managed-node-groups"])
def test_bottlerocket_plugin_pool_time_slices_the_bundled_plugin(mode: str) -> None:
    """The chart's plugin keeps off Bottlerocket plugin pools, so their gpuSharing reaches the bundled plugin
    through the node settings, as the toolkit configures the chart's (no renaming, one replica per
    request); a user setting still wins. Before, time-slicing silently had no effect there."""
    sharing = {"strategy": "time-slicing", "replicas": 4}
    own = {"kubelet-device-plugins": {"nvidia": {"time-slicing": {"fail-requests-greater-than-one": False}}}}
    size = {"replicas": 1} if mode == "managed-node-groups" else {}
    base = {"instanceTypes": ["g6e.xlarge"], "ami": "bottlerocket", "devices": {"nvidia": "device-plugin"}, **size}
    plan = stacks.plan(mode, "1.35", pools={"ts": {**base, "gpuSharing": sharing},
                                            "mine": {**base, "gpuSharing": sharing, "bottlerocketSettings": own},
                                            "whole": base})
    expected = {"device-sharing-strategy": "time-slicing",
                "time-slicing": {"replicas": 4, "rename-by-default": False, "fail-requests-greater-than-one": True}}
    assert plan.pools["ts"].bottlerocket_settings == {"kubelet-device-plugins": {"nvidia": expected}}
    assert plan.pools["mine"].bottlerocket_settings["kubelet-device-plugins"]["nvidia"]["time-slicing"] == {
        "replicas": 4, "rename-by-default": False, "fail-requests-greater-than-one": False}
    assert plan.pools["whole"].bottlerocket_settings == {}
    if mode == "karpenter":
        classes = by_kind(nm.render(plan, CLUSTER), "EC2NodeClass")
        user_data = classes[nm.node_pool_name(plan.pools["ts"])]["spec"]["userData"]
        assert tomllib.loads(user_data)["settings"]["kubelet-device-plugins"]["nvidia"] == expected


def test_consumable_capacity_time_slicing_annotates_the_node_class() -> None:
    plan = VARIANTS["staging-consumable-capacity"]()
    classes = by_kind(nm.render(plan, CLUSTER), "EC2NodeClass")
    sliced = classes[nm.node_pool_name(plan.pools["gpu-timeslice"])]
    assert sliced["metadata"]["annotations"] == {"karpenter.k8s.aws/nvidia-consumable-capacity": "4"}
    assert "annotations" not in classes[nm.node_pool_name(plan.pools["gpu-dra"])]["metadata"]


def test_configured_interface_layout_reaches_the_ec2_node_class() -> None:
    layout = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
              {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}]
    plan = plan_of("staging", **{"gpu-mig": {"efa": {"networkInterfaces": layout}}})
    spec = by_kind(nm.render(plan, CLUSTER), "EC2NodeClass")[nm.node_pool_name(plan.pools["gpu-mig"])]["spec"]
    assert spec["networkInterfaces"] == layout


def test_public_pools_select_subnets_by_id_and_need_them() -> None:
    plan = plan_of("staging", **{"gpu-timeslice": {"subnets": "public"}})
    pool = plan.pools["gpu-timeslice"]
    with pytest.raises(ValueError, match="public subnet"):
        nm.node_class_spec("karpenter", pool, CLUSTER)
    facts = nm.ClusterFacts("ml", "ml-node", "ml", public_subnet_ids=("subnet-00000c01", "subnet-00000c02"))
    spec = nm.node_class_spec("karpenter", pool, facts)
    assert spec["subnetSelectorTerms"] == [{"id": "subnet-00000c01"}, {"id": "subnet-00000c02"}]


def test_managed_node_groups_render_no_kubernetes_objects() -> None:
    assert nm.render(plan_of("prod"), CLUSTER) == []


# --- physical names and replacement -----------------------------------------------------------

def test_node_pool_name_changes_with_device_managers_and_provisioning_only() -> None:
    base = plan_of("staging").pools["gpu-timeslice"]
    to_dra = plan_of("staging", **{"gpu-timeslice": {"devices": {"nvidia": "dra"}}}).pools["gpu-timeslice"]
    static = {"provisioning": "static", "replicas": 1}
    to_static = plan_of("staging", **{"gpu-timeslice": static}).pools["gpu-timeslice"]
    relabel = {"labels": {"team": "x"}, "diskSizeGib": 300}
    relabelled = plan_of("staging", **{"gpu-timeslice": relabel}).pools["gpu-timeslice"]
    assert nm.node_pool_name(base).startswith("gpu-timeslice-")
    assert nm.node_pool_name(to_dra) != nm.node_pool_name(base)
    assert nm.node_pool_name(to_static) != nm.node_pool_name(base)
    assert nm.node_pool_name(relabelled) == nm.node_pool_name(base)


def test_replacement_paths_name_every_device_manager_label() -> None:
    pool = plan_of("staging").pools["gpu-dra"]
    assert nm.replacement_paths(pool, "labels") == [
        'labels["eks-devices.io/device-manager-nvidia"]', 'labels["eks-devices.io/device-manager-efa"]',
        'labels["eks-devices.io/device-manager-neuron"]']


# --- EFA interface layout (pure) --------------------------------------------------------------

@pytest.mark.parametrize(("itype", "efa_only"), [
    ("p5.48xlarge", 32), ("p5en.48xlarge", 16), ("p4d.24xlarge", 4), ("trn1.32xlarge", 8)])
def test_efa_interface_layout_per_instance_type(itype: str, efa_only: int) -> None:
    layout = efa_interface_layout(catalog.instance_types()[itype])
    assert layout[0] == {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    assert [n["interfaceType"] for n in layout[1:]] == ["efa-only"] * efa_only
    assert [(n["networkCardIndex"], n["deviceIndex"]) for n in layout[1:]] == [
        (0, 1), *((card, 0) for card in range(1, efa_only))]


# --- Bottlerocket TOML ------------------------------------------------------------------------

def test_bottlerocket_toml_round_trips() -> None:
    settings = {"kubelet-device-plugins": {"nvidia": {"enabled": False, "device-sharing-strategy": "none"}},
                "kubernetes": {"max-pods": 110, "node-labels": {"a.b/c": 'say "hi"'}, "x": [1, 2]}}
    text = nm.bottlerocket_toml(settings)
    assert text.startswith("[settings.kubelet-device-plugins.nvidia]\n")
    assert tomllib.loads(text) == {"settings": settings}


@pytest.mark.parametrize("bad", [{"a": None}, {"a": [{"b": 1}]}])
def test_bottlerocket_toml_rejects_values_it_cannot_write(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"settings\.a"):
        nm.bottlerocket_toml(bad)


# --- the structural check can fail ------------------------------------------------------------

def _valid() -> dict[str, dict[str, Any]]:
    plan = plan_of("staging")
    objects = nm.render(plan, CLUSTER)
    static = pool_objects(plan)["gpu-mig"]
    return {"pool": static, "ec2": by_kind(objects, "EC2NodeClass")[static["metadata"]["name"]],
            "auto": next(iter(by_kind(nm.render(plan_of("dev"), CLUSTER), "NodeClass").values()))}


BREAKAGES = {
    "missing nodeClassRef": ("pool", lambda o: o["spec"]["template"]["spec"].pop("nodeClassRef")),
    "cpu limit on a static pool": ("pool", lambda o: o["spec"]["limits"].update(cpu=8)),
    "weight on a static pool": ("pool", lambda o: o["spec"].update(weight=10)),
    "label value too long": ("pool", lambda o: o["spec"]["template"]["metadata"]["labels"].update(x="y" * 64)),
    "restricted label": ("pool", lambda o: o["spec"]["template"]["metadata"]["labels"].update(
        {"karpenter.sh/nodepool": "x"})),
    "karpenter.sh domain label": ("pool", lambda o: o["spec"]["template"]["metadata"]["labels"].update(
        {"team.karpenter.sh/owner": "ml"})),
    "karpenter.k8s.aws domain label": ("pool", lambda o: o["spec"]["template"]["metadata"]["labels"].update(
        {"karpenter.k8s.aws/instance-family": "p5"})),
    "karpenter.sh requirement key": ("pool", lambda o: o["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.sh/team", "operator": "Exists"})),
    "empty taint value": ("pool", lambda o: o["spec"]["template"]["spec"]["taints"][0].update(value="")),
    "bad taint effect": ("pool", lambda o: o["spec"]["template"]["spec"]["taints"][0].update(effect="Never")),
    "In without values": ("pool", lambda o: o["spec"]["template"]["spec"]["requirements"][0].pop("values")),
    "role and instance profile": ("ec2", lambda o: o["spec"].update(instanceProfile="p")),
    "no AMI terms": ("ec2", lambda o: o["spec"].update(amiSelectorTerms=[])),
    "efa primary interface": ("ec2", lambda o: o["spec"].update(networkInterfaces=[
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa-only"}])),
    "efa interface type": ("ec2", lambda o: o["spec"].update(networkInterfaces=[
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa"}])),
    "interface slot twice": ("ec2", lambda o: o["spec"].update(networkInterfaces=[
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"},
        {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "interface"}])),
    "two efa-only on one card": ("auto", lambda o: o["spec"].update(advancedNetworking={"networkInterfaces": [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"},
        {"networkCardIndex": 1, "deviceIndex": 1, "interfaceType": "efa-only"}]})),
    "more than 150 interfaces": ("ec2", lambda o: o["spec"].update(networkInterfaces=[
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}] + [
        {"networkCardIndex": c, "deviceIndex": 0 if c else 1, "interfaceType": "efa-only"} for c in range(150)])),
    "restricted tag": ("ec2", lambda o: o["spec"]["tags"].update({"kubernetes.io/cluster/ml": "owned"})),
    "NodeClass named default": ("auto", lambda o: o["metadata"].update(name="default")),
    "NodeClass without role": ("auto", lambda o: o["spec"].pop("role")),
    "wrong apiVersion": ("auto", lambda o: o.update(apiVersion="eks.amazonaws.com/v2")),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_structural_check_catches(breakage: str) -> None:
    which, breaks = BREAKAGES[breakage]
    obj = copy.deepcopy(_valid()[which])
    assert crd_schemas.validate(obj) == []
    breaks(obj)
    assert crd_schemas.validate(obj) != []



@pytest.mark.parametrize("key", [
    "karpenter.sh/nodepool", "kubernetes.io/hostname", "karpenter.sh/team", "team.karpenter.sh/owner",
    "karpenter.sh", "karpenter.k8s.aws/instance-family", "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.sh/capacity-type", "example.com/karpenter.sh", "eks-devices.io/pool", "workload"])
def test_refused_template_labels_match_the_structural_check(key: str) -> None:
    """The config rule and the NodePool schema refuse the same template labels (Karpenter's CRD
    refuses its own label domains; karpenter.sh/capacity-type is the one it allows)."""
    obj = copy.deepcopy(_valid()["pool"])
    obj["spec"]["template"]["metadata"]["labels"][key] = "x"
    assert nm.refused_template_label(key) == (crd_schemas.validate(obj) != [])
    assert nm.refused_template_label(key) == (key not in ("karpenter.sh/capacity-type", "example.com/karpenter.sh",
                                                           "eks-devices.io/pool", "workload"))


def test_a_pool_taint_never_renders_an_empty_value() -> None:
    """`value: ""` means no value to Kubernetes but Karpenter's NodePool CRD refuses it."""
    plan = plan_of("staging", **{"gpu-timeslice": {"taints": [{"key": "dedicated", "value": "", "effect": "NoSchedule"}]}})
    taints = pool_objects(plan)["gpu-timeslice"]["spec"]["template"]["spec"]["taints"]
    assert {"key": "dedicated", "effect": "NoSchedule"} in taints
    assert all(t.get("value", "x") != "" for t in taints)
