"""Karpenter's DRA device metadata as the oracle for the devices we say a node publishes
(`core/knowledge/devices.py`, which the fit check and the DRA allocation tier stand on): what the NVIDIA
DRA driver and DRANET published on running instances of each type, as Karpenter's AWS provider scraped
it (karpenter-provider-aws `pkg/providers/drametadata`, written out by `karpenter-crds` from the pinned
module and from each other release the toolkit models, `karpenter_metadata`). For every instance type both know: the GPUs (how many, their product, architecture, compute
capability and `memory`), the EFAs (how many, whether they offer RDMA, their NUMA node where DRANET gives one)
and each PCIe root by its name with the GPUs and EFAs on it: the attribute a topology-aligned claim matches on,
and the name a selector (`pcieRoot == 'pci0000:44'`) reads, in Karpenter's launch simulation and on the node.
Where a release's scrape differs from the node's layout (v1.15.2: p4d's `memory`, EFAs without a root on the
types it added), the model's view of that release (`karpenter_launch.as_described`) is what is compared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from e2e.controlplane import ControlPlane
from eks_devices.core.cel import Quantity
from eks_devices.core.derive.karpenter_launch import as_described
from eks_devices.core.families import FAMILY
from eks_devices.core.knowledge import catalog, device_layouts, devices, karpenter_metadata
from eks_devices.core.knowledge.charts.karpenter import KARPENTER
from eks_devices.core.knowledge.karpenter_metadata import Metadata
from eks_devices.core.rules.claims import KARPENTER_SCRAPED_NAMES, KARPENTER_SELECTABLE

GPU_ATTRIBUTES = ("productName", "architecture", "cudaComputeCapability")


def _scalar(typed: dict[str, Any]) -> Any:
    (value,) = typed.values()
    return value


def _root(device: dict[str, Any]) -> str:
    """A device's PCIe root name ("": none described)."""
    return _scalar(device["attributes"][devices.PCIE_ROOT]) if devices.PCIE_ROOT in device["attributes"] else ""


def _node(gpus: list[dict[str, Any]], efas: list[dict[str, Any]], root_of: Any) -> dict[str, Any]:
    """One node's devices, compared as sets: the GPUs' attributes and memory, the EFAs' RDMA and NUMA node
    (-1: none published), and per PCIe root, by its name ("": none), how many GPUs and EFAs it holds."""
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

    return _node(devices_of("gpu"), devices_of("efa"), _root)


def ours(instance_type: str, release: Metadata) -> dict[str, Any]:
    """The devices the model says a node of the type publishes, as the release describes them."""
    published = [as_described(d, instance_type, release) for d in devices.inventory(instance_type, ("nvidia", "efa"))]
    gpus = [{"attributes": d.attributes, "memory": d.capacity.get("memory")}
            for d in published if d.driver == devices.NVIDIA_DRIVER]
    efas = [{"attributes": d.attributes} for d in published if d.driver == devices.DRANET_DRIVER
            and _scalar(d.attributes["dra.net/pciDevice"]) == devices.EFA_PCI_DEVICE]
    return _node(gpus, efas, _root)


def _metadata_file(control_plane: ControlPlane, version: str) -> Path:
    """Where `karpenter-crds` wrote a release's metadata: the chart pin's, or another release's build."""
    return control_plane.karpenter_dra_metadata if version == KARPENTER.version else \
        control_plane.karpenter_release(version)[0]


@pytest.fixture(scope="module", params=sorted(karpenter_metadata.RELEASES.keys() - {"1.15.1"}))
def release(request: pytest.FixtureRequest, control_plane: ControlPlane) -> tuple[Metadata, dict[str, Any]]:
    """Each release the engines build (1.15.1's metadata files are 1.15.0's, byte for byte): the model's
    entry and the metadata `karpenter-crds` wrote from that release's module."""
    return karpenter_metadata.RELEASES[request.param], json.loads(
        _metadata_file(control_plane, request.param).read_text())


def test_each_node_publishes_the_devices_karpenter_found_on_that_type(release: tuple[Metadata, dict[str, Any]]) -> None:
    model, metadata = release
    known = catalog.instance_types()
    both = sorted(t for t in {*metadata["gpu"], *metadata["efa"]} if t in known)
    assert len(both) >= 40, both  # every GPU type of the catalogue Karpenter covers, not a handful
    wrong = {t: (ours(t, model), karpenters(metadata, t)) for t in both
             if ours(t, model) != karpenters(metadata, t)}
    assert not wrong, "\n".join(f"{t}:\n  ours       {o}\n  Karpenter's {k}" for t, (o, k) in wrong.items())
    # so a selector naming a root is judged on each of them (`devices.root_names_published`), or on none there is
    assert [t for t in both if not devices.root_names_published(t) and not model.bare_efas(known[t])] == []


