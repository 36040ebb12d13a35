"""What the toolkit knows of a device family, as one record: the descriptor every family module fills in.

Rules, derivation, manifests and components ask a family's descriptor (`families.FAMILY[name]`) for
the facts it holds instead of naming the family; the configuration's `devices` keys are built from the
descriptors, and a family's own rules live in `core/rules/<family>.py`. The aim is that adding a family takes
a descriptor module, its vocabulary word and its tests. A family whose short shape is a count gets its claim
key from its descriptor; the claim shapes of their own (NVIDIA's `gpus`, `mig`), the pool sections (GPU
sharing, the EFA section keyed by its family's name), the catalogue's hardware fields and the simulated device
inventory are written for the shipped families.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eks_devices.core.vocabulary import AmiFamily, ChartKey, Family, GpuSharingStrategy, Mode

DROP = "<the claim's device keys>"
"""Where a fix of `auto_mode_claims` names the keys a claim must drop; the rule fills in the claim's own."""


@dataclass(frozen=True)
class NodeFacts:
    """What a family's node settings depend on: the pool's manager for the family and the rest of its shape."""

    manager: str
    mode: Mode
    ami: AmiFamily
    sharing: GpuSharingStrategy
    """The pool's `gpuSharing.strategy`."""
    replicas: int | None
    has_devices: bool
    """Whether any of the pool's instance types carries the family's devices."""


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
    """The Bottlerocket AMI type suffix (`BOTTLEROCKET_<arch>_<variant>`), if it has its own variant."""
    bottlerocket_bundled: tuple[str, str] | None = None
    """The manager the Bottlerocket variant bundles in the node image, and the settings path that switches it
    (on unless set to false): it serves the pool's devices without a release."""
    other_drivers: tuple[str, ...] = ()
    """Further DRA drivers of the family (beside `dra_driver`) whose classes claims may name."""
    opaque_configs: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    """Per driver, the opaque claim config it decodes: its apiVersion and kinds (anything else the driver
    refuses when it prepares the claim, after the Pod was scheduled)."""
    karpenter_selectable: frozenset[str] = frozenset()
    """The `dra_driver` attributes Karpenter knows before a node exists (selectors on others are undecided)."""
    short_key: str = ""
    """The claim short shape's key that asks for its devices (`claims.<name>.<short_key>`)."""
    claim_count_max: int | None = None
    """The most devices a claim's short shape counts under `short_key` (`{count: N}` or `{all: true}`), for a
    family whose short shape is a count; None where the family's short shape is its own (NVIDIA's `gpus`)."""
    efa_alignment: str | None = None
    """The `alignWith` word that aligns its devices with EFA on one PCIe root or device group, if any."""
    interfaces: bool = False
    """Whether its devices are network interfaces a node's launch template attaches, so that a pool's static
    interface layout caps how many a node has."""
    pool_sharing: bool = False
    """Whether a pool's `gpuSharing` (time-slicing, MIG, a shared claim) applies to its devices."""
    auto_mode_claims: tuple[str, str] | None = None
    """Where Auto Mode runs its devices on the device plugin only: why a claim on its DRA class finds no devices
    there, and how to ask for them instead; the rule puts the keys the claim must drop where `DROP` stands."""
    catalog_count: str = ""
    """The instance catalogue field that counts its devices on a type (`catalog.InstanceType`)."""
    node_labels: Callable[[NodeFacts], dict[str, str]] | None = None
    """Labels the family's software needs on a pool's nodes beyond the manager labels."""
    bottlerocket_settings: Callable[[NodeFacts], dict[str, Any]] | None = None
    """Bottlerocket settings the family's devices need on a pool's nodes (the user's settings win)."""
    sources: tuple[str, ...] = ()

    @property
    def drivers(self) -> tuple[str, ...]:
        """Every DRA driver name of the family, its whole-device driver first."""
        return (self.dra_driver, *self.other_drivers)
