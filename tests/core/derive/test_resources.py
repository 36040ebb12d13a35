"""Reading node shapes and device software from plain resources (`core/derive/resources.py`), and
the per-node proof on them (`core/derive/shape_scope.py`, the rules' `@on_resources` checks), resource kind by resource kind."""

from __future__ import annotations

import base64
import copy

import pytest

from eks_devices.core.derive.resources import Resource, nodes, read
from eks_devices.core.derive.shape_scope import running
from eks_devices.core.knowledge import installers
from eks_devices.core.rules import check_resources as check

PLUGIN = Resource("kubernetes:helm.sh/v3:Release", "plugin", "urn:plugin",
                  {"chart": "nvidia-device-plugin", "version": "0.20.0", "values": {}})
# without it the NVIDIA DRA chart refuses to render (chart-render-refused), whatever else is set
RENDERS = {"gpuResourcesEnabledOverride": True}
DRA = Resource("kubernetes:helm.sh/v4:Chart", "dra", "urn:dra",
               {"chart": "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu", "values": {}})


@pytest.mark.parametrize(("chart", "key"), [
    ("oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu", "nvidia-dra-driver"),
    ("nvidia/nvidia-dra-driver-gpu", "nvidia-dra-driver"),
    ("eks/aws-efa-k8s-device-plugin", "aws-efa-k8s-device-plugin"),
    ("oci://public.ecr.aws/neuron/neuron-helm-chart", "neuron-dra-driver"),
    ("bitnami/nginx", None),
])
def test_charts_are_known_by_name(chart: str, key: str | None) -> None:
    assert installers.chart_key(chart) == key


@pytest.mark.parametrize(("image", "manager"), [
    ("nvcr.io/nvidia/k8s-device-plugin:v0.20.0", ("nvidia", "device-plugin")),
    ("602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/dranet:v1.0.0", ("efa", "dra")),
    ("public.ecr.aws/neuron/neuron-device-plugin@sha256:0123", ("neuron", "device-plugin")),
    ("nvcr.io/nvidia/cuda:12.4.0-base", None),
])
def test_daemonset_images_name_their_manager(image: str, manager: tuple[str, str] | None) -> None:
    assert installers.image_manager(image) == manager


def test_a_self_managed_pulumi_eks_node_group() -> None:
    group = Resource("eks:index:NodeGroupV2", "gpu", "urn:ng", {
        "instanceType": "g6e.xlarge", "labels": {"team": "ml"},
        "taints": {"nvidia.com/gpu": {"value": "true", "effect": "NoSchedule"}}})
    shape = read([group]).shapes[0]
    assert (shape.instance_types, shape.labels, shape.taints) == (
        ("g6e.xlarge",), {"team": "ml"}, ({"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},))
    assert {r.source for r in running(shape, read([group, PLUGIN]).installers, "g6e.xlarge")} == {
        "Helm release plugin of nvidia-device-plugin 0.20.0"}


def bottlerocket_group(user_data: str, labels: dict[str, str] | None = None) -> list[Resource]:
    template = Resource("aws:ec2/launchTemplate:LaunchTemplate", "gpu", "urn:lt",
                        {"id": "lt-0123", "userData": base64.b64encode(user_data.encode()).decode()})
    group = Resource("aws:eks/nodeGroup:NodeGroup", "gpu", "urn:ng", {
        "instanceTypes": ["g6e.xlarge"], "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
        "labels": {"gpu": "dra", "nvidia.com/gpu.present": "true"} if labels is None else labels, "launchTemplate": {"id": "lt-0123", "version": "1"}})
    dra = Resource(DRA.type, DRA.name, DRA.urn,
                   {**DRA.props, "values": {**RENDERS, "kubeletPlugin": {"nodeSelector": {"gpu": "dra"}}}})
    return [template, group, dra]


def test_bottlerocket_runs_its_bundled_plugin_unless_the_launch_template_turns_it_off() -> None:
    on = check(bottlerocket_group("[settings.kubernetes]\nmax-pods = 110\n"))
    assert [(v.slug, v.urn) for v in on] == [("one-manager-per-node", "urn:ng")]
    assert "device-plugin (bottlerocket), dra (Helm chart dra of dra-driver-nvidia-gpu" in on[0].message
    assert check(bottlerocket_group("[settings.kubelet-device-plugins.nvidia]\nenabled = false\n")) == []


def test_the_dra_kubelet_plugin_needs_the_gpu_label_off_al2023() -> None:
    """The DRA kubelet plugin's default affinity wants `nvidia.com/gpu.present`, which only nodeadm
    on AL2023 sets: on Bottlerocket without the label it never lands, so only the bundled plugin runs."""
    resources = bottlerocket_group("", labels={"gpu": "dra"})
    facts = read(resources)
    assert [r.source for r in running(facts.shapes[0], facts.installers, "g6e.xlarge")] == ["bottlerocket"]
    resources[1].props["amiType"] = "AL2023_x86_64_NVIDIA"
    facts = read(resources)
    assert [r.manager for r in running(facts.shapes[0], facts.installers, "g6e.xlarge")] == ["dra"]


def test_nodes_carry_the_labels_karpenter_and_eks_give_them() -> None:
    pool = Resource("kubernetes:karpenter.sh/v1:NodePool", "gpu", "urn:np", {
        "metadata": {"name": "gpu-abc"}, "spec": {"template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6e.xlarge"]},
                             {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]}}}})
    group = Resource("aws:eks/nodeGroup:NodeGroup", "ng", "urn:ng", {
        "nodeGroupName": "ng-123", "instanceTypes": ["g6e.xlarge"], "capacityType": "SPOT"})
    provider = Resource("pulumi:providers:aws", "default", "urn:aws", {"region": "us-west-2"})
    karpenter, node_group = read([pool, group, provider]).shapes
    labels = [n.labels for n in nodes(karpenter, "g6e.xlarge")]
    assert [n["karpenter.sh/capacity-type"] for n in labels] == ["spot", "on-demand"]
    assert labels[0]["karpenter.sh/nodepool"] == "gpu-abc" and labels[0]["nvidia.com/gpu.present"] == "true"
    assert labels[0]["karpenter.k8s.aws/instance-gpu-manufacturer"] == "nvidia"
    assert labels[0]["topology.kubernetes.io/region"] == "us-west-2"
    (only,) = nodes(node_group, "g6e.xlarge")
    assert {k: only.labels[k] for k in ("eks.amazonaws.com/nodegroup", "eks.amazonaws.com/capacityType",
                                        "kubernetes.io/arch")} == {
        "eks.amazonaws.com/nodegroup": "ng-123", "eks.amazonaws.com/capacityType": "SPOT", "kubernetes.io/arch": "amd64"}
    # A chart selecting spot nodes by Karpenter's label lands on the pool's spot nodes only.
    spot = Resource(PLUGIN.type, "spot", "urn:spot", {**PLUGIN.props, "values": {
        "nodeSelector": {"karpenter.sh/capacity-type": "spot"}}})
    assert [r.manager for r in running(karpenter, read([spot]).installers, "g6e.xlarge")] == ["device-plugin"]
    assert running(node_group, read([spot]).installers, "g6e.xlarge") == []


