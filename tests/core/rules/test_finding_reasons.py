"""Findings that say why: each finding is applicable and states the reason the EKS
device-management guide gives, with no second finding that misdirects. Each case failed before its fix."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from eks_devices.core.model import NodeFit, grouped
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


# --- aligned claims on pools whose EFA runs the device plugin -------------------------------------

ALIGNED = {"x": {"pools": ["p"], "gpus": {}, "efa": {"count": 1}, "alignWith": "gpu"}}


def test_aligned_claim_on_1_34_says_the_efa_dra_driver_needs_1_35() -> None:
    plan = stacks.build(_config("managed-node-groups", {"p": {**P5, **STATIC}}, claims=ALIGNED) | {
        "eks-devices:cluster": {"name": "test", "version": "1.34", "mode": "managed-node-groups"}})
    assert [f.slug for f in plan.errors] == ["claim-alignment-needs-dra"]
    found = plan.errors[0]
    assert "needs DRA for both device types" in found.message and "EFA device plugin publishes none" in found.message
    assert "aws-dranet needs Kubernetes 1.35" in found.message
    assert 'cluster.version "1.35"' in found.fix and "name one of" not in found.fix


def test_aligned_neuron_claim_on_an_efa_plugin_pool_keeps_the_efa() -> None:
    plan = stacks.build(_config("managed-node-groups", {"p": {**TRN2, **STATIC, "devices": {"efa": "device-plugin"}}},
                                claims={"x": {"pools": ["p"], "neurons": {"count": 1}, "efa": {"count": 1},
                                              "alignWith": "neuron"}}))
    found = _one(plan, "claim-alignment-needs-dra")
    assert "Neuron device group" in found.message and "nodePools.p.devices.efa: dra" in found.fix
    assert not _found(plan, "claim-device-class-missing")


def test_aligned_claim_on_an_aligned_pool_is_reported_once_by_the_pool() -> None:
    plan = stacks.build(_config("karpenter", {"p": {**P5, "efa": {"alignWith": "gpu"}, "devices": {"efa": "device-plugin"}}},
                                claims=ALIGNED))
    assert [f.slug for f in plan.errors] == ["topology-alignment-needs-dra"]


# --- claim-device-class-missing says which class is missing and why --------------------------------

def test_device_classes_off_in_auto_mode_is_not_called_no_dra_pool() -> None:
    plan = stacks.build(_config("auto-mode", {"p": {**P5, **STATIC}}, cluster={"autoMode": {"createDeviceClasses": False}},
                                claims={"x": {"pools": ["p"], "gpus": {}}}))
    found = _one(plan, "claim-device-class-missing")
    assert "no pool runs a DRA driver" not in found.fix + found.message and "no classes" not in found.fix
    assert "createDeviceClasses: false" in found.message
    assert found.fix == "set cluster.autoMode.createDeviceClasses: true"


def test_unaligned_efa_claim_on_a_plugin_pool_names_the_pool_to_switch() -> None:
    plan = stacks.build(_config("karpenter", {"p": {**P5, "devices": {"efa": "device-plugin"}}},
                                claims={"x": {"pools": ["p"], "efa": {"count": 1}}}))
    found = _one(plan, "claim-device-class-missing")
    assert "efa.networking.k8s.aws" in found.message and "pool p efa is device-plugin" in found.message
    assert found.fix == "set nodePools.p.devices.efa: dra"


# --- gpuSharing.replicas on an NVIDIA DRA pool --------------------------------------------------

def test_time_slicing_replicas_on_a_dra_pool_are_said_to_have_no_effect() -> None:
    plan = stacks.plan("managed-node-groups", pools={"p": {"instanceTypes": ["g6.xlarge"], **STATIC,
                                                           "devices": {"nvidia": "dra"},
                                                           "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}})
    found = _one(plan, "dra-time-slicing-replicas")
    assert found.severity == "warning" and "replicas: 4 has no effect" in found.message
    assert "devices.nvidia: device-plugin" in found.fix
    # dynamic Karpenter pools do use them (consumable capacity): that is karpenter-time-slicing's business
    dynamic = stacks.plan("karpenter", pools={"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                                    "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}})
    assert not _found(dynamic, "dra-time-slicing-replicas")


def test_karpenter_time_slicing_fix_names_no_unreleased_driver_version() -> None:
    """The fix names only releases in the known-release table that carry the gate (0.5.0), never the pinned
    unknown one; the device plugin stays the alternative."""
    pools = {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                   "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}}
    for pin in ("0.4.1", "0.6.0"):
        found = _one(stacks.plan("karpenter", pools=pools, chartVersions={"nvidia-dra-driver": pin}),
                     "karpenter-time-slicing")
        assert pin not in found.fix and "chartVersions.nvidia-dra-driver to 0.5.0 " in found.fix
        assert "devices.nvidia: device-plugin" in found.fix


# --- mig-partitions points only at keys the stack has ---------------------------------------------

def test_mig_partitions_fix_names_stack_settings_and_says_when_none_helps() -> None:
    plan = stacks.plan("managed-node-groups", "1.35", pools={"p": {
        "instanceTypes": ["p4d.24xlarge"], **STATIC, "devices": {"nvidia": "device-plugin"},
        "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}}})
    found = _one(plan, "mig-partitions")
    assert "user data" not in found.fix and "mig-parted" not in found.fix
    for step in ("nodePools.p.devices.nvidia: dra", 'cluster.version "1.36"', "nodePools.p.instanceTypes",
                 "p4d.24xlarge is older", "no stack setting does it"):
        assert step in found.fix, step


# --- grouping fit reasons: nothing lost, one sentence per shape -----------------------------------

TYPES = ["g6e.xlarge", "g6e.2xlarge", "p5.48xlarge", "p4d.24xlarge", "trn1.32xlarge"]
SHAPES = ["{t} publishes no mig.nvidia.com device (request 'x')",
          "no device on {t} matches the selectors of request 'gpu-1': it has {n} × NVIDIA L40S (memory 46068Mi)",
          "the claim needs {n} × efa.networking.k8s.aws but {t} has {m} that match {{#x}}"]


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.sampled_from(SHAPES), st.integers(0, 64), st.integers(0, 64)), min_size=1, max_size=5))
def test_grouped_reasons_keep_every_type_and_count_and_merge_alike_ones(rows: list[tuple[str, int, int]]) -> None:
    fits = [NodeFit(TYPES[i], 0, shape.format(t=TYPES[i], n=n, m=m)) for i, (shape, n, m) in enumerate(rows)]
    out = grouped(fits)
    assert len(out) == len({shape for shape, _, _ in rows})  # one sentence per shape
    text = " ".join(reason for _, reason in out)
    for fit, (shape, n, m) in zip(fits, rows, strict=True):
        assert fit.instance_type in text
        assert ("{n}" not in shape or str(n) in text) and ("{m}" not in shape or str(m) in text)
    if len(fits) == 1:  # a lone type's reason is untouched
        assert out == [(fits[0].instance_type, fits[0].reason)]