def test_every_layout_is_one_a_release_scraped(control_plane: ControlPlane) -> None:
    """No layout stands on the model alone: each type's is held to a release's metadata by the test below."""
    scraped: set[str] = set()
    for version in sorted(karpenter_metadata.RELEASES.keys() - {"1.15.1"}):
        found = json.loads(_metadata_file(control_plane, version).read_text())
        scraped |= {*found["gpu"], *found["efa"]}
    assert set(device_layouts.LAYOUTS) - scraped == set()


def test_the_roots_named_group_the_devices_as_karpenter_s_names_do(release: tuple[Metadata, dict[str, Any]]) -> None:
    """The layouts' per-root counts, read in the order of the roots' names, equal the grouping of the devices by
    the names Karpenter scraped: the GPUs and EFAs indexed in that order land on the roots Karpenter puts them."""
    _, metadata = release
    for t, layout in device_layouts.LAYOUTS.items():
        if t not in metadata["gpu"] and t not in metadata["efa"]:
            continue  # a type this release has no metadata for (g6f at 1.15.2, g7e at 1.15.0)
        grouped: dict[str, list[int]] = {}
        for kind, key in ((0, "gpu"), (1, "efa")):
            for device in (metadata[key].get(t) or {}).get("Devices") or []:
                grouped.setdefault(_scalar(device["Attributes"][devices.PCIE_ROOT]), [0, 0])[kind] += 1
        assert [(r.name, r.gpus, r.efas) for r in layout.roots] == [(n, *grouped[n]) for n in sorted(grouped)], t


def test_karpenter_covers_the_types_the_catalogue_says_it_has_dra_metadata_for(
        release: tuple[Metadata, dict[str, Any]]) -> None:
    """`karpenter_metadata` (whether Karpenter launches the type for a DRA claim) agrees with the types the
    release's module has GPU metadata for and, of the types with EFA, EFA metadata for (at 1.15.0 none of the
    Trainium types, at 1.15.2 those too, bare); the chart pin's is `karpenterDraMetadata` in the catalogue."""
    model, metadata = release
    known = catalog.instance_types()
    for key, family in (("gpu", "nvidia"), ("efa", "efa")):
        types = {t: it for t, it in known.items() if it.has(family)}
        assert {t for t, it in types.items() if model.covers(it, family)} == set(metadata[key]) & set(types), key
    bare = {t for t, entry in metadata["efa"].items() if t in known
            and any(devices.PCIE_ROOT not in (d["Attributes"] or {}) for d in entry["Devices"])}
    assert bare == {t for t, it in known.items() if model.covers(it, "efa") and model.bare_efas(it)}


def test_the_catalogue_knows_every_type_karpenter_can_launch_for_a_claim(
        release: tuple[Metadata, dict[str, Any]]) -> None:
    """A pool may name any GPU type Karpenter launches (g6f's GPU partitions too); the test above says
    `karpenter_metadata` covers exactly these. Not catalogued: v1.15.2's g7 (moto's records, the
    catalogue's source, have none) and the types it has only EFA metadata for, none of them accelerated."""
    model, metadata = release
    missing = set(metadata["gpu"]) - set(catalog.instance_types())
    assert {t.split(".")[0] for t in missing} <= {"g7"} and (not missing or model.release == "1.15.2"), sorted(missing)
    efa_only = {t.split(".")[0] for t in set(metadata["efa"]) - set(catalog.instance_types())}
    assert efa_only <= model.bare_efa_families | {"g7"}, sorted(efa_only - model.bare_efa_families)


def test_the_attributes_karpenter_selects_on_are_those_its_metadata_carries(
        release: tuple[Metadata, dict[str, Any]]) -> None:
    """`karpenter-claim-selector-attributes`: a selector on an attribute outside Karpenter's metadata is an
    error (its simulation finds no such attribute, so it never launches); the metadata also carries each
    device's PCIe root by the name Karpenter scraped, which the device layouts keep (the tests above)."""
    _, metadata = release
    for family, key in (("nvidia", "gpu"), ("efa", "efa")):
        domain = FAMILY[family].dra_driver
        carried = {name if "/" in name else f"{domain}/{name}" for entry in metadata[key].values()
                   for device in entry["Devices"] for name in device["Attributes"] or {}}
        ours = {f"{domain}/{name}" for name in KARPENTER_SELECTABLE[domain]}
        assert carried == ours | {"/".join(n) for n in KARPENTER_SCRAPED_NAMES}, family
