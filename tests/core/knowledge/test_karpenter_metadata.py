"""Karpenter's DRA device metadata per release (`core/knowledge/karpenter_metadata.py`) and what a stack meets
when it runs 1.15.2 rather than the pinned 1.15.0: the e2e tier holds each entry to the release's module
(`tests/e2e/test_device_inventory.py`) and the launches to that release's scheduler (`test_karpenter_launch.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from eks_devices.core.derive import karpenter_launch
from eks_devices.core.knowledge import catalog, karpenter_metadata
from support import stacks

GPU_EFA = {"nvidia": "dra", "efa": "dra"}
POOLS = {"g7e": {"instanceTypes": ["g7e.12xlarge", "g7e.48xlarge", "g6e.12xlarge"], "devices": GPU_EFA},
         "small": {"instanceTypes": ["g6f.xlarge", "gr6f.4xlarge", "g6.xlarge"], "devices": {"nvidia": "dra"}},
         "a100": {"instanceTypes": ["p4d.24xlarge"], "devices": GPU_EFA},
         "trn": {"instanceTypes": ["trn2.48xlarge", "trn1.32xlarge"],
                 "devices": {"efa": "dra", "neuron": "device-plugin"}}}


def _selecting(pool: str, device_class: str, expression: str, count: int = 1) -> dict[str, Any]:
    return {"pools": [pool], "requests": [{"name": "d", "exactly": {
        "deviceClassName": device_class, "count": count, "selectors": [{"cel": {"expression": expression}}]}}]}


CLAIMS = {"one": {"pools": ["g7e", "small"], "gpus": {"count": 1}},
          "aligned": {"pools": ["g7e"], "gpus": {"count": 2}, "efa": {"count": 1}, "alignWith": "gpu"},
          "memory": _selecting("a100", "gpu.nvidia.com",
                               "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", 8),
          "efa-trn": {"pools": ["trn"], "efa": {"count": 8}},
          "efa-numa": _selecting("trn", "efa.networking.k8s.aws", "device.attributes['dra.net'].numaNode == 0")}


def plan_at(version: str) -> Any:
    return stacks.build(stacks.config("karpenter", "1.36", POOLS, name="releases", claims=CLAIMS,
                                      cluster={"karpenter": {"version": version}}))


def launched(version: str) -> dict[tuple[str, str], tuple[str, ...]]:
    plan = plan_at(version)
    return {(c.name, pool): found.instance_types for c in plan.claims
            for pool, found in karpenter_launch.launches(plan, c).items()}


def test_a_version_takes_its_release_s_metadata_or_the_nearest_known() -> None:
    assert karpenter_metadata.for_version("1.15.2") is karpenter_metadata.V1_15_2
    assert karpenter_metadata.for_version("1.15.3") is karpenter_metadata.for_version("1.16.0") is \
        karpenter_metadata.V1_15_2
    assert karpenter_metadata.for_version("1.15.1").gpu_families == karpenter_metadata.V1_15_0.gpu_families
    assert karpenter_metadata.for_version("1.14.1") is karpenter_metadata.V1_15_0
    assert karpenter_metadata.pinned() is karpenter_metadata.V1_15_0  # the chart's pin: the catalogue's column


def test_the_metadata_follows_the_release() -> None:
    """v1.15.2 adds g7e (GPUs and EFAs) and Trainium's EFAs (bare: no root), drops g6f and gr6f."""
    old, new = karpenter_metadata.V1_15_0, karpenter_metadata.V1_15_2
    g7e, g6f, trn2 = (catalog.instance_types()[t] for t in ("g7e.48xlarge", "g6f.xlarge", "trn2.48xlarge"))
    assert (old.covers(g7e, "nvidia"), new.covers(g7e, "nvidia"), new.covers(g7e, "efa")) == (False, True, True)
    assert (old.launchable(g6f), new.launchable(g6f)) == (True, False)
    assert (old.covers(trn2, "efa"), new.covers(trn2, "efa"), new.covers(trn2, "neuron")) == (False, True, False)
    assert new.bare_efas(trn2) and not new.bare_efas(g7e)


def test_karpenter_1_15_2_launches_what_its_metadata_describes() -> None:
    """g7e for GPU claims and its aligned GPU pairs with an EFA, p4d for 40Gi GPUs (its scrape says 40Gi), the
    Trainium types for EFA claims, but not for a NUMA node its bare EFAs lack; no g6f or gr6f any more."""
    found = launched("1.15.2")
    assert found[("one", "g7e")] == ("g7e.12xlarge", "g7e.48xlarge", "g6e.12xlarge")
    assert found[("one", "small")] == ("g6.xlarge",)
    assert found[("aligned", "g7e")] == ("g7e.12xlarge", "g7e.48xlarge")
    assert found[("memory", "a100")] == ("p4d.24xlarge",)
    assert found[("efa-trn", "trn")] == ("trn2.48xlarge", "trn1.32xlarge")
    assert found[("efa-numa", "trn")] == ()


def test_karpenter_1_15_0_launches_as_before() -> None:
    found = launched("1.15.0")
    assert found[("one", "g7e")] == ("g6e.12xlarge",)
    assert found[("one", "small")] == ("g6f.xlarge", "gr6f.4xlarge", "g6.xlarge")
    assert found[("aligned", "g7e")] == found[("memory", "a100")] == found[("efa-trn", "trn")] == ()


@pytest.mark.parametrize(("version", "refused"), [
    ("1.15.0", {("g7e", "g7e.12xlarge, g7e.48xlarge"), ("trn", "trn1.32xlarge, trn2.48xlarge")}),
    ("1.15.2", {("small", "g6f.xlarge, gr6f.4xlarge")}),
])
def test_dynamic_pools_are_refused_the_types_the_release_has_no_metadata_for(version: str, refused: set) -> None:
    found = stacks.findings(plan_at(version), "dra-unsupported-instance-type")
    assert {(f.path.split(".")[1], f.message.split(" for ")[1].split(":")[0]) for f in found} == refused
    assert all(f"Karpenter {version} has no DRA device metadata" in f.message for f in found)


def test_auto_picks_dra_for_g7e_where_the_release_has_its_metadata() -> None:
    pools = {"g7e": {"instanceTypes": ["g7e.12xlarge", "g7e.48xlarge"]}}
    for version, manager in (("1.15.0", "device-plugin"), ("1.15.2", "dra")):
        plan = stacks.build(stacks.config("karpenter", "1.36", pools, name="auto",
                                          cluster={"karpenter": {"version": version}}))
        assert plan.pools["g7e"].manager("nvidia") == manager, version
        if manager == "device-plugin":
            assert f"Karpenter {version} ships no DRA metadata for g7e" in plan.pools["g7e"].managers["nvidia"].reason


def test_an_unknown_version_names_the_release_whose_metadata_it_takes() -> None:
    [warning] = stacks.findings(plan_at("1.16.0"), "chart-version-known")
    assert "DRA device metadata is taken from 1.15.2" in warning.message
    assert launched("1.16.0") == launched("1.15.2")
