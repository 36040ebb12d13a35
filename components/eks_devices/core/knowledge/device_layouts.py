"""What the NVIDIA DRA driver and DRANET publish on running instances of each type, as Karpenter's AWS
provider scraped them for its scheduling simulation (karpenter-provider-aws v1.15.0
`pkg/providers/drametadata`, `zz_generated_gpu_metadata.go` and `zz_generated_efa_metadata.go`): how many
GPUs and EFAs share each PCIe root, the NUMA node DRANET gives that root's EFAs, the `memory` capacity each
GPU publishes, and whether the EFAs offer RDMA. `devices` takes a node's layout from here where Karpenter
has one and models it from the device counts elsewhere. The e2e tier holds this table against the pinned
module itself (`tests/e2e/test_device_inventory.py`), so a Karpenter upgrade that changes them is noticed.

Worth knowing from them: on g6 and g6e no GPU shares a PCIe root with an EFA, so a claim aligning GPUs and
EFAs on `resource.kubernetes.io/pcieRoot` never fits there; p5en and p6-b200 pair two GPUs with their EFAs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    # per PCIe root, in the roots' order: (GPUs, EFAs) on it, and the `dra.net/numaNode` of its EFAs where
    # DRANET publishes one (it publishes none on most single-EFA types)
    roots: tuple[tuple[int, ...], ...]
    gpu_memory: str  # the `memory` capacity of each GPU, as the driver publishes what NVML reports
    efa_rdma: bool = True  # the EFAs' `dra.net/rdma` (g4dn.metal's EFA offers none)

    @property
    def gpus(self) -> int:
        return sum(root[0] for root in self.roots)

    @property
    def efas(self) -> int:
        return sum(root[1] for root in self.roots)

    def numa_node(self, root: int) -> int | None:
        """The NUMA node of the EFAs on the `root`th PCIe root, None where DRANET publishes none."""
        return self.roots[root][2] if len(self.roots[root]) > 2 else None


LAYOUTS: dict[str, Layout] = {
    "g4dn.12xlarge": Layout(((4, 1),), "15Gi"),
    "g4dn.16xlarge": Layout(((1, 1),), "15Gi"),
    "g4dn.2xlarge": Layout(((1, 0),), "15Gi"),
    "g4dn.4xlarge": Layout(((1, 0),), "15Gi"),
    "g4dn.8xlarge": Layout(((1, 1),), "15Gi"),
    "g4dn.metal": Layout(((2, 0),) * 2 + ((0, 1, 1),) + ((2, 0),) * 2, "15Gi", efa_rdma=False),
    "g4dn.xlarge": Layout(((1, 0),), "15Gi"),
    "g5.12xlarge": Layout(((4, 1),), "23028Mi"),
    "g5.16xlarge": Layout(((1, 1),), "23028Mi"),
    "g5.24xlarge": Layout(((4, 1),), "23028Mi"),
    "g5.2xlarge": Layout(((1, 0),), "23028Mi"),
    "g5.48xlarge": Layout(((8, 1),), "23028Mi"),
    "g5.4xlarge": Layout(((1, 0),), "23028Mi"),
    "g5.8xlarge": Layout(((1, 1),), "23028Mi"),
    "g5.xlarge": Layout(((1, 0),), "23028Mi"),
    "g5g.16xlarge": Layout(((2, 0),), "15Gi"),
    "g5g.2xlarge": Layout(((1, 0),), "15Gi"),
    "g5g.4xlarge": Layout(((1, 0),), "15Gi"),
    "g5g.8xlarge": Layout(((1, 0),), "15Gi"),
    "g5g.metal": Layout(((2, 0),), "16Gi"),
    "g5g.xlarge": Layout(((1, 0),), "15Gi"),
    "g6.12xlarge": Layout(((0, 1),) + ((1, 0),) * 4, "23034Mi"),
    "g6.16xlarge": Layout(((0, 1), (1, 0)), "23034Mi"),
    "g6.24xlarge": Layout(((0, 1),) + ((1, 0),) * 4, "23034Mi"),
    "g6.2xlarge": Layout(((1, 0),), "23034Mi"),
    "g6.48xlarge": Layout(((0, 1, 0),) + ((1, 0),) * 8, "23034Mi"),
    "g6.4xlarge": Layout(((1, 0),), "23034Mi"),
    "g6.8xlarge": Layout(((0, 1), (1, 0)), "23034Mi"),
    "g6.xlarge": Layout(((1, 0),), "23034Mi"),
    "g6e.12xlarge": Layout(((0, 1),) + ((1, 0),) * 4, "46068Mi"),
    "g6e.16xlarge": Layout(((0, 1), (1, 0)), "46068Mi"),
    "g6e.24xlarge": Layout(((0, 2),) + ((1, 0),) * 4, "46068Mi"),
    "g6e.2xlarge": Layout(((1, 0),), "46068Mi"),
    "g6e.48xlarge": Layout(((0, 2, 0),) + ((1, 0),) * 4 + ((0, 2, 1),) + ((1, 0),) * 4, "46068Mi"),
    "g6e.4xlarge": Layout(((1, 0),), "46068Mi"),
    "g6e.8xlarge": Layout(((0, 1), (1, 0)), "46068Mi"),
    "g6e.xlarge": Layout(((1, 0),), "46068Mi"),
    "g6f.2xlarge": Layout(((1, 0),), "6Gi"),  # a GPU partition publishes its vGPU profile's memory
    "g6f.4xlarge": Layout(((1, 0),), "12Gi"),
    "g6f.large": Layout(((1, 0),), "3Gi"),
    "g6f.xlarge": Layout(((1, 0),), "3Gi"),
    "gr6.4xlarge": Layout(((1, 0),), "23034Mi"),
    "gr6.8xlarge": Layout(((0, 1), (1, 0)), "23034Mi"),
    "gr6f.4xlarge": Layout(((1, 0),), "12Gi"),
    "p3dn.24xlarge": Layout(((8, 1),), "32Gi"),
    "p4d.24xlarge": Layout(((2, 1, 0),) * 2 + ((2, 1, 1),) * 2, "40320Mi"),
    "p4de.24xlarge": Layout(((2, 1, 0),) * 2 + ((2, 1, 1),) * 2, "80Gi"),
    "p5.48xlarge": Layout(((1, 4, 0),) * 4 + ((1, 4, 1),) * 4, "81152Mi"),
    "p5.4xlarge": Layout(((1, 1),), "81152Mi"),
    "p5e.48xlarge": Layout(((1, 4, 1),) * 2 + ((1, 4, 0),) * 2 + ((1, 4, 3),) * 2 + ((1, 4, 2),) * 2, "140Gi"),
    "p5en.48xlarge": Layout(((2, 4, 0),) * 2 + ((2, 4, 1),) * 2, "140Gi"),
    "p6-b200.48xlarge": Layout(((2, 2, 0),) * 2 + ((2, 2, 1),) * 2, "182784Mi"),
    "p6-b300.48xlarge": Layout(((1, 2, 0),) * 4 + ((1, 2, 1),) * 4, "268Gi"),
}
