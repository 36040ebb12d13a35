"""The simulated device inventory each catalogued instance type publishes through DRA.

A DRA driver publishes a node's devices as ResourceSlices once the node runs; the fit check needs
them before any node exists, as Karpenter's DRA metadata does. This module derives them from the
instance catalogue, shaped as the real drivers publish them:

- NVIDIA (`gpu.nvidia.com`): `gpu-<minor>` devices with `type`, `uuid`, `productName`, `brand`,
  `architecture`, `cudaComputeCapability`, `driverVersion`, `cudaDriverVersion`,
  `resource.kubernetes.io/pciBusID`, `resource.kubernetes.io/pcieRoot` and a `memory` capacity — no
  `index` or `minor` attribute (kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1,
  `cmd/gpu-kubelet-plugin/deviceinfo.go` `GpuInfo.Attributes`). On a MIG pool each GPU publishes MIG
  devices of the pool's profile instead, with the parent's PCI attributes (`mig.go` `CommonAttributesMig`).
- DRANET (`dra.net`): every network interface, the primary ENA included; EFAs carry
  `dra.net/pciDevice = "Elastic Fabric Adapter (EFA)"`, `dra.net/rdma`, `dra.net/numaNode`,
  `dra.net/pciAddress`, `dra.net/pciVendor`, `resource.kubernetes.io/pcieRoot` and, on Trainium,
  `resource.aws.com/devicegroup{1,4,8,16}_id` (kubernetes-sigs/dranet v1.4.0 `pkg/apis/attributes.go`,
  `pkg/cloudprovider/aws/aws.go`; EKS User Guide EFA page).
- Neuron (`neuron.aws.com`): `neurondevice<i>` with `instanceType`, `neuronDriverVersion` and
  `resource.aws.com/devicegroup{1,4,8,16}_id` (aws-neuron-sdk `deploy/eks/dra.rst`, device names included).
- Device-group ids are strings, the same on a Neuron device and its EFA, as the lookup library both
  drivers use computes them (aws-neuron/connected-device-maps-over-efa-for-neuron v1.1.0
  `lookup/lookup.go`): `devicegroup1_id` is the PCI address of the device's EFA (on trn1.32xlarge two
  devices share one EFA, so they and it share the id), `devicegroup<N>_id` a hash of the EFAs of the
  device's group of N consecutive devices.

Topology figures and their sources (each is a modelling assumption where no source gives it):
- GPU ↔ EFA: where Karpenter scraped the devices of running instances of the type (`device_layouts`:
  the g4dn, g5, g5g, g6, g6e, p3dn, p4d, p4de, p5, p5e, p5en and p6 types), the PCIe roots with their real
  names (`pcieRoot`, e.g. `pci0000:44`), the GPUs and EFAs on each, the EFAs' `numaNode` and `rdma` and each
  GPU's `memory` are what it found. Elsewhere they are spread evenly over `min(GPUs, EFAs)` PCIe roots (an
  assumption from the counts), and without EFA each GPU has a root of its own; those roots are named by
  position (`pci0000:10`, `pci0000:18`, ...), so a selector naming a root cannot be judged there
  (`root_names_published`). The primary ENA's root (`pci0000:00`) is modelled on every type.
- Neuron ↔ EFA: device `i` belongs to group `i // N` for each group size N ≤ its device count
  (the Neuron DRA docs' connected subsets of 1, 4, 8, 16). EFAs are spread evenly over the devices:
  trn2.48xlarge and trn1n.32xlarge have one EFA per device (16 / 16), trn1.32xlarge one EFA per two
  consecutive devices (8 / 16) — the lookup library's `lookup/neuron/trn{1,1n,2}.json` tables.
- Published layouts (`PUBLISHED_TOPOLOGY`): the types `device_layouts` has and those Trainium types; a claim
  that fails only on a `layout_attribute` of another type is undetermined in the fit check (a warning), never
  an error.
- Memory: the NVIDIA driver publishes what NVML reports, a little below the nominal size (`device_layouts`);
  types Karpenter did not scrape use the EC2 `DescribeInstanceTypes` figure.
- Versions (`driverVersion` 580.82.7, `cudaDriverVersion` 13.0.0) are Karpenter's example values;
  the fit check never depends on them (Karpenter allows them in matchAttribute only).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from eks_devices.core.knowledge import catalog
from eks_devices.core.knowledge.device_layouts import LAYOUTS

NVIDIA_DRIVER = "gpu.nvidia.com"
COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"
DRANET_DRIVER = "dra.net"
NEURON_DRIVER = "neuron.aws.com"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
PCI_BUS_ID = "resource.kubernetes.io/pciBusID"
DEVICE_GROUP_SIZES = (1, 4, 8, 16)
EFA_PCI_DEVICE = "Elastic Fabric Adapter (EFA)"
ENA_PCI_DEVICE = "Elastic Network Adapter (ENA)"
SLICE_DEVICE_LIMIT = 128
# The layouts a source gives: the GPU types Karpenter scraped (`device_layouts`) and the Trainium
# Neuron-to-EFA pairings (connected-device-maps-over-efa-for-neuron v1.1.0 `lookup/neuron/*.json`); every
# other layout below is modelled from device counts.
PUBLISHED_TOPOLOGY = frozenset({*LAYOUTS, "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge"})


def topology_published(instance_type: str) -> bool:
    """Whether the instance type's GPU/Neuron-to-EFA layout comes from a source (not the model)."""
    return instance_type in PUBLISHED_TOPOLOGY


