"""What the toolkit knows of a device family, as one record: the descriptor every family module fills in.

Rules, derivation, manifests and components ask a family's descriptor (`families.FAMILY[name]`) for
the facts it holds instead of naming the family. The aim is that adding a family takes a descriptor
module, its vocabulary word and its tests; today the configuration models (one `devices` key per
family), the catalogue's hardware fields and the family-specific rules (EFA layouts, GPU sharing) still
name their families.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from eks_devices.core.vocabulary import ChartKey, Family


@dataclass(frozen=True)
class DeviceFamily:
    """One device family: its names, the software that runs it, and where each mode can run it with DRA."""

    name: Family
    title: str
    """How messages name the devices ("NVIDIA GPU")."""
    releases: Mapping[str, ChartKey]
    """The toolkit's Helm release per manager (`dra`, `device-plugin`)."""
    extended_resource: str
    """The resource its device plugin advertises (what Pods request without DRA)."""
    dra_driver: str
    """The DRA driver name its devices are published under (ResourceSlices, `device.driver` in CEL)."""
    device_class: str
    """The upstream DeviceClass claims for its whole devices name."""
    device_class_cel: str
    """That class's CEL selector, as the driver's chart (or, in Auto Mode, the toolkit) writes it."""
    dra_kubernetes: tuple[int, int]
    """The Kubernetes minor its DRA driver needs outside Auto Mode."""
    device_class_names_resource: bool = False
    """Whether that class names `extended_resource` as its `extendedResourceName` (KEP-5004), as the
    driver's chart renders it."""
    taint: str | None = None
    """The NoSchedule taint key the toolkit puts on pools whose devices of this family are managed."""
    auto_mode_label: bool = False
    """Whether EKS has an `eks.amazonaws.com/device-manager-<family>` label that selects Auto Mode's manager."""
    auto_mode_dra: bool = False
    """Whether Auto Mode runs this family's devices with DRA (else with its device plugin only)."""
    karpenter_gate: str | None = None
    """Its single DRA gate under Karpenter's `settings.awsFeatureGates` (covered by `settings.enableDRA`)."""
    al2023_variant: str | None = None
    """The EKS AL2023 AMI type suffix for nodes with its devices (`AL2023_<arch>_<variant>`), if it has its own."""
    al2023_architectures: tuple[str, ...] = ("x86_64", "arm64")
    """The architectures EKS publishes that AL2023 variant for."""
    bottlerocket_variant: str | None = None
    bottlerocket_bundled: tuple[str, str] | None = None
    """The manager the Bottlerocket variant bundles in the node image, and the settings path that switches it
    (on unless set to false): it serves the pool's devices without a release."""
    """The Bottlerocket AMI type suffix (`BOTTLEROCKET_<arch>_<variant>`), if it has its own variant."""
    sources: tuple[str, ...] = ()
