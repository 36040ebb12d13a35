"""The instance catalogue: the committed snapshot equals a refresh from EC2 DescribeInstanceTypes
(run under moto's copy of AWS's instance-type data), plus the DRA coverage facts."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from eks_devices.core.knowledge import catalog, catalog_refresh, karpenter_metadata
from eks_devices.preflight import catalogue

REQUIRED_FAMILIES = {"g4dn", "g5", "g6", "g6e", "g7e", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300",
                     "p6e-gb200", "trn1", "trn1n", "trn2", "inf2"}


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    path = tmp_path_factory.mktemp("catalog") / "instance_types.json"
    with mock_aws():
        count = catalogue.refresh("us-east-1", path=path)
    entries = json.loads(path.read_text())
    assert count == len(entries)
    return entries


def test_snapshot_matches_a_refresh(refreshed: list[dict]) -> None:
    snapshot = json.loads(catalog_refresh.SNAPSHOT.read_text())
    assert refreshed == snapshot


def test_every_required_family_is_catalogued() -> None:
    assert {t.family for t in catalog.instance_types().values()} >= REQUIRED_FAMILIES


def test_every_gpu_family_karpenter_ships_dra_metadata_for_is_catalogued() -> None:
    """A pool may choose any GPU type Karpenter can launch for a DRA claim (1.15.0's fractional-GPU g6f and gr6f
    too), but v1.15.2's g7, which the catalogue's source (moto's EC2 records) lacks."""
    catalogued = {t.family for t in catalog.instance_types().values()}
    for release in karpenter_metadata.RELEASES.values():
        assert catalogued >= release.gpu_families - {"g7"}, release.release


@pytest.mark.parametrize(("name", "gpus", "model", "efa", "cards", "neuron", "arch"), [
    ("p5.48xlarge", 8, "NVIDIA H100", 32, 32, 0, "x86_64"),
    ("p5en.48xlarge", 8, "NVIDIA H200", 16, 16, 0, "x86_64"),
    ("p4d.24xlarge", 8, "NVIDIA A100", 4, 4, 0, "x86_64"),
    ("g6e.48xlarge", 8, "NVIDIA L40S", 4, 4, 0, "x86_64"),
    ("g6.xlarge", 1, "NVIDIA L4", 0, 1, 0, "x86_64"),
    ("p6-b300.48xlarge", 8, "NVIDIA B300", 16, 17, 0, "x86_64"),
    ("trn1.32xlarge", 0, None, 8, 8, 16, "x86_64"),
    ("trn2.48xlarge", 0, None, 16, 16, 16, "x86_64"),
    ("inf2.48xlarge", 0, None, 0, 1, 12, "x86_64"),
    ("g5g.xlarge", 1, "NVIDIA T4g", 0, 1, 0, "arm64"),
    ("gr6.8xlarge", 1, "NVIDIA L4", 1, 1, 0, "x86_64"),
    ("g6f.large", 1, "NVIDIA L4", 0, 1, 0, "x86_64"),  # an eighth of an L4: one device to the driver
    ("gr6f.4xlarge", 1, "NVIDIA L4", 0, 1, 0, "x86_64"),
    ("p6e-gb200.36xlarge", 4, "NVIDIA GB200", 17, 17, 0, "arm64"),
])
def test_hardware_figures(name: str, gpus: int, model: str | None, efa: int, cards: int, neuron: int,
                          arch: str) -> None:
    t = catalog.get(name)
    assert t is not None
    assert (t.gpu_count, t.gpu_model, t.max_efa_interfaces if t.has_efa else 0, t.network_cards,
            t.neuron_count, t.architecture) == (gpus, model, efa, cards, neuron, arch)


@pytest.mark.parametrize(("name", "cards"), [
    ("p6-b300.48xlarge", tuple(range(1, 17))), ("p5.48xlarge", tuple(range(32))), ("g6.xlarge", ()),
    ("p6e-gb200.36xlarge", None),  # not in the sources
])
def test_efa_capable_cards(name: str, cards: tuple[int, ...] | None) -> None:
    assert catalog.get(name).efa_cards == cards  # type: ignore[union-attr]


def test_types_missing_from_ec2_data_name_their_source() -> None:
    gb200 = catalog.get("p6e-gb200.36xlarge")
    assert gb200 is not None and "Use P6e-GB200 UltraServers with Amazon EKS" in gb200.source
    assert catalog.get("p5.48xlarge").source == "EC2 DescribeInstanceTypes"  # type: ignore[union-attr]


@pytest.mark.parametrize(("name", "karpenter", "auto_mode", "mig"), [
    ("p5.48xlarge", True, True, True),
    ("g6e.xlarge", True, True, False),
    ("g6f.xlarge", True, True, False),
    ("g7e.2xlarge", False, False, True),
    ("trn2.48xlarge", False, False, False),
    ("inf2.xlarge", False, False, False),
    ("p6e-gb200.36xlarge", False, True, True),
])
def test_dra_coverage(name: str, karpenter: bool, auto_mode: bool, mig: bool) -> None:
    t = catalog.get(name)
    assert t is not None
    assert (t.karpenter_dra_metadata, t.auto_mode_dra_metadata, t.mig_capable) == (karpenter, auto_mode, mig)


def test_refresh_reads_only_describe_instance_types(tmp_path: Path) -> None:
    """The refresh is read-only: the only EC2 operation it calls is DescribeInstanceTypes."""
    calls: list[str] = []
    with mock_aws():
        client = boto3.client("ec2", region_name="us-west-2")
        client.meta.events.register("before-call.ec2.*", lambda model, **_: calls.append(model.name))
        catalogue.refresh(path=tmp_path / "out.json", client=client)
    assert set(calls) == {"DescribeInstanceTypes"}