def root_names_published(instance_type: str) -> bool:
    """Whether the names of the type's GPU and EFA PCIe roots are those real nodes publish (Karpenter scraped
    them, `device_layouts`), so a selector naming a root (`pcieRoot == 'pci0000:44'`) can be judged."""
    return instance_type in LAYOUTS


def reads_root_name(expression: str) -> bool:
    """Whether a CEL selector reads a PCIe root's name (`device.attributes['resource.kubernetes.io'].pcieRoot`)."""
    return PCIE_ROOT.rsplit("/", 1)[1] in expression


def layout_attribute(name: str) -> bool:
    """Attributes whose values come from the modelled layout: the PCIe root and Neuron device groups."""
    return name == PCIE_ROOT or name.startswith("resource.aws.com/devicegroup")


def device_group(size: int) -> str:
    """The Neuron connected-subset attribute shared by Neuron devices and their EFAs."""
    return f"resource.aws.com/devicegroup{size}_id"


# productName as the NVIDIA driver reports it, per instance family (Karpenter `dra.md`,
# "Supported Instance Types"); families it does not list fall back to the catalogue's model.
PRODUCT_NAMES = {
    "g4dn": "Tesla T4", "g5": "NVIDIA A10G", "g5g": "NVIDIA T4G", "g6": "NVIDIA L4", "gr6": "NVIDIA L4",
    "g6e": "NVIDIA L40S", "p3dn": "Tesla V100-SXM2-32GB", "p4d": "NVIDIA A100-SXM4-40GB",
    "p4de": "NVIDIA A100-SXM4-80GB", "p5": "NVIDIA H100 80GB HBM3", "p5e": "NVIDIA H200",
    "p5en": "NVIDIA H200", "p6-b200": "NVIDIA B200", "p6-b300": "NVIDIA B300 SXM6 AC",
    "g7e": "NVIDIA RTX PRO 6000 Blackwell Server Edition",  # karpenter-provider-aws v1.15.2 drametadata
}
# A GPU partition's productName is its vGPU profile and differs by size (the same table).
PARTITION_PRODUCT_NAMES = {
    "g6f.large": "NVIDIA L4-3Q", "g6f.xlarge": "NVIDIA L4-3Q", "g6f.2xlarge": "NVIDIA L4-6Q",
    "g6f.4xlarge": "NVIDIA L4-12Q", "gr6f.4xlarge": "NVIDIA L4-12Q",
}
# architecture and CUDA compute capability per catalogue GPU model (NVIDIA's published figures).
GPU_GENERATIONS = {
    "NVIDIA T4": ("Turing", "7.5.0"), "NVIDIA T4g": ("Turing", "7.5.0"), "NVIDIA A10G": ("Ampere", "8.6.0"),
    "NVIDIA L4": ("Ada Lovelace", "8.9.0"), "NVIDIA L40S": ("Ada Lovelace", "8.9.0"),
    "NVIDIA V100": ("Volta", "7.0.0"), "NVIDIA A100": ("Ampere", "8.0.0"), "NVIDIA H100": ("Hopper", "9.0.0"),
    "NVIDIA H200": ("Hopper", "9.0.0"), "NVIDIA B200": ("Blackwell", "10.0.0"),
    "NVIDIA B300": ("Blackwell", "10.3.0"), "NVIDIA RTX PRO Server 6000": ("Blackwell", "12.0.0"),
}
DRIVER_VERSION = "580.82.7"
CUDA_DRIVER_VERSION = "13.0.0"
NEURON_DRIVER_VERSION = "2.24.7.0"
MIG_SLICES = 7  # compute slices of a MIG-capable GPU: `<g>g.<mem>gb` profiles fit 7 // g times


