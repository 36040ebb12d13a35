"""The deploy graph: each resource waits for what it needs and for nothing on the slow path it does
not need (the system nodes, CoreDNS, the Karpenter controller). Waits are read as the engine gets
them: explicit and through inputs, plus the provider, transitively."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from support import engine, stacks

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
ROUTE, ASSOCIATION = "aws:ec2/route:Route", "aws:ec2/routeTableAssociation:RouteTableAssociation"
ADDON = "aws:eks/addon:Addon"


class Waits:
    """Everything a resource waits for, directly and through what it waits for."""

    def __init__(self, rec: engine.Recording) -> None:
        self.rec = rec
        self.by_urn = {r.urn: r for r in rec.resources}
        self.children: dict[str, list[str]] = {}
        for r in rec.resources:
            self.children.setdefault(r.parent, []).append(r.urn)

    def _leaves(self, urn: str) -> set[str]:
        r = self.by_urn.get(urn)
        if r is None:
            return set()
        if not r.custom and not r.remote:  # a local component stands for what is under it
            return {leaf for c in self.children.get(urn, []) for leaf in self._leaves(c)}
        return {urn}

    def direct(self, urn: str) -> set[str]:
        r = self.by_urn[urn]
        provider = r.provider.rpartition("::")[0] if r.provider else ""  # a reference is "<urn>::<id>"
        return {leaf for d in [*r.depends_on, provider] if d for leaf in self._leaves(d)}

    @cache  # noqa: B019 - one Waits per recording, dropped with it
    def all(self, urn: str) -> frozenset[str]:
        out: set[str] = set()
        for d in self.direct(urn):
            out |= {d, *self.all(d)}
        return frozenset(out)

    def names(self, urn: str, type_: str | None = None) -> set[str]:
        return {self.by_urn[u].name for u in self.all(urn) if u in self.by_urn
                and (type_ is None or self.by_urn[u].type == type_)}


@cache
def shipped(stack: str) -> tuple[engine.Recording, Waits]:
    rec = engine.main(stacks.shipped(stack), stack=stack)
    return rec, Waits(rec)


def _names(rec: engine.Recording, type_: str) -> dict[str, Any]:
    return {r.name: r for r in rec.of_type(type_)}


def test_managed_node_groups_wait_for_their_routes_not_for_the_system_nodes() -> None:
    rec, waits = shipped("prod")
    routes = {r.urn for r in engine.of_type(rec, ROUTE, ASSOCIATION) if "-private-" in r.name}
    assert len(routes) == 6  # 3 zones: a NAT route and an association each
    groups = _names(rec, NODE_GROUP)
    assert set(groups) == {"platform-system", "platform-inference", "platform-p5-train", "platform-trn-train"}
    for name, group in groups.items():
        assert routes <= set(group.depends_on), name  # nodes pull images and join through NAT
        if name != "platform-system":
            assert "platform-system" not in waits.names(group.urn), name
            assert "platform-coredns" not in waits.names(group.urn), name
            assert "platform-eks" in waits.names(group.urn) and "platform-node" in waits.names(group.urn), name


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_daemonset_releases_wait_for_the_cluster_only(stack: str) -> None:
    rec, waits = shipped(stack)
    device = {n: r for n, r in _names(rec, RELEASE).items() if "karpenter" not in n}
    assert len(device) >= 4
    for name, release in device.items():
        assert "platform-eks" in waits.names(release.urn), name  # through the provider
        slow = waits.names(release.urn, NODE_GROUP) | waits.names(release.urn, ADDON) | {
            n for n in waits.names(release.urn, RELEASE) if "karpenter" in n}
        assert slow == set(), name


def test_karpenter_pools_wait_for_the_crds_and_the_controller() -> None:
    rec, waits = shipped("staging")
    objects = [r for r in rec.resources if r.type.endswith((":NodePool", ":EC2NodeClass"))]
    assert len(objects) == 8
    for obj in objects:
        # the controller too: deleted before it, so that its finalizers can let the nodes go
        assert {"platform-karpenter-crd-release", "platform-karpenter-release"} <= waits.names(obj.urn), obj.name
    controller = _names(rec, RELEASE)["platform-karpenter-release"]
    # the controller keeps its real prerequisites: nodes to run on, DNS, its identity and the CRDs
    assert {"platform-system", "platform-coredns", "platform-karpenter-crd-release",
            "platform-karpenter-controller-identity"} <= waits.names(controller.urn)


def test_claim_templates_wait_for_no_release() -> None:
    rec, waits = shipped("prod")
    templates = rec.of_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    assert len(templates) == 2
    for template in templates:
        assert waits.names(template.urn, RELEASE) == set(), template.name
        assert waits.names(template.urn, NODE_GROUP) == set(), template.name


def test_a_release_running_a_deployment_waits_for_the_system_nodes() -> None:
    # ComputeDomains switch on the NVIDIA DRA driver's controller Deployment
    cfg = stacks.config("managed-node-groups", name="cd", pools={
        "gb": {"replicas": 1, "instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra"}, "computeDomains": True},
        "plugin": {"replicas": 1, "instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}}},
        claims={"cd": {"pools": ["gb"], "namespace": "train", "computeDomainChannel": {"allocationMode": "Single"}}})
    rec = engine.main(cfg, stack="cd")
    waits = Waits(rec)
    releases = _names(rec, RELEASE)
    assert "platform-system" in waits.names(releases["platform-nvidia-dra-driver"].urn)
    assert "platform-system" not in waits.names(releases["platform-nvidia-device-plugin"].urn)
    # the ComputeDomain waits for the release that installs its CRD, and for its namespace
    (domain,) = [r for r in rec.resources if r.type.endswith(":ComputeDomain")]
    assert releases["platform-nvidia-dra-driver"].urn in domain.depends_on
    # its spec is immutable: a change replaces it, the old one first, instead of failing pulumi up
    assert domain.replace_on_changes == ["spec"] and domain.delete_before_replace
    assert any(waits.by_urn[u].name == "platform-ns-train" for u in domain.depends_on)


def test_auto_mode_claims_wait_for_the_class_they_name() -> None:
    cfg = stacks.config("auto-mode", name="am", pools={
        "gpu": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "device-plugin"}}},
        claims={"one": {"pools": ["gpu"], "namespace": "ml", "gpus": {"count": 1}}})
    rec = engine.main(cfg, stack="am")
    classes = {r.inputs["metadata"]["name"]: r.urn for r in rec.of_type("kubernetes:resource.k8s.io/v1:DeviceClass")}
    (template,) = rec.of_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    assert classes["gpu.nvidia.com"] in template.depends_on
    assert set(template.depends_on) <= {classes["gpu.nvidia.com"], *(r.urn for r in rec.resources
                                                                       if r.type == "kubernetes:core/v1:Namespace")}


def test_auto_mode_pools_wait_for_the_cluster_and_their_node_role_access() -> None:
    rec, waits = shipped("dev")
    pools = [r for r in rec.resources if r.type.endswith(":NodePool")]
    assert len(pools) == 4
    for pool in pools:
        assert {"platform-eks", "platform-nodeclass-access", "platform-nodeclass-auto-node-policy"} <= waits.names(pool.urn)
