"""Findings that say why (issue 24, item 3): each finding is applicable and states the reason the EKS
device-management guide gives, with no second finding that misdirects. Each case failed before its fix."""

from __future__ import annotations

from typing import Any

from support import stacks

P5 = {"instanceTypes": ["p5.48xlarge"]}
TRN2 = {"instanceTypes": ["trn2.48xlarge"]}
STATIC = {"provisioning": "static", "replicas": 1}
RESERVED = {"capacity": "reserved", "capacityReservationIds": ["cr-0123456789abcdef0"]}


def _found(plan, slug: str) -> list:
    return stacks.findings(plan, slug)


def _one(plan, slug: str):
    [found] = _found(plan, slug)
    return found


# --- neuron: dra in Auto Mode: one error, the guide's reason, an applicable fix ---------------------

def test_neuron_dra_in_auto_mode_is_one_error_with_the_reason() -> None:
    for provisioning in ({}, STATIC):
        plan = stacks.plan("auto-mode", pools={"p": {**TRN2, **provisioning, "devices": {"neuron": "dra"}}})
        assert [f.slug for f in plan.errors] == ["auto-mode-neuron-plugin-only"]
        found = plan.errors[0]
        assert "NVIDIA GPUs and EFA only" in found.message and "Neuron device plugin" in found.message
        assert "devices.neuron: device-plugin" in found.fix
        assert "labels" not in found.fix and "static" not in found.fix


# --- placement-group-with-reservation: only where a group is created ------------------------------

def test_placement_group_warning_only_on_pools_that_get_a_group() -> None:
    # a Karpenter pool without availabilityZone spans zones and gets no placement group
    spanning = stacks.plan("karpenter", pools={"p": {**P5, **RESERVED}})
    assert not _found(spanning, "placement-group-with-reservation")
    pinned = stacks.plan("karpenter", pools={"p": {**P5, **RESERVED, "availabilityZone": "us-west-2a"}})
    assert _one(pinned, "placement-group-with-reservation").fix == "set placementGroup: false on this pool"
    # a node group always lives in one zone: it gets the group
    group = stacks.plan("managed-node-groups", pools={"p": {**P5, **STATIC, **RESERVED, "availabilityZone": "us-west-2a"}})
    assert _found(group, "placement-group-with-reservation")


# --- claim-unsatisfiable: one sentence for the types that fail alike ------------------------------

def test_claim_unsatisfiable_groups_instance_types_that_fail_alike() -> None:
    plan = stacks.build(stacks.config("managed-node-groups", pools={
        "p": {"instanceTypes": ["g6e.xlarge", "g6e.2xlarge", "g6e.12xlarge"], **STATIC,
              "efa": {"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]}}},
        claims={"x": {"pools": ["p"], "gpus": {"model": "H100"}}}))
    found = _one(plan, "claim-unsatisfiable")
    assert found.message.count("matches the selectors") == 1, found.message
    assert "g6e.xlarge / g6e.2xlarge / g6e.12xlarge" in found.message
    assert "it has 1 / 1 / 4 × NVIDIA L40S" in found.message


def test_types_failing_alike_without_counts_are_listed_with_commas() -> None:
    plan = stacks.build(stacks.config("managed-node-groups", pools={"p": {
        "instanceTypes": ["p5.48xlarge", "p5e.48xlarge"], **STATIC}},
        claims={"x": {"pools": ["p"], "requests": [{"name": "v", "exactly": {"deviceClassName": "vfio.gpu.nvidia.com"}}]}}))
    fit = plan.claims[0].pools["p"]
    assert not fit.fits and fit.reason.count("publishes no") == 1, fit.reason
    assert "p5.48xlarge, p5e.48xlarge publishes no vfio.gpu.nvidia.com" in fit.reason


def _config(mode: str, pools: dict[str, Any], **sections: Any) -> dict[str, Any]:
    return stacks.config(mode, pools=pools, **sections)
