"""The overlap proof's second side: every pool is served by the manager it chose, on
Kubernetes' and the charts' real semantics. Each stack here was accepted before (exit 0, no
finding) while a pool got no manager or a release could not install — or was refused while safe."""

from __future__ import annotations

from typing import Any

import pytest

from eks_devices.core.derive import scope
from eks_devices.core.model import Finding, Plan
from support import stacks

STATIC = {"provisioning": "static", "replicas": 1}


def required(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}}


def plan(mode: str, pools: dict[str, Any], values: dict[str, Any]) -> Plan:
    return stacks.plan(mode, pools=pools, helmValues=values)


def slugs(p: Plan) -> set[str]:
    return {f.slug for f in p.findings if f.severity == "error"}


def only(p: Plan, slug: str) -> list[Finding]:
    return [f for f in p.findings if f.slug == slug]


GPU_PLUGIN = {"gpu": {"instanceTypes": ["g6e.xlarge", "g6e.2xlarge"], "devices": {"nvidia": "device-plugin"}}}
GPU_DRA = {"gpu": {"instanceTypes": ["g6e.xlarge"], **STATIC, "devices": {"nvidia": "dra"}}}
EFA_PLUGIN = {"efa": {"instanceTypes": ["p5.48xlarge"], **STATIC, "devices": {"efa": "device-plugin"}}}


# --- the five cases of the issue -----------------------------------------------------------------

def test_an_empty_node_selector_term_matches_no_node() -> None:
    """Kubernetes: "a null or empty node selector term matches no objects" — the plugin runs nowhere."""
    p = plan("karpenter", GPU_PLUGIN, {"nvidia-device-plugin": {"affinity": required([])}})
    [finding] = only(p, "device-software-unserved")
    assert finding.path == "helmValues.nvidia-device-plugin.affinity"
    assert "pool gpu:" in finding.message and "nvidia device-plugin" in finding.message
    assert "term 0 is null or empty, which matches no node" in finding.message
    assert {u.instance_type for u in scope.unserved(p)} == {"g6e.xlarge", "g6e.2xlarge"}
    assert not only(p, "one-manager-per-node")


def test_a_term_without_expressions_matches_no_node_either() -> None:
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": None}, {}]}}}
    p = plan("managed-node-groups", {"gpu": {**GPU_PLUGIN["gpu"], **STATIC}},
             {"nvidia-device-plugin": {"affinity": affinity}})
    assert "device-software-unserved" in slugs(p)
    assert "device-software-installable" not in slugs(p)  # the API server accepts empty terms


def test_an_exists_toleration_with_a_value_cannot_install() -> None:
    p = plan("karpenter", GPU_PLUGIN, {"nvidia-device-plugin": {"tolerations": [
        {"key": "nvidia.com/gpu", "operator": "Exists", "value": "true"}]}})
    [finding] = only(p, "device-software-installable")
    assert finding.path == "helmValues.nvidia-device-plugin.tolerations.0.value"
    assert "release nvidia-device-plugin cannot install" in finding.message
    assert "value must be empty when `operator` is 'Exists'" in finding.message


@pytest.mark.parametrize("mode", ["karpenter", "managed-node-groups"])
def test_efa_instance_label_keys_build_the_affinity(mode: str) -> None:
    """eks-charts build one term per key of supportedInstanceLabels.keys, each `key In .values`:
    a Karpenter instance-family key compared with instance type names matches nothing."""
    p = plan(mode, EFA_PLUGIN, {"aws-efa-k8s-device-plugin": {
        "supportedInstanceLabels": {"keys": ["karpenter.k8s.aws/instance-family"]}}})
    [gap] = scope.unserved(p)
    assert (gap.pool, gap.family, gap.manager, gap.instance_type) == ("efa", "efa", "device-plugin", "p5.48xlarge")
    assert "device-software-unserved" in slugs(p)
    assert "device-software-installable" not in slugs(p)


def test_efa_family_key_with_family_values_serves_karpenter_nodes() -> None:
    """The same key with instance families as values: Karpenter nodes carry that label, so the
    plugin lands — the model reads keys × values, not values alone."""
    p = plan("karpenter", EFA_PLUGIN, {"aws-efa-k8s-device-plugin": {
        "supportedInstanceLabels": {"keys": ["karpenter.k8s.aws/instance-family"], "values": ["p5"]}}})
    assert not scope.unserved(p) and "device-software-unserved" not in slugs(p)
    mng = plan("managed-node-groups", EFA_PLUGIN, {"aws-efa-k8s-device-plugin": {
        "supportedInstanceLabels": {"keys": ["karpenter.k8s.aws/instance-family"], "values": ["p5"]}}})
    assert "device-software-unserved" in slugs(mng)  # node groups' nodes carry no Karpenter labels


