"""NVIDIA GPUs: the NVIDIA DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu) or NVIDIA's device plugin."""

from __future__ import annotations

from typing import Any

from eks_devices.core.families.base import DeviceFamily, NodeFacts
from eks_devices.core.names import (
    BOTTLEROCKET_NVIDIA_ENABLED,
    BOTTLEROCKET_NVIDIA_PLUGIN,
    NVIDIA_GPU_PRESENT_LABEL,
    NVIDIA_PLUGIN_CONFIG_LABEL,
)
from eks_devices.core.values import nested


def _node_labels(node: NodeFacts) -> dict[str, str]:
    """The DRA kubelet plugin's affinity needs the GPU-present label, which only the AL2023 NVIDIA AMI sets
    itself; the device plugin's config manager picks a pool's time-slicing config by its label."""
    labels = {}
    if node.mode != "auto-mode" and node.manager == "dra" and node.ami != "al2023":
        labels[NVIDIA_GPU_PRESENT_LABEL] = "true"
    if node.manager == "device-plugin" and node.sharing == "time-slicing" and node.mode != "auto-mode":
        labels[NVIDIA_PLUGIN_CONFIG_LABEL] = f"time-slicing-{node.replicas}"
    return labels


def _bottlerocket(node: NodeFacts) -> dict[str, Any]:
    """The Bottlerocket NVIDIA variants bundle the device plugin: off on DRA pools; on plugin pools time-sliced
    as `gpuSharing` says, as the toolkit configures the chart's plugin (no renaming, one replica per request:
    the chart keeps off these pools, so nothing else would). bottlerocket.dev, settings
    `kubelet-device-plugins`: `device-sharing-strategy` and `time-slicing.*`, from Bottlerocket 1.29."""
    plugin: dict[str, Any] = {}
    if node.manager == "dra":
        plugin = {"enabled": False}
    elif node.manager == "device-plugin" and node.sharing == "time-slicing":
        plugin = {"device-sharing-strategy": "time-slicing",
                  "time-slicing": {"replicas": node.replicas, "rename-by-default": False,
                                   "fail-requests-greater-than-one": True}}
    return nested(BOTTLEROCKET_NVIDIA_PLUGIN, plugin) if plugin else {}


NVIDIA = DeviceFamily(
    name="nvidia",
    title="NVIDIA GPU",
    releases={"dra": "nvidia-dra-driver", "device-plugin": "nvidia-device-plugin"},
    extended_resource="nvidia.com/gpu",
    dra_driver="gpu.nvidia.com",
    device_class="gpu.nvidia.com",
    device_class_cel="device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    device_class_names_resource=True,  # v0.4.1 templates/deviceclass-gpu.yaml l.12-14
    dra_kubernetes=(1, 34),  # DRA GA (resource.k8s.io/v1) and recommended by EKS from 1.34
    taint="nvidia.com/gpu",
    auto_mode_label=True,
    auto_mode_dra=True,
    karpenter_gate="draNVIDIAGPU",
    al2023_variant="NVIDIA",  # EKS API reference, Nodegroup amiType
    bottlerocket_variant="NVIDIA",
    # the bundled k8s-device-plugin, `settings.kubelet-device-plugins.nvidia.enabled` (bottlerocket.dev settings)
    bottlerocket_bundled=("device-plugin", BOTTLEROCKET_NVIDIA_ENABLED),
    other_drivers=("compute-domain.nvidia.com",),
    # the driver's API (dra-driver-nvidia-gpu v0.4.1 `api/nvidia.com/resource/v1beta1`)
    opaque_configs={"gpu.nvidia.com": ("resource.nvidia.com/v1beta1",
                                       ("GpuConfig", "MigDeviceConfig", "VfioDeviceConfig")),
                    "compute-domain.nvidia.com": ("resource.nvidia.com/v1beta1",
                                                  ("ComputeDomainChannelConfig", "ComputeDomainDaemonConfig"))},
    karpenter_selectable=frozenset({"productName", "architecture", "brand", "cudaComputeCapability", "type"}),
    short_key="gpus",
    efa_alignment="gpu",
    pool_sharing=True,
    catalog_count="gpu_count",
    node_labels=_node_labels,
    bottlerocket_settings=_bottlerocket,
    sources=("EKS user guide, Manage hardware devices on Amazon EKS",
             "kubernetes-sigs/dra-driver-nvidia-gpu deployments/helm (DeviceClass gpu.nvidia.com)",
             "Karpenter v1.15 docs, tasks/dra (settings.awsFeatureGates.draNVIDIAGPU)"),
)
