"""NVIDIA GPUs: the NVIDIA DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu) or NVIDIA's device plugin."""

from __future__ import annotations

from eks_devices.core.families.base import DeviceFamily
from eks_devices.core.names import BOTTLEROCKET_NVIDIA_ENABLED

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
    sources=("EKS user guide, Manage hardware devices on Amazon EKS",
             "kubernetes-sigs/dra-driver-nvidia-gpu deployments/helm (DeviceClass gpu.nvidia.com)",
             "Karpenter v1.15 docs, tasks/dra (settings.awsFeatureGates.draNVIDIAGPU)"),
)