def test_no_efa_instance_label_keys_runs_nowhere_and_cannot_install() -> None:
    p = plan("managed-node-groups", EFA_PLUGIN, {"aws-efa-k8s-device-plugin": {
        "supportedInstanceLabels": {"keys": []}}})
    assert {"device-software-unserved", "device-software-installable"} <= slugs(p)
    [bad] = only(p, "device-software-installable")
    assert bad.path == "helmValues.aws-efa-k8s-device-plugin.supportedInstanceLabels.keys"
    assert "unknown field(s) 'key', 'operator', 'values'" in bad.message


def test_an_arch_affinity_leaves_a_graviton_gpu_pool_unserved() -> None:
    pools = {"graviton": {"instanceTypes": ["g5g.xlarge"], **STATIC, "devices": {"nvidia": "device-plugin"}},
             "x86": {"instanceTypes": ["g6e.xlarge"], **STATIC, "devices": {"nvidia": "device-plugin"}}}
    values = {"nvidia-device-plugin": {"affinity": required(
        [{"key": "kubernetes.io/arch", "operator": "NotIn", "values": ["arm64"]}])}}
    p = plan("managed-node-groups", pools, values)
    assert [(u.pool, u.instance_type) for u in scope.unserved(p)] == [("graviton", "g5g.xlarge")]
    [finding] = only(p, "device-software-unserved")
    assert "pool graviton" in finding.message and "no term matches" in finding.message


@pytest.mark.parametrize("mode", ["karpenter", "managed-node-groups"])
@pytest.mark.parametrize("ami", ["al2023", "bottlerocket"])
def test_the_nvidia_dra_charts_own_default_term_is_accepted(mode: str, ami: str) -> None:
    """nodeadm labels AL2023 NVIDIA nodes nvidia.com/gpu.present=true; Bottlerocket DRA pools get
    the label from the toolkit. The chart's own term is safe on both."""
    pools = {"gpu": {**GPU_DRA["gpu"], "ami": ami}}
    p = plan(mode, pools, {"nvidia-dra-driver": {"kubeletPlugin": {"affinity": required(
        [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}])}}})
    assert not p.errors, [f.as_dict() for f in p.errors]
    assert [r.manager for r in scope.running_on(p, p.pools["gpu"]) if r.family == "nvidia"] == ["dra"]


# --- the rest of Kubernetes' semantics, as stacks -----------------------------------------------

def test_gt_compares_karpenter_gpu_counts_as_integers() -> None:
    pools = {"gpu": {"instanceTypes": ["g6e.xlarge", "g6e.48xlarge"], "devices": {"nvidia": "device-plugin"}}}
    values = {"nvidia-device-plugin": {"affinity": required(
        [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["4"]}])}}
    p = plan("karpenter", pools, values)
    assert [u.instance_type for u in scope.unserved(p)] == ["g6e.xlarge"]  # 1 GPU; 8 > 4 is served


def test_an_effectless_toleration_tolerates_every_effect_and_prefer_never_blocks() -> None:
    taints = [{"key": "team", "value": "ml", "effect": "NoExecute"},
              {"key": "soft", "value": "x", "effect": "PreferNoSchedule"}]
    pools = {"gpu": {**GPU_PLUGIN["gpu"], "taints": taints}}
    ok = plan("karpenter", pools, {"nvidia-device-plugin": {"tolerations": [
        {"key": "team", "operator": "Exists"}, {"key": "nvidia.com/gpu", "operator": "Exists"}]}})
    assert not scope.unserved(ok) and not ok.errors
    blocked = plan("karpenter", pools, {"nvidia-device-plugin": {"tolerations": [
        {"key": "team", "operator": "Exists", "effect": "NoSchedule"}, {"key": "nvidia.com/gpu", "operator": "Exists"}]}})
    [finding] = only(blocked, "device-software-unserved")
    assert "no toleration at tolerations for the pool's taint team=ml:NoExecute" in finding.message


def test_an_unscoped_plugin_lands_on_the_system_nodes() -> None:
    """With its nodeSelector and affinity gone the plugin runs on every node, the system node group
    included; `one-manager-per-node` says so."""
    p = plan("managed-node-groups", {"gpu": {**GPU_PLUGIN["gpu"], **STATIC}},
             {"nvidia-device-plugin": {"nodeSelector": None, "affinity": None}})
    messages = [f.message for f in only(p, "one-manager-per-node")]
    assert any("on the system node group (m7i.large nodes)" in m for m in messages), messages


