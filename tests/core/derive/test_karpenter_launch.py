"""What Karpenter launches for a claim on a dynamic pool (`derive/karpenter_launch.py`); the e2e tier
(`tests/e2e/test_karpenter_launch.py`) compares the same answers with Karpenter's own scheduler."""

from __future__ import annotations

from typing import Any

from eks_devices.core.derive import karpenter_launch
from eks_devices.core.derive.karpenter_launch import Launch
from support import stacks

GPU_POOL = {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "dra"}}
TWO_GPUS = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}


def launch_of(claim: dict[str, Any], pools: dict[str, Any] | None = None, **cluster: Any) -> Launch:
    plan = stacks.build(stacks.config("karpenter", "1.36", pools or {"gpu": GPU_POOL}, name="launch",
                                      claims={"c": {"pools": ["gpu"], **claim}}, **cluster))
    (found,) = karpenter_launch.launches(plan, plan.claims[0]).values()
    return found


def test_a_claim_the_metadata_serves_launches_the_pools_types() -> None:
    assert launch_of({"requests": [TWO_GPUS]}).instance_types == ("p5.48xlarge",)


def test_distinct_attribute_is_refused_before_any_type_is_tried() -> None:
    """Karpenter 1.15 refuses a claim with a distinctAttribute constraint (sigs.k8s.io/karpenter v1.15.0
    `pkg/scheduling/dynamicresources/request.go` ValidateClaimRequest: "DistinctAttribute constraints not
    done yet"), though two GPUs on distinct PCIe roots fit a p5 node."""
    found = launch_of({"requests": [TWO_GPUS],
                       "constraints": [{"requests": ["gpu"], "distinctAttribute": "resource.kubernetes.io/pcieRoot"}]})
    assert found.instance_types == ()
    assert "distinctAttribute" in found.reason and "constraints.0" in found.reason


def test_a_gpu_with_shares_serves_two_requests_of_one_claim_in_karpenter_s_simulation() -> None:
    """Karpenter's allocator gates a device with shares by capacity only (sigs.k8s.io/karpenter v1.15.0
    `allocator.go` tryDevice), so two GPUs on one PCIe root with an EFA launch a p5 node (one GPU per root),
    where the scheduler on the node, giving a device once per claim, never allocates the claim."""
    aligned = {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}},
        {"name": "efa", "exactly": {"deviceClassName": "efa.networking.k8s.aws", "count": 1}}],
        "constraints": [{"requests": ["gpu", "efa"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}
    shares = {"gpu": {**GPU_POOL, "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}}
    assert launch_of(aligned, shares).instance_types == ("p5.48xlarge",)
    plan = stacks.build(stacks.config("karpenter", "1.36", shares, name="launch",
                                      claims={"c": {"pools": ["gpu"], **aligned}}))
    assert not plan.claims[0].pools["gpu"].fits  # the node's scheduler: one GPU per root, given once
    assert launch_of(aligned).instance_types == ()  # whole GPUs: no shares to take twice


def test_a_selector_naming_a_pcie_root_is_settled_by_the_names_karpenter_scraped() -> None:
    """Karpenter evaluates `pcieRoot` against the names in its metadata (p5.48xlarge's GPUs sit on pci0000:44,
    :55, ...; karpenter-provider-aws v1.15.0 `zz_generated_gpu_metadata.go`), which the layouts keep: a root of
    the type launches it, a root no device has launches nothing, and either way the model stands behind it."""
    def on(root: str) -> dict[str, Any]:
        return {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "selectors": [
            {"cel": {"expression": f"device.attributes['resource.kubernetes.io'].pcieRoot == '{root}'"}}]}}]}

    pools = {"gpu": {**GPU_POOL, "instanceTypes": ["p5.48xlarge", "p6-b300.48xlarge"]}}
    found = launch_of(on("pci0000:bb"), pools)
    assert (found.instance_types, found.settled) == (("p5.48xlarge",), True)  # p6-b300's last root is b4
    assert launch_of(on("pci0000:b4"), pools).instance_types == ("p6-b300.48xlarge",)
    absent = launch_of(on("pci0000:45"), pools)
    assert (absent.instance_types, absent.settled, absent.cause) == ((), True, "devices")
    assert "no device on p5.48xlarge matches the selectors" in absent.reason
