"""Accelerated instance types: GPUs, EFA interfaces, Neuron devices, and DRA metadata coverage.

Hardware figures come from the committed snapshot of EC2 `DescribeInstanceTypes`
(`components/data/instance_types.json`, written by `eks-devices catalog refresh`). The DRA
coverage facts come from the EKS User Guide page "Manage hardware devices on Amazon EKS" (Auto Mode, kept here
beside the hardware it qualifies) and Karpenter's AWS provider, per release (`karpenter_metadata`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from eks_devices.core.families import FAMILY
from eks_devices.core.knowledge import karpenter_metadata
from eks_devices.core.knowledge.catalog_refresh import SNAPSHOT

# Auto Mode has no DRA device metadata for g7e (EKS-DM "g7e is not supported").
AUTO_MODE_DRA_UNSUPPORTED_FAMILIES: frozenset[str] = frozenset({"g7e"})
# GPU models with Multi-Instance GPU (NVIDIA MIG user guide, supported GPUs).
MIG_GPU_MODELS: frozenset[str] = frozenset(
    {"NVIDIA A100", "NVIDIA H100", "NVIDIA H200", "NVIDIA B200", "NVIDIA B300", "NVIDIA GB200",
     "NVIDIA RTX PRO Server 6000"}
)


@dataclass(frozen=True)
class InstanceType:
    """One EC2 instance type and the accelerated hardware it carries."""

    name: str
    architecture: str  # x86_64 | arm64
    gpu_count: int
    gpu_model: str | None
    gpu_memory_mib: int | None
    gpu_partition: float | None  # each GPU device is this fraction of one GPU (g6f, gr6f); None: whole GPUs
    neuron_count: int
    neuron_model: str | None
    efa_supported: bool
    max_efa_interfaces: int
    network_cards: int
    efa_cards: tuple[int, ...] | None  # network cards that take an EFA; None where the sources do not say
    source: str

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def has_nvidia(self) -> bool:
        return self.gpu_count > 0

    @property
    def has_neuron(self) -> bool:
        return self.neuron_count > 0

    @property
    def has_efa(self) -> bool:
        return self.efa_supported and self.max_efa_interfaces > 0

    @property
    def mig_capable(self) -> bool:
        return self.gpu_model in MIG_GPU_MODELS

    @property
    def karpenter_dra_metadata(self) -> bool:
        """Karpenter at the chart's pinned release can simulate DRA claims against this type (dynamic
        provisioning); a stack's own release is asked with `karpenter_metadata.for_version`."""
        return karpenter_metadata.pinned().launchable(self)

    @property
    def auto_mode_dra_metadata(self) -> bool:
        """Auto Mode can launch this type for NVIDIA / EFA DRA claims."""
        return self.family not in AUTO_MODE_DRA_UNSUPPORTED_FAMILIES and not self.has_neuron

    def count(self, family: str) -> int:
        """How many devices of a device family the type carries (its descriptor names the field)."""
        return int(getattr(self, FAMILY[family].catalog_count))  # type: ignore[index]

    def has(self, family: str) -> bool:
        """Whether the type carries devices of a device family."""
        return self.count(family) > 0


@cache
def instance_types() -> dict[str, InstanceType]:
    """All catalogued instance types by name."""
    entries = json.loads(SNAPSHOT.read_text())
    return {e["name"]: InstanceType(**{**e, "efa_cards": None if e["efa_cards"] is None else tuple(e["efa_cards"])})
            for e in entries}


def get(name: str) -> InstanceType | None:
    return instance_types().get(name)
