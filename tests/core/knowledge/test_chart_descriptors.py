"""The chart descriptors (`core/knowledge/charts/`): one per chart key of the vocabulary, and the tables the
policy pack and the deploy graph derive from them."""

from __future__ import annotations

from eks_devices.core.knowledge import charts, installers
from eks_devices.core.vocabulary import CHART_KEYS


def test_one_descriptor_per_chart_key_each_with_its_pinned_release_known() -> None:
    assert set(charts.CHARTS) == {*CHART_KEYS, "karpenter-crd"}  # the CRD chart goes with karpenter's key
    for key, chart in charts.CHARTS.items():
        assert chart.key == key and chart.releases.knows(chart.version), key
        assert all(r.chart == key for r in chart.refusals)


def test_the_policy_pack_knows_each_chart_by_name_and_each_agent_by_image() -> None:
    assert installers.CHART_KEYS == {
        "dra-driver-nvidia-gpu": "nvidia-dra-driver", "nvidia-dra-driver-gpu": "nvidia-dra-driver",
        "nvidia-device-plugin": "nvidia-device-plugin", "aws-dranet": "aws-dranet",
        "aws-efa-k8s-device-plugin": "aws-efa-k8s-device-plugin", "neuron-helm-chart": "neuron-dra-driver"}
    assert installers.IMAGES == {
        "dra-driver-nvidia-gpu": ("nvidia", "dra"), "k8s-dra-driver-gpu": ("nvidia", "dra"),
        "k8s-device-plugin": ("nvidia", "device-plugin"), "dranet": ("efa", "dra"),
        "aws-efa-k8s-device-plugin": ("efa", "device-plugin"), "neuron-dra-driver": ("neuron", "dra"),
        "neuron-device-plugin": ("neuron", "device-plugin")}
    assert installers.image_manager("mirror.corp:5000/eks/dranet:v1.2.0") == ("efa", "dra")


def test_the_eks_add_on_images_and_the_crds() -> None:
    assert {k: c.eks_image for k, c in charts.CHARTS.items() if c.eks_image} == {
        "aws-dranet": "eks/dranet", "aws-efa-k8s-device-plugin": "eks/aws-efa-k8s-device-plugin"}
    assert charts.CRD_CHARTS == {"resource.nvidia.com/v1beta1/ComputeDomain": "nvidia-dra-driver"}
