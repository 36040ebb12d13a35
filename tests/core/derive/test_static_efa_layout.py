"""Static EFA pools list their interfaces: Karpenter and Auto Mode attach EFAs only for pods that
request them or when the NodeClass lists them, and a static NodeClaim requests nothing."""

from __future__ import annotations

from typing import Any

import pytest

from eks_devices.core.derive.pools import efa_interface_layout
from eks_devices.core.knowledge import catalog, crd_schemas
from eks_devices.core.manifests import nodes as nm
from support import stacks

CLUSTER = nm.ClusterFacts(cluster_name="ml", node_role_name="ml-node", discovery_tag="ml",
                          cluster_security_group_id="sg-0cluster", efa_security_group_id="sg-0efa")
STATIC = {"provisioning": "static", "replicas": 1}


def _class_spec(plan: Any, pool: str) -> dict[str, Any]:
    mode = plan.mode
    cls = nm.node_class(mode, plan.pools[pool], CLUSTER)
    assert crd_schemas.validate(cls) == []
    return cls["spec"]


def _efa_cards(layout: list[dict[str, Any]]) -> list[int]:
    return [n["networkCardIndex"] for n in layout if n["interfaceType"] == "efa-only"]


@pytest.mark.parametrize(("pool", "itype"), [("gpu-mig", "p5.48xlarge"), ("trn-static", "trn2.48xlarge")])
def test_static_karpenter_efa_pools_list_an_efa_on_every_efa_card(pool: str, itype: str) -> None:
    plan = stacks.shipped_plan("staging")
    layout = _class_spec(plan, pool)["networkInterfaces"]
    t = catalog.instance_types()[itype]
    assert layout[0] == {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    assert _efa_cards(layout) == list(t.efa_cards or ())
    assert len(_efa_cards(layout)) == t.max_efa_interfaces


def test_static_auto_mode_efa_pool_lists_them_under_advanced_networking() -> None:
    plan = stacks.shipped_plan("dev")
    spec = _class_spec(plan, "train-efa")
    assert spec["advancedNetworking"]["networkInterfaces"] == list(
        efa_interface_layout(catalog.instance_types()["p5.48xlarge"]))


@pytest.mark.parametrize(("mode", "pool"), [
    ("karpenter", {"instanceTypes": ["p5.48xlarge"]}),  # dynamic: Karpenter attaches them for the pods
    ("auto-mode", {"instanceTypes": ["p5.48xlarge"]}),
    ("karpenter", {"instanceTypes": ["p5.48xlarge"], **STATIC, "devices": {"efa": "none"}}),  # no EFA wanted
    ("auto-mode", {"instanceTypes": ["g6.xlarge"], **STATIC}),  # no EFA hardware
])
def test_pools_that_need_no_listed_interfaces_get_none(mode: str, pool: dict[str, Any]) -> None:
    plan = stacks.plan(mode, pools={"p": pool})
    assert plan.pools["p"].network_interfaces is None
    spec = _class_spec(plan, "p")
    assert "networkInterfaces" not in spec and "advancedNetworking" not in spec


def test_a_card_without_efa_gets_no_efa_interface() -> None:
    """p6-b300.48xlarge: card 0 takes no EFA, cards 1-16 do (EC2 DescribeInstanceTypes)."""
    plan = stacks.plan("karpenter", pools={"p": {"instanceTypes": ["p6-b300.48xlarge"], **STATIC}})
    layout = _class_spec(plan, "p")["networkInterfaces"]
    assert _efa_cards(layout) == list(range(1, 17))
    assert all(n["deviceIndex"] == 0 for n in layout)


@pytest.mark.parametrize("mode", ["karpenter", "auto-mode", "managed-node-groups"])
def test_static_pool_whose_types_need_different_layouts_is_refused(mode: str) -> None:
    plan = stacks.plan(mode, pools={"p": {"instanceTypes": ["p5.48xlarge", "p5en.48xlarge"], **STATIC}})
    [found] = stacks.findings(plan, "efa-static-layout-uniform")
    assert (found.severity, found.path) == ("error", "nodePools.p.instanceTypes")
    assert "p5.48xlarge: 32" in found.message and "p5en.48xlarge: 16" in found.message


def test_a_declared_layout_every_type_has_settles_it() -> None:
    layout = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
              *({"networkCardIndex": c, "deviceIndex": 1 if c == 0 else 0, "interfaceType": "efa-only"}
                for c in range(16))]
    plan = stacks.plan("karpenter", pools={"p": {"instanceTypes": ["p5.48xlarge", "p5en.48xlarge"], **STATIC,
                                                 "efa": {"networkInterfaces": layout}}})
    assert not stacks.findings(plan, "efa-static-layout-uniform")
    assert _class_spec(plan, "p")["networkInterfaces"] == layout


def test_the_fit_check_counts_the_efas_the_layout_attaches() -> None:
    """A static pool of p5.48xlarge (32 EFA cards) and p5en.48xlarge (16): the one layout has 16 EFAs,
    so a pod asking for 32 fits on neither, whatever p5.48xlarge could carry."""
    claims = {"all-efa": {"pools": ["p"], "kind": "extended-resource",
                          "extendedResources": {"vpc.amazonaws.com/efa": 32}},
              "half-efa": {"pools": ["p"], "kind": "extended-resource",
                           "extendedResources": {"vpc.amazonaws.com/efa": 16}}}
    plan = stacks.plan("managed-node-groups", pools={"p": {
        "instanceTypes": ["p5.48xlarge", "p5en.48xlarge"], **STATIC, "devices": {"efa": "device-plugin"}}},
        claims=claims)
    fits = {c.name: c.pools["p"] for c in plan.claims}
    assert not fits["all-efa"].fits
    assert "p5.48xlarge, p5en.48xlarge offers 16 vpc.amazonaws.com/efa" in fits["all-efa"].reason  # one sentence
    assert [n.per_node for n in fits["half-efa"].nodes] == [1, 1]


def test_the_dra_fit_check_counts_them_too() -> None:
    claims = {"x": {"pools": ["p"], "efa": {"count": 32}}}
    plan = stacks.plan("managed-node-groups", pools={"p": {
        "instanceTypes": ["p5.48xlarge", "p5en.48xlarge"], **STATIC, "devices": {"efa": "dra"}}}, claims=claims)
    [claim] = plan.claims
    assert not claim.pools["p"].fits
    assert {n.cause for n in claim.pools["p"].nodes} == {"too-few"}
