"""Reading node shapes and device software from plain resources (`core/derive/resources.py`), and
the per-node proof on them (`core/rules/resources.py`), resource kind by resource kind."""

from __future__ import annotations

import base64

import pytest

from eks_devices.core.derive.resources import Resource, read
from eks_devices.core.knowledge import installers
from eks_devices.core.rules.resources import check, running

PLUGIN = Resource("kubernetes:helm.sh/v3:Release", "plugin", "urn:plugin",
                  {"chart": "nvidia-device-plugin", "version": "0.20.0", "values": {}})
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
        "Helm release of nvidia-device-plugin 0.20.0"}


def bottlerocket_group(user_data: str) -> list[Resource]:
    template = Resource("aws:ec2/launchTemplate:LaunchTemplate", "gpu", "urn:lt",
                        {"id": "lt-0123", "userData": base64.b64encode(user_data.encode()).decode()})
    group = Resource("aws:eks/nodeGroup:NodeGroup", "gpu", "urn:ng", {
        "instanceTypes": ["g6e.xlarge"], "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
        "labels": {"gpu": "dra"}, "launchTemplate": {"id": "lt-0123", "version": "1"}})
    dra = Resource(DRA.type, DRA.name, DRA.urn,
                   {**DRA.props, "values": {"kubeletPlugin": {"nodeSelector": {"gpu": "dra"}}}})
    return [template, group, dra]


def test_bottlerocket_runs_its_bundled_plugin_unless_the_launch_template_turns_it_off() -> None:
    on = check(bottlerocket_group("[settings.kubernetes]\nmax-pods = 110\n"))
    assert [(v.slug, v.urn) for v in on] == [("one-manager-per-node", "urn:ng")]
    assert "device-plugin (bottlerocket), dra (Helm chart of dra-driver-nvidia-gpu" in on[0].message
    assert check(bottlerocket_group("[settings.kubelet-device-plugins.nvidia]\nenabled = false\n")) == []


def test_an_auto_mode_node_pool_with_a_chart_on_it() -> None:
    pool = Resource("kubernetes:karpenter.sh/v1:NodePool", "gpu", "urn:np", {"spec": {"template": {"spec": {
        "nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"},
        "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6e.xlarge"]}]}}}})
    shape = read([pool]).shapes[0]
    assert shape.auto_mode and shape.provisioning == "dynamic"
    found = check([pool, PLUGIN])
    assert [v.urn for v in found] == ["urn:np"]
    assert "dra or device-plugin (auto-mode)" in found[0].message
    assert check([pool]) == []


def test_a_chart_components_daemonsets_are_the_chart() -> None:
    """A v4 Chart's DaemonSets (registered under it at deploy) are not a second installer."""
    child = Resource("kubernetes:apps/v1:DaemonSet", "dra-plugin", "urn:ds", {
        "spec": {"template": {"spec": {"containers": [
            {"image": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"}]}}}}, parent=DRA.urn)
    assert [i.urn for i in read([DRA, child]).installers] == ["urn:dra"]
    orphan = Resource(child.type, child.name, child.urn, child.props)
    assert [i.urn for i in read([DRA, orphan]).installers] == ["urn:dra", "urn:ds"]