@dataclass(frozen=True)
class Device:
    """One published device: attributes and capacity in ResourceSlice spelling."""

    driver: str
    name: str
    attributes: dict[str, dict[str, Any]]  # name (driver-local or qualified) → {"string"|"int"|"bool"|"version": v}
    capacity: dict[str, str] = field(default_factory=dict)  # name → quantity
    allocations: int = 1  # claims that may hold it at once (consumable shares); 1 = exclusive

    def attribute(self, qualified: str) -> tuple[str, Any] | None:
        """The typed value of a fully qualified attribute (as `matchAttribute` names it), or None."""
        domain, _, name = qualified.rpartition("/")
        for key in (qualified, name if domain == self.driver else None):
            if key is not None and key in self.attributes:
                (kind, value), = self.attributes[key].items()
                return kind, value
        return None

    def cel(self) -> dict[str, Any]:
        """The device as CEL sees it (`eks_devices.core.cel.evaluate`'s device shape)."""
        attributes: dict[str, dict[str, Any]] = {}
        for key, typed in self.attributes.items():
            domain, _, name = key.rpartition("/")
            (kind, value), = typed.items()
            attributes.setdefault(domain or self.driver, {})[name] = typed if kind == "version" else value
        capacity: dict[str, dict[str, str]] = {}
        for key, quantity in self.capacity.items():
            domain, _, name = key.rpartition("/")
            capacity.setdefault(domain or self.driver, {})[name] = quantity
        return {"driver": self.driver, "attributes": attributes, "capacity": capacity,
                "allowMultipleAllocations": self.allocations > 1}

    def slice_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "attributes": dict(self.attributes)}
        if self.capacity:
            entry["capacity"] = {k: {"value": v} for k, v in self.capacity.items()}
        if self.allocations > 1:
            entry["allowMultipleAllocations"] = True
            for name, capacity in entry["capacity"].items():
                capacity["requestPolicy"] = _share_policy(name, capacity["value"])
        return entry


def _share_policy(capacity: str, value: str) -> dict[str, Any]:
    """What a claim that asks for no capacity consumes of a shared GPU: one of its `shares` and no
    `memory`, as the NVIDIA driver publishes them (dra-driver-nvidia-gpu commit 75a2d69f,
    `cmd/gpu-kubelet-plugin/consumable_shares.go`, gate ConsumableShares). Without a policy the
    scheduler gives each claim the whole capacity, so a GPU would serve one claim, not `shares`."""
    if capacity == "shares":
        return {"default": "1", "validRange": {"min": "1", "max": value, "step": "1"}}
    return {"default": "0", "validRange": {"min": "0", "max": value, "step": "1Mi"}}


def _s(value: str) -> dict[str, str]:
    return {"string": value}


def _i(value: int) -> dict[str, int]:
    return {"int": value}


def _position_name(index: int) -> str:
    """The modelled name of the `index`th PCIe root of a type whose names are not published."""
    return f"pci0000:{0x10 + 0x08 * index:02x}"


