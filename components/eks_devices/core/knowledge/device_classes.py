"""The upstream DeviceClasses: their names, the driver each selects and its CEL selector, as the
driver charts define them (each chart descriptor's `device_classes`) and EKS Auto Mode names them.
Claims, DeviceClasses the toolkit creates and the claim fit all read these."""

from __future__ import annotations

from eks_devices.core.families import DESCRIPTORS, EFA, NEURON, NVIDIA
from eks_devices.core.knowledge.charts import CHARTS
from eks_devices.core.knowledge.charts.nvidia_dra_driver import (  # noqa: F401  (re-exported: the driver's classes)
    CD_CHANNEL_CEL,
    CD_DAEMON_CEL,
    CHANNEL_CLASS,
    MIG_CEL,
    MIG_CLASS,
    VFIO_CEL,
)
from eks_devices.core.names import RESOURCE_API_V1  # noqa: F401  (re-exported)

# DRAExtendedResource (KEP-5004): a DeviceClass's `extendedResourceName` lets a Pod's plain extended-resource
# request be allocated through DRA. Alpha and off in Kubernetes 1.34-1.35, beta and on in 1.36, GA in 1.37.
EXTENDED_RESOURCE_KUBERNETES = (1, 36)

# The whole-device classes are the families' own (`core/families/`)
GPU_CEL, EFA_CEL, NEURON_CEL = (d.device_class_cel for d in (NVIDIA, EFA, NEURON))
GPU_CLASS, EFA_CLASS, NEURON_CLASS = (d.device_class for d in (NVIDIA, EFA, NEURON))
# Upstream classes an extra (toolkit-named) class may narrow: (driver, CEL).
BASE_CLASSES: dict[str, tuple[str, str]] = {
    GPU_CLASS: (NVIDIA.dra_driver, GPU_CEL), MIG_CLASS: (NVIDIA.dra_driver, MIG_CEL),
    **{d.device_class: (d.dra_driver, d.device_class_cel) for d in DESCRIPTORS if d is not NVIDIA},
}
# The classes Auto Mode's built-in drivers can serve (NVIDIA GPUs and EFA; no MIG, VFIO, ComputeDomains or Neuron
# through DRA: EKS user guide, "Manage hardware devices on Amazon EKS"); the toolkit creates them there.
AUTO_MODE_CLASSES = tuple(d.device_class for d in DESCRIPTORS if d.auto_mode_dra)
# The upstream DeviceClasses the driver charts create, and the driver each selects.
CLASS_DRIVERS = {c.name: c.driver for chart in CHARTS.values() for c in chart.device_classes}

# DeviceClass names the driver charts (and, in Auto Mode, the toolkit) use: extra classes take other names.
UPSTREAM_DEVICE_CLASSES: tuple[str, ...] = tuple(CLASS_DRIVERS)
