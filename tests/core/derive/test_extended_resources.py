"""DRA serving device-plugin extended resources (KEP-5004): `cluster.draExtendedResources`, the
`gpu.nvidia.com` DeviceClass it shapes, the fit of `extended-resource` claims on DRA pools, and the rules."""

from __future__ import annotations

from typing import Any

import pytest

from eks_devices.core.config.errors import ConfigError
from eks_devices.core.manifests import software
from support import stacks

DRA = {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}}
PLUGIN = {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}
STATIC = {"provisioning": "static", "replicas": 1}
PLUGIN_STYLE = {"plugin-style": {"pools": ["dra"], "kind": "extended-resource",
                                 "extendedResources": {"nvidia.com/gpu": 1}}}


def choice(value: bool | None) -> dict[str, Any]:
    return {} if value is None else {"cluster": {"draExtendedResources": value}}


def gpu_class(plan: Any) -> Any:
    return next(c for c in plan.device_classes if c.name == "gpu.nvidia.com")


@pytest.mark.parametrize(("version", "value", "expected"), [
    ("1.36", None, "nvidia.com/gpu"),  # unset: what stacks deployed before the choice existed
    ("1.36", True, "nvidia.com/gpu"),
    ("1.36", False, None),
    ("1.35", True, None),  # DRAExtendedResource is alpha and off below 1.36
])
def test_auto_mode_gpu_class_follows_the_choice(version: str, value: bool | None, expected: str | None) -> None:
    plan = stacks.plan("auto-mode", version, {"dra": DRA}, **choice(value))
    assert gpu_class(plan).extended_resource_name == expected
    [manifest] = [m for m in software.toolkit_device_classes(plan) if m["metadata"]["name"] == "gpu.nvidia.com"]
    assert manifest["spec"].get("extendedResourceName") == expected


@pytest.mark.parametrize(("mode", "pool"), [("auto-mode", DRA), ("karpenter", DRA),
                                            ("managed-node-groups", {**DRA, **STATIC})])
def test_an_extended_resource_claim_fits_a_dra_pool_exactly_when_on_and_136(mode: str, pool: dict[str, Any]) -> None:
    def fit(version: str, value: bool | None) -> Any:
        plan = stacks.plan(mode, version, {"dra": pool}, claims=PLUGIN_STYLE, **choice(value))
        return plan.claims[0].pools["dra"]

    assert fit("1.36", None).fits and fit("1.36", True).fits
    below = fit("1.35", True)
    assert not below.fits and "below 1.36" in below.reason
    if mode == "auto-mode":  # the toolkit's class leaves the name out
        off = fit("1.36", False)
        assert not off.fits and "draExtendedResources is false" in off.reason


def test_the_choice_is_a_boolean() -> None:
    with pytest.raises(ConfigError) as caught:
        stacks.plan("auto-mode", pools={"dra": DRA}, cluster={"draExtendedResources": "sometimes"})
    assert [p.path for p in caught.value.problems] == ["cluster.draExtendedResources"]


def test_off_is_refused_where_the_nvidia_chart_creates_the_class() -> None:
    """dra-driver-nvidia-gpu 0.4.1 renders the field with resource.k8s.io/v1 and has no switch for it."""
    plan = stacks.plan("karpenter", "1.36", {"dra": DRA}, **choice(False))
    [finding] = stacks.findings(plan, "dra-extended-resources-off")
    assert (finding.severity, finding.path) == ("error", "cluster.draExtendedResources")
    assert "eks-devices.io/device-manager-nvidia: device-plugin" in finding.fix
    assert plan.releases["nvidia-dra-driver"].values["resourceApiVersion"] == "resource.k8s.io/v1"
    # a chart rendered for another API version leaves the field out (the user's own override)
    beta = stacks.plan("karpenter", "1.36", {"dra": DRA}, helmValues={
        "nvidia-dra-driver": {"resourceApiVersion": "resource.k8s.io/v1beta2"}}, **choice(False))
    assert gpu_class(beta).extended_resource_name is None and not stacks.findings(beta, "dra-extended-resources-off")
    assert not stacks.findings(stacks.plan("auto-mode", "1.36", {"dra": DRA}, **choice(False)),
                               "dra-extended-resources-off")


@pytest.mark.parametrize(("mode", "pools", "version", "value", "fires"), [
    ("karpenter", {"dra": DRA, "plugin": PLUGIN}, "1.36", None, True),
    ("auto-mode", {"dra": DRA, "plugin": PLUGIN}, "1.36", None, True),
    ("auto-mode", {"dra": DRA, "any": {**DRA, "devices": {"nvidia": "inferred"}}}, "1.36", None, True),
    ("karpenter", {"dra": DRA, "plugin": PLUGIN}, "1.36", True, False),  # stated: meant
    ("auto-mode", {"dra": DRA, "plugin": PLUGIN}, "1.36", False, False),  # stated: kept apart
    ("karpenter", {"dra": DRA, "plugin": PLUGIN}, "1.35", None, False),  # the field has no effect yet
    ("karpenter", {"dra": DRA}, "1.36", None, False),  # only DRA pools: serving nvidia.com/gpu is the feature
    ("karpenter", {"plugin": PLUGIN}, "1.36", None, False),
])
def test_plugin_style_pods_reaching_dra_pools_is_a_warning_until_the_stack_says(
        mode: str, pools: dict[str, Any], version: str, value: bool | None, fires: bool) -> None:
    found = stacks.findings(stacks.plan(mode, version, pools, **choice(value)), "dra-extended-resources")
    assert bool(found) == fires
    if found:
        [finding] = found
        assert finding.severity == "warning" and "pools dra" in finding.message
        label = "eks.amazonaws.com" if mode == "auto-mode" else "eks-devices.io"
        assert f"{label}/device-manager-nvidia: device-plugin" in finding.fix
        assert ("draExtendedResources: false" in finding.fix) == (mode == "auto-mode")
