"""The upstream DeviceClasses: their names, the driver each selects and its CEL selector, as the
driver charts define them (dra-driver-nvidia-gpu from kubernetes-sigs/dra-driver-nvidia-gpu, aws-dranet,
the Neuron chart) and EKS Auto Mode names them. Claims, DeviceClasses the toolkit creates and the
claim fit all read these."""

from __future__ import annotations

RESOURCE_API_V1 = "resource.k8s.io/v1"
# DRAExtendedResource (KEP-5004): a DeviceClass's `extendedResourceName` lets a Pod's plain extended-resource
# request be allocated through DRA. Alpha and off in Kubernetes 1.34-1.35, beta and on in 1.36, GA in 1.37.
EXTENDED_RESOURCE_KUBERNETES = (1, 36)

GPU_CEL = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
MIG_CEL = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
VFIO_CEL = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'"
CD_DAEMON_CEL = ("device.driver == 'compute-domain.nvidia.com' && "
                 "device.attributes['compute-domain.nvidia.com'].type == 'daemon'")
CD_CHANNEL_CEL = ("device.driver == 'compute-domain.nvidia.com' && "
                  "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
                  "device.attributes['compute-domain.nvidia.com'].id == 0")
EFA_CEL = ("device.driver == \"dra.net\" && "
           "device.attributes[\"dra.net\"].pciDevice == 'Elastic Fabric Adapter (EFA)'")
NEURON_CEL = 'device.driver == "neuron.aws.com"'

# Upstream classes an extra (toolkit-named) class may narrow: (driver, CEL).
BASE_CLASSES: dict[str, tuple[str, str]] = {
    "gpu.nvidia.com": ("gpu.nvidia.com", GPU_CEL),
    "mig.nvidia.com": ("gpu.nvidia.com", MIG_CEL),
    "efa.networking.k8s.aws": ("dra.net", EFA_CEL),
    "neuron.aws.com": ("neuron.aws.com", NEURON_CEL),
}
RESOURCE_API_V1 = "resource.k8s.io/v1"

GPU_CLASS = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
EFA_CLASS = "efa.networking.k8s.aws"
NEURON_CLASS = "neuron.aws.com"
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
# The classes Auto Mode's built-in drivers can serve (NVIDIA GPUs and EFA; no MIG, VFIO, ComputeDomains or Neuron
# through DRA: EKS user guide, "Manage hardware devices on Amazon EKS"); the toolkit creates them there.
AUTO_MODE_CLASSES = (GPU_CLASS, EFA_CLASS)
# The upstream DeviceClasses and the driver each selects (dra-driver-nvidia-gpu 0.4.1, aws-dranet 1.0.0 and
# neuron-helm-chart 1.10.0 charts).
CLASS_DRIVERS = {
    GPU_CLASS: "gpu.nvidia.com", MIG_CLASS: "gpu.nvidia.com", "vfio.gpu.nvidia.com": "gpu.nvidia.com",
    CHANNEL_CLASS: "compute-domain.nvidia.com", "compute-domain-daemon.nvidia.com": "compute-domain.nvidia.com",
    EFA_CLASS: "dra.net", NEURON_CLASS: "neuron.aws.com",
}

# DeviceClass names the driver charts (and, in Auto Mode, the toolkit) use: extra classes take other names.
UPSTREAM_DEVICE_CLASSES: tuple[str, ...] = (
    "gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com", "compute-domain-daemon.nvidia.com",
    "compute-domain-default-channel.nvidia.com", "efa.networking.k8s.aws", "neuron.aws.com",
)