def _address(root: str, bus_offset: int, function: int = 0) -> str:
    """A PCI address (BDF) below `root` (`pciDDDD:BB`): its domain, the bus `bus_offset` past the root's."""
    domain, _, bus = root.removeprefix("pci").partition(":")
    return f"{domain}:{int(bus, 16) + bus_offset:02x}:{function:02x}.0"


def gpu_efa_roots(itype: catalog.InstanceType) -> list[tuple[str, list[int], list[int]]]:
    """Per PCIe root, its name and the GPU indices and EFA indices on it (see the module docstring)."""
    layout = LAYOUTS.get(itype.name)
    if layout is not None:
        found: list[tuple[str, list[int], list[int]]] = []
        g = e = 0
        for root in layout.roots:
            found.append((root.name, list(range(g, g + root.gpus)), list(range(e, e + root.efas))))
            g, e = g + root.gpus, e + root.efas
        return found
    gpus, efas = itype.gpu_count, itype.max_efa_interfaces if itype.has_efa else 0
    if gpus and not efas:
        return [(_position_name(g), [g], []) for g in range(gpus)]
    units = min(gpus, efas) if gpus else efas
    roots: list[tuple[str, list[int], list[int]]] = [(_position_name(r), [], []) for r in range(units)]
    for g in range(gpus):
        roots[g * units // gpus][1].append(g)
    for e in range(efas):
        roots[e * units // efas][2].append(e)
    return roots


def _gpu_attributes(itype: catalog.InstanceType, index: int, root: str, on_root: int) -> dict[str, dict[str, Any]]:
    """A GPU's attributes; `on_root`: its place among the GPUs of its PCIe root (each has a bus of its own)."""
    model = itype.gpu_model or "NVIDIA GPU"
    architecture, capability = GPU_GENERATIONS.get(model, ("unknown", "0.0.0"))
    bus = _address(root, 1 + on_root)
    return {
        "type": _s("gpu"),
        "uuid": _s(f"GPU-{uuid.uuid5(uuid.NAMESPACE_DNS, f'{itype.name}/gpu/{index}')}"),
        "productName": _s(PARTITION_PRODUCT_NAMES.get(itype.name) or PRODUCT_NAMES.get(itype.family, model)),
        "brand": _s("Nvidia"),
        "architecture": _s(architecture),
        "cudaComputeCapability": {"version": capability},
        "driverVersion": {"version": DRIVER_VERSION},
        "cudaDriverVersion": {"version": CUDA_DRIVER_VERSION},
        PCI_BUS_ID: _s(bus),
        PCIE_ROOT: _s(root),
    }


def _mig_devices(gpu: Device, profile: str) -> list[Device]:
    """A GPU's MIG devices of one profile; a `+me` profile (with the media engines) fits once per GPU."""
    base, _, extension = profile.partition("+")
    slices, _, memory = base.partition(".")
    count = 1 if extension else MIG_SLICES // int(slices.rstrip("g"))
    parent = gpu.attributes["uuid"]["string"]
    keep = ("productName", "brand", "architecture", "cudaComputeCapability", "driverVersion",
            "cudaDriverVersion", PCI_BUS_ID, PCIE_ROOT)
    out = []
    for j in range(count):
        attributes = {k: gpu.attributes[k] for k in keep}
        attributes.update({"type": _s("mig"), "profile": _s(profile), "parentUUID": _s(parent),
                           "uuid": _s(f"MIG-{uuid.uuid5(uuid.NAMESPACE_DNS, f'{parent}/{profile}/{j}')}")})
        out.append(Device(NVIDIA_DRIVER, f"{gpu.name}-mig-{base.replace('.', '')}{extension}-{j}", attributes,
                          {"memory": f"{int(memory.rstrip('gb'))}Gi"}))
    return out


def gpus(itype: catalog.InstanceType, mig_profile: str | None = None, shares: int | None = None) -> list[Device]:
    """The NVIDIA DRA driver's devices: whole GPUs, or MIG devices of `mig_profile` on MIG pools.
    `shares` models Karpenter's consumable-capacity time-slicing: each GPU serves that many claims."""
    out: list[Device] = []
    layout = LAYOUTS.get(itype.name)
    memory = layout.gpu_memory if layout is not None else f"{itype.gpu_memory_mib or 0}Mi"
    for root, gpu_indices, _ in gpu_efa_roots(itype):
        for on_root, g in enumerate(gpu_indices):
            capacity = {"memory": memory}
            if shares:
                capacity["shares"] = str(shares)
            gpu = Device(NVIDIA_DRIVER, f"gpu-{g}", _gpu_attributes(itype, g, root, on_root), capacity,
                         allocations=shares or 1)
            out.extend(_mig_devices(gpu, mig_profile) if mig_profile and itype.mig_capable else [gpu])
    return sorted(out, key=lambda d: (int(d.name.split("-")[1]), d.name))


def _efa_address(root: str, efa: int) -> str:
    """The PCI address (BDF) DRANET publishes for EFA `efa` on the PCIe root named `root`."""
    return _address(root, 2, efa % 32)


def _group_id(members: Sequence[str]) -> str:
    """A device group's id as the lookup library computes it: the first 16 hex digits of the SHA-256
    of the group's distinct EFA PCI addresses, sorted and joined by commas."""
    return hashlib.sha256(",".join(sorted(set(members))).encode()).hexdigest()[:16]


def _efa_of_neuron(itype: catalog.InstanceType, index: int) -> int:
    """The EFA a Neuron device is paired with: EFAs spread evenly over the devices."""
    return index * itype.max_efa_interfaces // itype.neuron_count


def _neuron_groups(itype: catalog.InstanceType, index: int) -> dict[str, dict[str, str]]:
    """The device-group ids of Neuron device `index` (string attributes). With EFAs: `devicegroup1_id`
    is the PCI address of the device's EFA and `devicegroup<N>_id` hashes the EFAs of its group of N;
    without EFAs (no pairing to hash) the group's device names are hashed instead (an assumption)."""
    if not itype.has_efa:
        return {device_group(n): _s(_group_id([f"neurondevice{j}" for j in range(index // n * n, index // n * n + n)]))
                for n in DEVICE_GROUP_SIZES if n <= itype.neuron_count}
    efa = _efa_of_neuron(itype, index)  # on a Neuron type each EFA has a root of its own (`efas`)
    out = {device_group(1): _s(_efa_address(_position_name(efa), efa))}
    for n in DEVICE_GROUP_SIZES[1:]:
        if n <= itype.neuron_count:
            start = index // n * n
            out[device_group(n)] = _s(_group_id([_efa_address(_position_name(e), e) for e in
                                                 map(lambda j: _efa_of_neuron(itype, j), range(start, start + n))]))
    return out


def efas(itype: catalog.InstanceType, limit: int | None = None) -> list[Device]:
    """DRANET's devices: the primary ENA interface and one EFA per EFA network card — or only the
    first `limit` cards' EFAs when a static interface layout attaches fewer."""
    out = [Device(DRANET_DRIVER, "eth0", {
        "dra.net/pciDevice": _s(ENA_PCI_DEVICE), "dra.net/pciVendor": _s("Amazon.com, Inc."),
        "dra.net/rdma": {"bool": False}, "dra.net/numaNode": _i(0), "dra.net/pciAddress": _s("0000:00:05.0"),
        PCIE_ROOT: _s("pci0000:00")})]
    if not itype.has_efa:
        return out
    roots = gpu_efa_roots(itype) if itype.has_nvidia else [(_position_name(e), [], [e])
                                                           for e in range(itype.max_efa_interfaces)]
    count = itype.max_efa_interfaces
    layout = LAYOUTS.get(itype.name)
    for r, (root, _, efa_indices) in enumerate(roots):
        numa = layout.roots[r].numa if layout is not None else 0 if r < len(roots) / 2 else 1
        for e in efa_indices:
            if limit is not None and e >= limit:
                continue
            attributes: dict[str, dict[str, Any]] = {
                "dra.net/pciDevice": _s(EFA_PCI_DEVICE), "dra.net/pciVendor": _s("Amazon.com, Inc."),
                "dra.net/rdma": {"bool": layout.efa_rdma if layout is not None else True},
                **({"dra.net/numaNode": _i(numa)} if numa is not None else {}),
                "dra.net/pciAddress": _s(_efa_address(root, e)),
                "dra.net/rdmaDevice": _s(f"rdmap{e}"), PCIE_ROOT: _s(root),
            }
            if itype.has_neuron:  # the groups of the first Neuron device paired with this EFA
                attributes.update(_neuron_groups(itype, -(-e * itype.neuron_count // count)))
            out.append(Device(DRANET_DRIVER, f"efa{e}", attributes))
    return out


def neurons(itype: catalog.InstanceType) -> list[Device]:
    """The Neuron DRA driver's devices with their connected-subset group ids."""
    return [Device(NEURON_DRIVER, f"neurondevice{i}", {
        "instanceType": _s(itype.name), "neuronDriverVersion": _s(NEURON_DRIVER_VERSION),
        **_neuron_groups(itype, i)}) for i in range(itype.neuron_count)]


def compute_domain_devices() -> list[Device]:
    """What the ComputeDomain kubelet plugin offers a node: the default channel (id 0) and the
    daemon device. One workload Pod per node holds the channel (the IMEX model)."""
    return [Device(COMPUTE_DOMAIN_DRIVER, "channel-0", {"type": _s("channel"), "id": _i(0)}),
            Device(COMPUTE_DOMAIN_DRIVER, "daemon-0", {"type": _s("daemon"), "id": _i(0)})]


SIMULATED: tuple[str, ...] = ("nvidia", "efa", "neuron")  # the families whose drivers' devices are modelled here


def inventory(itype: catalog.InstanceType | str, families: tuple[str, ...] = SIMULATED, *,
              mig_profile: str | None = None, gpu_shares: int | None = None,
              compute_domains: bool = False, efa_interfaces: int | None = None) -> tuple[Device, ...]:
    """Every device the DRA drivers of `families` publish on one node of `itype`
    (`efa_interfaces`: how many EFA interfaces a static layout attaches; default every EFA card)."""
    if isinstance(itype, str):
        itype = catalog.instance_types()[itype]
    out: list[Device] = []
    if "nvidia" in families and itype.has_nvidia:
        out += gpus(itype, mig_profile, gpu_shares)
        if compute_domains:
            out += compute_domain_devices()
    if "efa" in families and (itype.has_efa or itype.has_nvidia or itype.has_neuron):
        out += efas(itype, efa_interfaces)
    if "neuron" in families and itype.has_neuron:
        out += neurons(itype)
    return tuple(out)


def resource_slices(itype: catalog.InstanceType | str, node_name: str = "ip-10-0-0-10.ec2.internal",
                    **kwargs: Any) -> list[dict[str, Any]]:
    """The inventory as `resource.k8s.io/v1` ResourceSlices, one pool per driver per node."""
    return slices_of(inventory(itype, **kwargs), node_name)


def slices_of(devices: Sequence[Device], node_name: str) -> list[dict[str, Any]]:
    """Devices as their drivers publish them: per driver one pool named after the node, in slices of
    at most `SLICE_DEVICE_LIMIT` devices."""
    by_driver: dict[str, list[Device]] = {}
    for device in devices:
        by_driver.setdefault(device.driver, []).append(device)
    slices = []
    for driver, devices in by_driver.items():
        chunks = [devices[i:i + SLICE_DEVICE_LIMIT] for i in range(0, len(devices), SLICE_DEVICE_LIMIT)]
        for n, chunk in enumerate(chunks):
            slices.append({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": f"{node_name}-{driver}-{n}"},
                "spec": {"driver": driver, "nodeName": node_name,
                         "pool": {"name": node_name, "generation": 1, "resourceSliceCount": len(chunks)},
                         "devices": [d.slice_entry() for d in chunk]},
            })
    return slices
