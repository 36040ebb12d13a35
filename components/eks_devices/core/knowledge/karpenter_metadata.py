"""Which instance types Karpenter launches for a DRA claim, per release of its AWS provider.

Karpenter simulates a pending Pod's ResourceClaims against device metadata its AWS provider scraped from
running instances and compiled in (`pkg/providers/drametadata`, `zz_generated_gpu_metadata.go`
`GPUMetadataByInstanceType` and `zz_generated_efa_metadata.go` `EFAMetadataByInstanceType`); a type without
an entry gets no devices, so Karpenter never launches it for a claim. That metadata changes between
releases, so the model takes it from the release the stack runs (`cluster.karpenter.version`): one entry
per release the toolkit knows, each written as what changed from the release before it. The layouts the
entries share live in `device_layouts`; an entry names only where its scrape differs from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol

from eks_devices.core.knowledge import versions
from eks_devices.core.knowledge.charts.karpenter import KARPENTER


class InstanceType(Protocol):
    """What the metadata asks of a catalogue entry (`catalog.InstanceType`, which imports this module)."""

    family: str

    def has(self, family: str) -> bool: ...


# Which of the provider's two tables serves a device family; the other families (Neuron) have none.
TABLES = {"nvidia": "GPUMetadataByInstanceType", "efa": "EFAMetadataByInstanceType"}


@dataclass(frozen=True)
class Metadata:
    """One release's DRA device metadata, by instance family (each family's types all have an entry or none
    of the catalogue's do, which `tests/e2e/test_device_inventory.py` holds against the module)."""

    release: str
    source: str  # the upstream files and tag the entry was read from
    gpu_families: frozenset[str]  # GPUMetadataByInstanceType
    efa_families: frozenset[str]  # EFAMetadataByInstanceType
    # families whose EFA entries carry only pciDevice, pciVendor and rdma: no PCIe root, no NUMA node
    bare_efa_families: frozenset[str] = frozenset()
    # per type, the `memory` its GPUs carry where this scrape differs from `device_layouts`
    gpu_memory: dict[str, str] = field(default_factory=dict)

    def covers(self, itype: InstanceType, family: str) -> bool:
        """Whether the release carries metadata for the type's devices of one device family."""
        families = {"nvidia": self.gpu_families, "efa": self.efa_families}.get(family, frozenset())
        return itype.has(family) and itype.family in families

    def launchable(self, itype: InstanceType) -> bool:
        """Whether the release carries any DRA metadata for the type (so Karpenter may launch it for a claim)."""
        return any(self.covers(itype, family) for family in TABLES)

    def bare_efas(self, itype: InstanceType) -> bool:
        """Whether the type's EFAs carry no PCIe root or NUMA node in this release's metadata."""
        return itype.family in self.bare_efa_families


# aws/karpenter-provider-aws v1.15.0 pkg/providers/drametadata/zz_generated_gpu_metadata.go and
# zz_generated_efa_metadata.go: GPU entries for these families, EFA entries for those of their types with EFA
_GPU_V1_15_0 = frozenset({"g4dn", "g5", "g5g", "g6", "g6e", "g6f", "gr6", "gr6f",
                          "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300"})
V1_15_0 = Metadata("1.15.0", "aws/karpenter-provider-aws v1.15.0 pkg/providers/drametadata "
                   "(zz_generated_gpu_metadata.go, zz_generated_efa_metadata.go)", _GPU_V1_15_0, _GPU_V1_15_0)
# v1.15.1: both files are byte-identical to v1.15.0's
V1_15_1 = replace(V1_15_0, release="1.15.1", source=V1_15_0.source.replace("v1.15.0", "v1.15.1"))
# v1.15.2 (the same files): GPU entries for g7 and g7e and none for the GPU partitions g6f and gr6f any more;
# EFA entries for g7/g7e and for these families too, each EFA bare (no pcieRoot, no numaNode); p4d.24xlarge's
# GPUs carry `memory: 40Gi` where v1.15.0's carried 40320Mi
_EFA_ONLY_V1_15_2 = frozenset({
    "c5n", "c6a", "c6gn", "c6i", "c6id", "c6in", "c7a", "c7g", "c7gd", "c7gn", "c7i", "c8a", "c8g", "c8gb", "c8gd",
    "c8gn", "c8i", "c8ib", "c8id", "c8in", "c9g", "c9gd", "dl2q", "f2", "hpc6a", "hpc6id", "hpc7a", "hpc7g", "hpc8a",
    "i3en", "i4g", "i4i", "i7i", "i7ie", "i8g", "i8ge", "im4gn", "inf1", "m5dn", "m5n", "m5zn", "m6a", "m6i", "m6id",
    "m6idn", "m6in", "m7a", "m7g", "m7gd", "m7i", "m8a", "m8azn", "m8g", "m8gb", "m8gd", "m8gn", "m8i", "m8ib",
    "m8id", "m8idb", "m8idn", "m8in", "m9g", "m9gd", "r5dn", "r5n", "r6a", "r6i", "r6id", "r6idn", "r6in", "r7a",
    "r7g", "r7gd", "r7i", "r7iz", "r8a", "r8g", "r8gb", "r8gd", "r8gn", "r8i", "r8ib", "r8id", "r8idb", "r8idn",
    "r8in", "r9g", "r9gd", "trn1", "trn1n", "trn2", "u7i-12tb", "u7i-6tb", "u7i-8tb", "u7in-16tb", "u7in-24tb",
    "u7in-32tb", "vt1", "x2idn", "x2iedn", "x2iezn", "x8aedz", "x8g", "x8i"})
_GPU_V1_15_2 = _GPU_V1_15_0 - {"g6f", "gr6f"} | {"g7", "g7e"}
V1_15_2 = replace(V1_15_0, release="1.15.2", source=V1_15_0.source.replace("v1.15.0", "v1.15.2"),
                  gpu_families=_GPU_V1_15_2, efa_families=_GPU_V1_15_2 | _EFA_ONLY_V1_15_2,
                  bare_efa_families=_EFA_ONLY_V1_15_2, gpu_memory={"p4d.24xlarge": "40Gi"})

RELEASES: dict[str, Metadata] = {m.release: m for m in (V1_15_0, V1_15_1, V1_15_2)}


def for_version(version: str) -> Metadata:
    """The metadata of the release `version` names, or of the nearest release the toolkit knows: the newest
    one not newer than it, or the oldest for a version before them all (Karpenter before 1.15 launches
    nothing for a claim, which `resolve` says before any metadata is read)."""
    if version in RELEASES:
        return RELEASES[version]
    try:
        wanted = versions.semver(version)
    except ValueError:
        return RELEASES[max(RELEASES, key=versions.semver)]
    older = [r for r in RELEASES if versions.semver(r) <= wanted]
    return RELEASES[max(older, key=versions.semver)] if older else RELEASES[min(RELEASES, key=versions.semver)]


def pinned() -> Metadata:
    """The metadata of the Karpenter release the toolkit's chart pins."""
    return for_version(KARPENTER.version)
