"""The upstream DeviceClasses: their names, the driver each selects and its CEL selector, as the
driver charts define them (dra-driver-nvidia-gpu from kubernetes-sigs/dra-driver-nvidia-gpu, aws-dranet,
the Neuron chart) and EKS Auto Mode names them. Claims, DeviceClasses the toolkit creates and the
claim fit all read these."""

from __future__ import annotations

from eks_devices.core.families import DESCRIPTORS, EFA, NEURON, NVIDIA

RESOURCE_API_V1 = "resource.k8s.io/v1"
# DRAExtendedResource (KEP-5004): a DeviceClass's `extendedResourceName` lets a Pod's plain extended-resource
# request be allocated through DRA. Alpha and off in Kubernetes 1.34-1.35, beta and on in 1.36, GA in 1.37.
EXTENDED_RESOURCE_KUBERNETES = (1, 36)

# The whole-device classes are the families' own (`core/families/`); the NVIDIA driver's other device types:
GPU_CEL, EFA_CEL, NEURON_CEL = (d.device_class_cel for d in (NVIDIA, EFA, NEURON))
MIG_CEL = GPU_CEL.replace("== 'gpu'", "== 'mig'")
VFIO_CEL = GPU_CEL.replace("== 'gpu'", "== 'vfio'")
CD_DAEMON_CEL = ("device.driver == 'compute-domain.nvidia.com' && "
                 "device.attributes['compute-domain.nvidia.com'].type == 'daemon'")
CD_CHANNEL_CEL = ("device.driver == 'compute-domain.nvidia.com' && "
                  "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
                  "device.attributes['compute-domain.nvidia.com'].id == 0")

GPU_CLASS, EFA_CLASS, NEURON_CLASS = (d.device_class for d in (NVIDIA, EFA, NEURON))
MIG_CLASS = "mig.nvidia.com"
# Upstream classes an extra (toolkit-named) class may narrow: (driver, CEL).
BASE_CLASSES: dict[str, tuple[str, str]] = {
    GPU_CLASS: (NVIDIA.dra_driver, GPU_CEL), MIG_CLASS: (NVIDIA.dra_driver, MIG_CEL),
    **{d.device_class: (d.dra_driver, d.device_class_cel) for d in DESCRIPTORS if d is not NVIDIA},
}
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
# The classes Auto Mode's built-in drivers can serve (NVIDIA GPUs and EFA; no MIG, VFIO, ComputeDomains or Neuron
# through DRA: EKS user guide, "Manage hardware devices on Amazon EKS"); the toolkit creates them there.
AUTO_MODE_CLASSES = tuple(d.device_class for d in DESCRIPTORS if d.auto_mode_dra)
# The upstream DeviceClasses and the driver each selects (dra-driver-nvidia-gpu 0.4.1, aws-dranet 1.0.0 and
# neuron-helm-chart 1.10.0 charts).
CLASS_DRIVERS = {
    GPU_CLASS: NVIDIA.dra_driver, MIG_CLASS: NVIDIA.dra_driver, "vfio.gpu.nvidia.com": NVIDIA.dra_driver,
    CHANNEL_CLASS: "compute-domain.nvidia.com", "compute-domain-daemon.nvidia.com": "compute-domain.nvidia.com",
    EFA_CLASS: EFA.dra_driver, NEURON_CLASS: NEURON.dra_driver,
}

# DeviceClass names the driver charts (and, in Auto Mode, the toolkit) use: extra classes take other names.
UPSTREAM_DEVICE_CLASSES: tuple[str, ...] = (
    GPU_CLASS, MIG_CLASS, "vfio.gpu.nvidia.com", "compute-domain-daemon.nvidia.com", CHANNEL_CLASS, EFA_CLASS,
    NEURON_CLASS,
)
