"""What the NVIDIA DRA driver and DRANET publish on running instances of each type, as Karpenter's AWS
provider scraped them for its scheduling simulation (karpenter-provider-aws v1.15.0, and v1.15.2 for g7e,
`pkg/providers/drametadata`, `zz_generated_gpu_metadata.go` and `zz_generated_efa_metadata.go`): each PCIe
root by the name its devices publish as `resource.kubernetes.io/pcieRoot` (`pci0000:44`), the GPUs and EFAs
on it, the NUMA node DRANET gives that root's EFAs, the `memory` capacity each GPU publishes, and whether the
EFAs offer RDMA. Roots are listed in the order of their names, which is the order of the GPUs' and EFAs'
indices (`gpu-0` sits on the first root). `devices` takes a node's layout, root names included, from here
where Karpenter has one; elsewhere it models the layout from the device counts and names the roots by
position (`pci0000:10`, `pci0000:18`, ...), names no real node need publish. A layout is the hardware's, so
it stays when a release drops the type (v1.15.2 drops g6f and gr6f); which release carries which types, and
where a later scrape differs (p4d's `memory`), `karpenter_metadata` says. The e2e tier holds this table against
each modelled release's module (`tests/e2e/test_device_inventory.py`: every root's name, devices and NUMA
node), so a Karpenter upgrade that changes them is noticed.

Worth knowing from them: on g6 and g6e no GPU shares a PCIe root with an EFA, so a claim aligning GPUs and
EFAs on `resource.kubernetes.io/pcieRoot` never fits there; p5en and p6-b200 pair two GPUs with their EFAs;
the g4dn (but metal), g5, g5g and p3dn sizes put every GPU and EFA on one root, `pci0000:00`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Root:
    """One PCIe root: its name, the GPUs and EFAs on it, and the `dra.net/numaNode` of its EFAs where DRANET
    publishes one (it publishes none on most single-EFA types)."""

    name: str  # `resource.kubernetes.io/pcieRoot`, as Karpenter's metadata carries it
    gpus: int
    efas: int
    numa: int | None = None


def _on(names: str, gpus: int, efas: int, numa: int | None = None) -> tuple[Root, ...]:
    """Roots of one shape: one per space-separated name."""
    return tuple(Root(name, gpus, efas, numa) for name in names.split())


@dataclass(frozen=True)
class Layout:
    roots: tuple[Root, ...]  # in the order of their names
    gpu_memory: str  # the `memory` capacity of each GPU, as the driver publishes what NVML reports
    efa_rdma: bool = True  # the EFAs' `dra.net/rdma` (g4dn.metal's EFA offers none)

    @property
    def gpus(self) -> int:
        return sum(root.gpus for root in self.roots)

    @property
    def efas(self) -> int:
        return sum(root.efas for root in self.roots)


# karpenter-provider-aws v1.15.0 pkg/providers/drametadata/zz_generated_gpu_metadata.go (GPUs: roots, memory)
# and zz_generated_efa_metadata.go (EFAs: roots, numaNode, rdma), GPUMetadataByInstanceType and
# EFAMetadataByInstanceType
LAYOUTS: dict[str, Layout] = {
    "g4dn.12xlarge": Layout(_on("pci0000:00", 4, 1), "15Gi"),
    "g4dn.16xlarge": Layout(_on("pci0000:00", 1, 1), "15Gi"),
    "g4dn.2xlarge": Layout(_on("pci0000:00", 1, 0), "15Gi"),
    "g4dn.4xlarge": Layout(_on("pci0000:00", 1, 0), "15Gi"),
    "g4dn.8xlarge": Layout(_on("pci0000:00", 1, 1), "15Gi"),
    "g4dn.metal": Layout(_on("pci0000:17 pci0000:34", 2, 0) + _on("pci0000:c2", 0, 1, 1)
                         + _on("pci0000:e6 pci0000:f3", 2, 0), "15Gi", efa_rdma=False),
    "g4dn.xlarge": Layout(_on("pci0000:00", 1, 0), "15Gi"),
    "g5.12xlarge": Layout(_on("pci0000:00", 4, 1), "23028Mi"),
    "g5.16xlarge": Layout(_on("pci0000:00", 1, 1), "23028Mi"),
    "g5.24xlarge": Layout(_on("pci0000:00", 4, 1), "23028Mi"),
    "g5.2xlarge": Layout(_on("pci0000:00", 1, 0), "23028Mi"),
    "g5.48xlarge": Layout(_on("pci0000:00", 8, 1), "23028Mi"),
    "g5.4xlarge": Layout(_on("pci0000:00", 1, 0), "23028Mi"),
    "g5.8xlarge": Layout(_on("pci0000:00", 1, 1), "23028Mi"),
    "g5.xlarge": Layout(_on("pci0000:00", 1, 0), "23028Mi"),
    "g5g.16xlarge": Layout(_on("pci0000:00", 2, 0), "15Gi"),
    "g5g.2xlarge": Layout(_on("pci0000:00", 1, 0), "15Gi"),
    "g5g.4xlarge": Layout(_on("pci0000:00", 1, 0), "15Gi"),
    "g5g.8xlarge": Layout(_on("pci0000:00", 1, 0), "15Gi"),
    "g5g.metal": Layout(_on("pci0002:00", 2, 0), "16Gi"),
    "g5g.xlarge": Layout(_on("pci0000:00", 1, 0), "15Gi"),
    "g6.12xlarge": Layout(_on("pci0000:24", 0, 1) + _on("pci0000:37 pci0000:39 pci0000:3b pci0000:3d", 1, 0),
                          "23034Mi"),
    "g6.16xlarge": Layout(_on("pci0000:34", 0, 1) + _on("pci0000:4c", 1, 0), "23034Mi"),
    "g6.24xlarge": Layout(_on("pci0000:44", 0, 1) + _on("pci0000:5e pci0000:60 pci0000:62 pci0000:64", 1, 0),
                          "23034Mi"),
    "g6.2xlarge": Layout(_on("pci0000:30", 1, 0), "23034Mi"),
    "g6.48xlarge": Layout(_on("pci0000:84", 0, 1, 0) + _on("pci0000:9e pci0000:a0 pci0000:a2 pci0000:a4 pci0000:ad "
                                                           "pci0000:af pci0000:b1 pci0000:b3", 1, 0), "23034Mi"),
    "g6.4xlarge": Layout(_on("pci0000:34", 1, 0), "23034Mi"),
    "g6.8xlarge": Layout(_on("pci0000:24", 0, 1) + _on("pci0000:35", 1, 0), "23034Mi"),
    "g6.xlarge": Layout(_on("pci0000:30", 1, 0), "23034Mi"),
    "g6e.12xlarge": Layout(_on("pci0000:24", 0, 1) + _on("pci0000:37 pci0000:39 pci0000:3b pci0000:3d", 1, 0),
                           "46068Mi"),
    "g6e.16xlarge": Layout(_on("pci0000:34", 0, 1) + _on("pci0000:4c", 1, 0), "46068Mi"),
    "g6e.24xlarge": Layout(_on("pci0000:44", 0, 2) + _on("pci0000:62 pci0000:64 pci0000:66 pci0000:68", 1, 0),
                           "46068Mi"),
    "g6e.2xlarge": Layout(_on("pci0000:2f", 1, 0), "46068Mi"),
    "g6e.48xlarge": Layout(_on("pci0000:84", 0, 2, 0) + _on("pci0000:9d pci0000:9f pci0000:a1 pci0000:a3", 1, 0)
                           + _on("pci0000:a5", 0, 2, 1) + _on("pci0000:c5 pci0000:c7 pci0000:c9 pci0000:cb", 1, 0),
                           "46068Mi"),
    "g6e.4xlarge": Layout(_on("pci0000:33", 1, 0), "46068Mi"),
    "g6e.8xlarge": Layout(_on("pci0000:24", 0, 1) + _on("pci0000:35", 1, 0), "46068Mi"),
    "g6e.xlarge": Layout(_on("pci0000:2f", 1, 0), "46068Mi"),
    "g6f.2xlarge": Layout(_on("pci0000:30", 1, 0), "6Gi"),  # a GPU partition publishes its vGPU profile's memory
    "g6f.4xlarge": Layout(_on("pci0000:34", 1, 0), "12Gi"),
    "g6f.large": Layout(_on("pci0000:30", 1, 0), "3Gi"),
    "g6f.xlarge": Layout(_on("pci0000:30", 1, 0), "3Gi"),
    # v1.15.2: each GPU pair shares its root with an EFA (from the 8xlarge up)
    "g7e.12xlarge": Layout(_on("pci0000:24", 2, 1), "95Gi"),
    "g7e.24xlarge": Layout(_on("pci0000:44 pci0000:55", 2, 1), "95Gi"),
    "g7e.2xlarge": Layout(_on("pci0000:24", 1, 0), "95Gi"),
    "g7e.48xlarge": Layout(_on("pci0000:84 pci0000:95", 2, 1, 0) + _on("pci0000:a6 pci0000:b7", 2, 1, 1), "95Gi"),
    "g7e.4xlarge": Layout(_on("pci0000:24", 1, 0), "95Gi"),
    "g7e.8xlarge": Layout(_on("pci0000:24", 1, 1), "95Gi"),
    "gr6.4xlarge": Layout(_on("pci0000:34", 1, 0), "23034Mi"),
    "gr6.8xlarge": Layout(_on("pci0000:24", 0, 1) + _on("pci0000:35", 1, 0), "23034Mi"),
    "gr6f.4xlarge": Layout(_on("pci0000:34", 1, 0), "12Gi"),
    "p3dn.24xlarge": Layout(_on("pci0000:00", 8, 1), "32Gi"),
    "p4d.24xlarge": Layout(_on("pci0000:10 pci0000:20", 2, 1, 0) + _on("pci0000:90 pci0000:a0", 2, 1, 1), "40320Mi"),
    "p4de.24xlarge": Layout(_on("pci0000:10 pci0000:20", 2, 1, 0) + _on("pci0000:90 pci0000:a0", 2, 1, 1), "80Gi"),
    "p5.48xlarge": Layout(_on("pci0000:44 pci0000:55 pci0000:66 pci0000:77", 1, 4, 0)
                          + _on("pci0000:88 pci0000:99 pci0000:aa pci0000:bb", 1, 4, 1), "81152Mi"),
    "p5.4xlarge": Layout(_on("pci0000:24", 1, 1), "81152Mi"),
    "p5e.48xlarge": Layout(_on("pci0000:44 pci0000:55", 1, 4, 1) + _on("pci0000:66 pci0000:77", 1, 4, 0)
                           + _on("pci0000:88 pci0000:99", 1, 4, 3) + _on("pci0000:aa pci0000:bb", 1, 4, 2), "140Gi"),
    "p5en.48xlarge": Layout(_on("pci0000:44 pci0000:5d", 2, 4, 0) + _on("pci0000:76 pci0000:8f", 2, 4, 1), "140Gi"),
    "p6-b200.48xlarge": Layout(_on("pci0000:44 pci0000:55", 2, 2, 0) + _on("pci0000:66 pci0000:79", 2, 2, 1),
                               "182784Mi"),
    "p6-b300.48xlarge": Layout(_on("pci0000:4b pci0000:5a pci0000:69 pci0000:78", 1, 2, 0)
                               + _on("pci0000:87 pci0000:96 pci0000:a5 pci0000:b4", 1, 2, 1), "268Gi"),
}