def test_an_agent_on_a_pool_that_chose_none_is_an_overlap() -> None:
    """A Trainium pool chose no NVIDIA manager: an NVIDIA plugin that tolerates everything and
    selects nothing lands there too."""
    pools = {"gpu": {**GPU_PLUGIN["gpu"], **STATIC},
             "trn": {"instanceTypes": ["trn1.32xlarge"], **STATIC, "devices": {"neuron": "device-plugin"}}}
    p = plan("managed-node-groups", pools, {"nvidia-device-plugin": {
        "nodeSelector": None, "affinity": None, "tolerations": [{"operator": "Exists"}]}})
    strays = [o for o in scope.overlaps(p) if o.pool == "trn"]
    assert [(o.family, o.expected, o.instance_type) for o in strays] == [("nvidia", "none", "trn1.32xlarge")]


def test_zones_named_by_the_stack_are_on_the_nodes() -> None:
    pools = {"gpu": {**GPU_PLUGIN["gpu"], **STATIC, "availabilityZone": "us-west-2b"}}
    values = {"nvidia-device-plugin": {"affinity": required(
        [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a"]}])}}
    p = plan("managed-node-groups", pools, values)
    assert "device-software-unserved" in slugs(p)
    served = plan("managed-node-groups", pools, {"nvidia-device-plugin": {"affinity": required(
        [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2b"]}])}})
    assert "device-software-unserved" not in slugs(served)


# --- labels Karpenter and Auto Mode really put on nodes (issue 24, item 4) ------------------------

@pytest.mark.parametrize(("key", "operator", "values", "unserved"), [
    ("karpenter.k8s.aws/instance-gpu-name", "In", ["l40s"], []),
    ("karpenter.k8s.aws/instance-gpu-name", "In", ["h100"], ["g6e.2xlarge", "g6e.xlarge"]),
    ("karpenter.k8s.aws/instance-gpu-manufacturer", "In", ["nvidia"], []),
    ("karpenter.k8s.aws/instance-gpu-memory", "Gt", ["40000"], []),
    ("karpenter.k8s.aws/instance-gpu-memory", "Gt", ["50000"], ["g6e.2xlarge", "g6e.xlarge"]),
    ("karpenter.k8s.aws/instance-category", "In", ["g"], []),
])
def test_an_affinity_on_karpenter_gpu_labels_is_judged_by_their_values(
        key: str, operator: str, values: list[str], unserved: list[str]) -> None:
    """g6e types carry one NVIDIA L40S (45776 MiB): an affinity on the labels Karpenter sets from EC2's GPU
    facts admits or refuses them as the scheduler would, not as if the labels were missing."""
    p = plan("karpenter", GPU_PLUGIN, {"nvidia-device-plugin": {"affinity": required(
        [{"key": key, "operator": operator, "values": values}])}})
    assert sorted(u.instance_type for u in scope.unserved(p)) == unserved
    assert bool(only(p, "device-software-unserved")) == bool(unserved)


def test_an_affinity_on_the_neuron_accelerator_name_serves_trainium() -> None:
    pools = {"trn": {"instanceTypes": ["trn2.48xlarge"], **STATIC, "devices": {"neuron": "device-plugin"}}}
    served = plan("karpenter", pools, {"neuron-device-plugin": {"devicePlugin": {"affinity": required(
        [{"key": "karpenter.k8s.aws/instance-accelerator-name", "operator": "In", "values": ["trainium2"]},
         {"key": "karpenter.k8s.aws/instance-accelerator-manufacturer", "operator": "In", "values": ["aws"]}])}}})
    assert not scope.unserved(served) and not served.errors, [f.as_dict() for f in served.errors]
    other = plan("karpenter", pools, {"neuron-device-plugin": {"devicePlugin": {"affinity": required(
        [{"key": "karpenter.k8s.aws/instance-accelerator-name", "operator": "In", "values": ["inferentia2"]}])}}})
    assert [u.instance_type for u in scope.unserved(other)] == ["trn2.48xlarge"]


def test_the_toolkits_own_neuron_dra_values_on_inferentia_only_pools_cannot_install() -> None:
    """The Neuron chart lists the pools' Trainium types in its DRA affinity and drops Inferentia; with only
    Inferentia pools the list is empty, an `In` without values that kube-apiserver 1.36 refuses (the
    placement oracle saw the 422). Reported at the pool's choice, with a fix that applies."""
    inf = {"inf": {"instanceTypes": ["inf2.xlarge"], **STATIC, "devices": {"neuron": "dra"}}}
    [bad] = only(stacks.plan("karpenter", pools=inf), "device-software-installable")
    assert bad.path == "nodePools.inf.devices.neuron" and "cannot install" in bad.message
    assert "inf2.xlarge" in bad.message and "choose another manager for neuron" in bad.fix
    fixed = {"inf": {**inf["inf"], "devices": {"neuron": "device-plugin"}}}
    assert "device-software-installable" not in slugs(stacks.plan("karpenter", pools=fixed))
    trn = {**inf, "trn": {"instanceTypes": ["trn1.32xlarge"], **STATIC, "devices": {"neuron": "dra"}}}
    assert "device-software-installable" not in slugs(stacks.plan("karpenter", pools=trn))