def test_an_auto_mode_node_pool_with_a_chart_on_it() -> None:
    """An unlabelled dynamic Auto Mode pool runs Auto Mode's `inferred` manager; a chart whose
    affinity admits the node (here: the default affinity removed) is a second one. With its default
    affinity (NFD or `nvidia.com/gpu.present` labels, which Auto Mode nodes lack) it stays off."""
    pool = Resource("kubernetes:karpenter.sh/v1:NodePool", "gpu", "urn:np", {"spec": {"template": {"spec": {
        "nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"},
        "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6e.xlarge"]}]}}}})
    shape = read([pool]).shapes[0]
    assert shape.auto_mode and shape.provisioning == "dynamic"
    everywhere = Resource(PLUGIN.type, PLUGIN.name, PLUGIN.urn, {**PLUGIN.props, "values": {"affinity": None}})
    found = check([pool, everywhere])
    assert [v.urn for v in found] == ["urn:np"]
    assert "device-plugin (Helm release plugin of nvidia-device-plugin 0.20.0), inferred (auto-mode)" in found[0].message
    assert check([pool, PLUGIN]) == []
    assert check([pool]) == []


def test_a_chart_components_daemonsets_are_the_chart() -> None:
    """A v4 Chart's DaemonSets (registered under it) are not a second installer: they stand for the
    chart, as what its nodes really run (a transform may have changed them), naming the chart."""
    child = Resource("kubernetes:apps/v1:DaemonSet", "dra-plugin", "urn:ds", {
        "spec": {"template": {"spec": {"containers": [
            {"image": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"}]}}}}, parent=DRA.urn)
    [installer] = read([DRA, child]).installers
    assert installer.urn == "urn:ds" and installer.what.endswith("of Chart dra")
    orphan = Resource(child.type, child.name, child.urn, child.props)
    assert [i.urn for i in read([DRA, orphan]).installers] == ["urn:dra", "urn:ds"]


def test_a_raw_host_network_daemonset_tolerates_what_the_controller_adds() -> None:
    """The DaemonSet controller adds the network-unavailable toleration to host-network pods only."""
    group = Resource("aws:eks/nodeGroup:NodeGroup", "ng", "urn:ng", {"instanceTypes": ["g6e.xlarge"], "taints": [
        {"key": "node.kubernetes.io/network-unavailable", "effect": "NO_SCHEDULE"}]})
    pod = {"containers": [{"image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"}]}
    daemonset = Resource("kubernetes:apps/v1:DaemonSet", "ds", "urn:ds", {"spec": {"template": {"spec": pod}}})
    shape = read([group]).shapes[0]
    assert running(shape, read([daemonset]).installers, "g6e.xlarge") == []
    pod["hostNetwork"] = True
    assert [r.manager for r in running(shape, read([daemonset]).installers, "g6e.xlarge")] == ["device-plugin"]


def test_eks_charts_stay_off_auto_mode_nodes() -> None:
    """The EFA plugin's template keeps it off `compute-type=auto` nodes: no second EFA manager there.
    On a Karpenter NodePool's p5 nodes the same release (its chart's default instance list) lands."""
    pool = Resource("kubernetes:karpenter.sh/v1:NodePool", "p5", "urn:np", {"spec": {"template": {"spec": {
        "nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"},
        "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}]}}}})
    efa = Resource("kubernetes:helm.sh/v3:Release", "efa", "urn:efa", {"chart": "eks/aws-efa-k8s-device-plugin",
                                                                       "values": {}})
    shape = read([pool]).shapes[0]
    assert [(r.manager, r.source) for r in running(shape, read([efa]).installers, "p5.48xlarge")
            if r.family == "efa"] == [("inferred", "auto-mode")]
    assert check([pool, efa]) == []
    karpenter = copy.deepcopy(pool)
    karpenter.props["spec"]["template"]["spec"]["nodeClassRef"] = {"group": "karpenter.k8s.aws", "name": "default"}
    assert [r.manager for r in running(read([karpenter]).shapes[0], read([efa]).installers, "p5.48xlarge")
            if r.family == "efa"] == ["device-plugin"]


def _on_types(*terms: list[str]) -> dict[str, object]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types}]}
        for types in terms]}}}


def test_charts_kept_apart_by_instance_type_affinity_pass() -> None:
    """Terms are alternatives: a plugin on g6e types (two terms) and a DRA driver on p5 never share a
    node, whatever pools exist; the same DRA driver on a g6e type would."""
    plugin = Resource(PLUGIN.type, PLUGIN.name, PLUGIN.urn, {**PLUGIN.props, "values": {
        "affinity": _on_types(["g6e.xlarge"], ["g6e.2xlarge"])}})
    apart = Resource(DRA.type, DRA.name, DRA.urn, {**DRA.props, "values": {
        **RENDERS, "kubeletPlugin": {"affinity": _on_types(["p5.48xlarge"])}}})
    assert check([plugin, apart]) == []
    shared = Resource(DRA.type, DRA.name, DRA.urn, {**DRA.props, "values": {
        **RENDERS, "kubeletPlugin": {"affinity": _on_types(["p5.48xlarge", "g6e.2xlarge"])}}})
    assert {v.urn for v in check([plugin, shared])} == {"urn:plugin", "urn:dra"}


def test_node_labels_from_ec2_gpu_and_neuron_facts() -> None:
    """Karpenter's and Auto Mode's instance labels as karpenter-provider-aws computes them (lowerKabobCase of EC2's
    GPU and Neuron names; GPU memory per GPU in MiB; none where EC2 gives no figure)."""
    from eks_devices.core.knowledge import catalog, node_labels
    types = catalog.instance_types()
    k = node_labels.karpenter(types["p5.48xlarge"], "gpu", "on-demand")
    assert {key.removeprefix("karpenter.k8s.aws/instance-"): v for key, v in k.items() if "gpu" in key} == {
        "gpu-name": "h100", "gpu-manufacturer": "nvidia", "gpu-count": "8", "gpu-memory": "81920"}
    rtx = [t for t in types.values() if t.gpu_model == "NVIDIA RTX PRO Server 6000"]
    assert rtx and node_labels.karpenter(rtx[0], None, "spot")["karpenter.k8s.aws/instance-gpu-name"] == (
        "rtx-pro-server-6000")
    gb200 = [t for t in types.values() if t.gpu_model == "NVIDIA GB200"]
    assert gb200 and "karpenter.k8s.aws/instance-gpu-memory" not in node_labels.karpenter(gb200[0], None, "spot")
    trn = node_labels.karpenter(types["trn2.48xlarge"], None, "on-demand")
    assert trn["karpenter.k8s.aws/instance-accelerator-name"] == "trainium2"
    assert trn["karpenter.k8s.aws/instance-accelerator-count"] == "16"
    auto = node_labels.auto_mode(types["g6e.xlarge"], "gpu", "on-demand")
    assert {key: auto[key] for key in auto if key.startswith("eks.amazonaws.com/instance-")} == {
        "eks.amazonaws.com/instance-family": "g6e", "eks.amazonaws.com/instance-size": "xlarge",
        "eks.amazonaws.com/instance-category": "g", "eks.amazonaws.com/instance-generation": "6",
        "eks.amazonaws.com/instance-gpu-name": "l40s", "eks.amazonaws.com/instance-gpu-manufacturer": "nvidia",
        "eks.amazonaws.com/instance-gpu-count": "1", "eks.amazonaws.com/instance-gpu-memory": "45776"}
