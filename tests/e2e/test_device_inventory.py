"""Karpenter's DRA device metadata as the oracle for the devices we say a node publishes
(`core/knowledge/devices.py`, which the fit check and the DRA allocation tier stand on): what the NVIDIA
DRA driver and DRANET published on running instances of each type, as Karpenter's AWS provider scraped
it (karpenter-provider-aws `pkg/providers/drametadata`, written out by `karpenter-crds` from the pinned
module). For every instance type both know: the GPUs (how many, their product, architecture, compute
capability and `memory`), the EFAs (how many, whether they offer RDMA, their NUMA node where DRANET gives one)
and each PCIe root by its name with the GPUs and EFAs on it: the attribute a topology-aligned claim matches on,
and the name a selector (`pcieRoot == 'pci0000:44'`) reads, in Karpenter's launch simulation and on the node."""

from __future__ import annotations

import json
from typing import Any

import pytest

from e2e.controlplane import ControlPlane
from eks_devices.core.cel import Quantity
from eks_devices.core.families import FAMILY
from eks_devices.core.knowledge import catalog, device_layouts, devices
from eks_devices.core.rules.claims import KARPENTER_SCRAPED_NAMES, KARPENTER_SELECTABLE

GPU_ATTRIBUTES = ("productName", "architecture", "cudaComputeCapability")


def _scalar(typed: dict[str, Any]) -> Any:
    (value,) = typed.values()
    return value


def _node(gpus: list[dict[str, Any]], efas: list[dict[str, Any]], root_of: Any) -> dict[str, Any]:
    """One node's devices, compared as sets: the GPUs' attributes and memory, the EFAs' RDMA and NUMA node
    (-1: none published), and per PCIe root, by its name, how many GPUs and EFAs it holds."""
    layout: dict[str, list[int]] = {}
    for kind, found in ((0, gpus), (1, efas)):
        for device in found:
            layout.setdefault(root_of(device), [0, 0])[kind] += 1
    return {
        "gpus": sorted((*(_scalar(g["attributes"][a]) for a in GPU_ATTRIBUTES), Quantity(g["memory"]).value)
                       for g in gpus),
        "efas": sorted((bool(_scalar(e["attributes"]["dra.net/rdma"])),
                        _scalar(e["attributes"].get("dra.net/numaNode", {"int": -1}))) for e in efas),
        "roots": sorted((name, *v) for name, v in layout.items()),
    }


def karpenters(metadata: dict[str, Any], instance_type: str) -> dict[str, Any]:
    def devices_of(family: str) -> list[dict[str, Any]]:
        found = (metadata[family].get(instance_type) or {}).get("Devices") or []
        return [{"attributes": d["Attributes"], "memory": ((d.get("Capacity") or {}).get("memory") or {}).get("value")}
                for d in found]

    return _node(devices_of("gpu"), devices_of("efa"),
                 lambda d: _scalar(d["attributes"][devices.PCIE_ROOT]))


def ours(instance_type: str) -> dict[str, Any]:
    published = devices.inventory(instance_type, ("nvidia", "efa"))
    gpus = [{"attributes": d.attributes, "memory": d.capacity.get("memory")}
            for d in published if d.driver == devices.NVIDIA_DRIVER]
    efas = [{"attributes": d.attributes} for d in published if d.driver == devices.DRANET_DRIVER
            and _scalar(d.attributes["dra.net/pciDevice"]) == devices.EFA_PCI_DEVICE]
    return _node(gpus, efas, lambda d: _scalar(d["attributes"][devices.PCIE_ROOT]))


@pytest.fixture(scope="module")
def metadata(control_plane: ControlPlane) -> dict[str, Any]:
    return json.loads(control_plane.karpenter_dra_metadata.read_text())


def test_each_node_publishes_the_devices_karpenter_found_on_that_type(metadata: dict[str, Any]) -> None:
    known = catalog.instance_types()
    both = sorted(t for t in {*metadata["gpu"], *metadata["efa"]} if t in known)
    assert len(both) >= 40, both  # every GPU type of the catalogue Karpenter covers, not a handful
    wrong = {t: (ours(t), karpenters(metadata, t)) for t in both if ours(t) != karpenters(metadata, t)}
    assert not wrong, "\n".join(f"{t}:\n  ours       {o}\n  Karpenter's {k}" for t, (o, k) in wrong.items())
    # so a selector naming a root is judged on each of them (`devices.root_names_published`)
    assert [t for t in both if not devices.root_names_published(t)] == []


def test_the_roots_named_group_the_devices_as_karpenter_s_names_do(metadata: dict[str, Any]) -> None:
    """The layouts' per-root counts, read in the order of the roots' names, equal the grouping of the devices by
    the names Karpenter scraped: the GPUs and EFAs indexed in that order land on the roots Karpenter puts them."""
    for t, layout in device_layouts.LAYOUTS.items():
        grouped: dict[str, list[int]] = {}
        for kind, key in ((0, "gpu"), (1, "efa")):
            for device in (metadata[key].get(t) or {}).get("Devices") or []:
                grouped.setdefault(_scalar(device["Attributes"][devices.PCIE_ROOT]), [0, 0])[kind] += 1
        assert [(r.name, r.gpus, r.efas) for r in layout.roots] == [(n, *grouped[n]) for n in sorted(grouped)], t


def test_karpenter_covers_the_types_the_catalogue_says_it_has_dra_metadata_for(metadata: dict[str, Any]) -> None:
    """`InstanceType.karpenter_dra_metadata` (whether Karpenter launches the type for a DRA claim) agrees
    with the types the module has GPU metadata for, and, of the types with EFA, EFA metadata for (none of
    the Trainium and Inferentia types)."""
    known = catalog.instance_types()
    for family, has in (("gpu", "has_nvidia"), ("efa", "has_efa")):
        types = {t: it for t, it in known.items() if getattr(it, has)}
        assert {t for t, it in types.items() if it.karpenter_dra_metadata} == set(metadata[family]) & set(types), family


def test_the_catalogue_knows_every_type_karpenter_can_launch_for_a_claim(metadata: dict[str, Any]) -> None:
    """A pool may name any of them (g6f's GPU partitions too); the test above says `karpenterDraMetadata` is
    true for exactly these."""
    launched = {*metadata["gpu"], *metadata["efa"]}
    assert launched <= set(catalog.instance_types()), sorted(launched - set(catalog.instance_types()))


def test_the_attributes_karpenter_selects_on_are_those_its_metadata_carries(metadata: dict[str, Any]) -> None:
    """`karpenter-claim-selector-attributes`: a selector on an attribute outside Karpenter's metadata is an
    error (its simulation finds no such attribute, so it never launches); the metadata also carries each
    device's PCIe root by the name Karpenter scraped, which the device layouts keep (the tests above)."""
    for family, key in (("nvidia", "gpu"), ("efa", "efa")):
        domain = FAMILY[family].dra_driver
        carried = {name if "/" in name else f"{domain}/{name}" for entry in metadata[key].values()
                   for device in entry["Devices"] for name in device["Attributes"] or {}}
        ours = {f"{domain}/{name}" for name in KARPENTER_SELECTABLE[domain]}
        assert carried == ours | {"/".join(n) for n in KARPENTER_SCRAPED_NAMES}, family
