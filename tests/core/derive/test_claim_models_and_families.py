"""Claims as the scheduler sees them: a GPU model is a product, not a substring of one, and a
plugin-style claim may name several device families."""

from __future__ import annotations

import pytest

from eks_devices import build, parse
from eks_devices.core import cel
from eks_devices.core.derive import claims
from eks_devices.core.knowledge import devices

CLUSTER = {"name": "ml", "version": "1.36", "mode": "managed-node-groups"}


@pytest.mark.parametrize(("model", "product", "selects"), [
    ("L4", "NVIDIA L4", True), ("L4", "NVIDIA L40S", False), ("l40s", "NVIDIA L40S", True),
    ("H20", "NVIDIA H200", False), ("H200", "NVIDIA H200", True), ("H100", "NVIDIA H100 80GB HBM3", True),
    ("A100", "NVIDIA A100-SXM4-40GB", True), ("T4", "NVIDIA T4G", False), ("T4", "Tesla T4", True),
])
def test_a_gpu_model_is_a_whole_word_of_the_product_name(model: str, product: str, selects: bool) -> None:
    (selector,) = claims.gpu_selectors(model)
    cel.compile_expression(selector)
    assert cel.evaluate(selector, cel.device("gpu.nvidia.com", {"type": "gpu", "productName": product})) is selects


@pytest.mark.parametrize(("model", "itype", "fits"), [("L4", "g6e.xlarge", False), ("L4", "g6.xlarge", True),
                                                      ("H20", "p5e.48xlarge", False), ("H100", "p5.48xlarge", True)])
def test_the_fit_check_follows_the_product(model: str, itype: str, fits: bool) -> None:
    assert devices.PRODUCT_NAMES  # the simulated devices publish real product names
    plan = build(parse({"eks-devices:cluster": CLUSTER,
                        "eks-devices:nodePools": {"p": {"replicas": 1, "instanceTypes": [itype]}},
                        "eks-devices:claims": {"c": {"pools": ["p"], "gpus": {"count": 1, "model": model}}}}))
    (claim,) = plan.claims
    assert claim.pools["p"].fits is fits
    assert ("claim-unsatisfiable" in {f.slug for f in plan.findings}) is not fits


def test_a_plugin_style_claim_may_name_two_families() -> None:
    """The usual plugin-style training Pod: 8 GPUs and 32 EFAs as extended resources."""
    plan = build(parse({
        "eks-devices:cluster": CLUSTER,
        "eks-devices:nodePools": {"p5": {"replicas": 1, "instanceTypes": ["p5.48xlarge"],
                                         "devices": {"nvidia": "device-plugin", "efa": "device-plugin"}}},
        "eks-devices:claims": {"train": {"pools": ["p5"], "kind": "extended-resource",
                                         "extendedResources": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}}}}))
    (claim,) = plan.claims
    assert claim.node_selector == {"eks-devices.io/device-manager-nvidia": "device-plugin",
                                   "eks-devices.io/device-manager-efa": "device-plugin"}
    assert claim.pools["p5"].fits and not plan.errors
