"""Spec → the Plan's derived part: per pool its device managers (with reasons), labels and taints;
the device software releases and their node scope; the DeviceClasses and their owners; Karpenter's
DRA settings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from eks_devices.core.config.stack import FAMILIES, Family, NodePool, Spec
from eks_devices.core.derive import digests
from eks_devices.core.derive.karpenter_gates import karpenter_dra_settings
from eks_devices.core.derive.resolve import resolve_pool
from eks_devices.core.derive.software import (
    bundled_manager,
    device_classes,
    release_values,
)
from eks_devices.core.families import DESCRIPTORS, EFA, FAMILY
from eks_devices.core.families.base import NodeFacts
from eks_devices.core.knowledge import catalog, charts
from eks_devices.core.model import KarpenterPlan, Plan, PoolPlan, Release, Resolution
from eks_devices.core.names import (
    CONSUMABLE_CAPACITY_ANNOTATION,
    POOL_LABEL,
    eks_manager_label,
    manager_label,
)
from eks_devices.core.values import merge
from eks_devices.core.vocabulary import EFA_ONLY, INTERFACE, NO_SCHEDULE


def efa_interface_layout(itype: catalog.InstanceType) -> tuple[dict[str, Any], ...]:
    """The EKS-recommended launch-template interfaces for an EFA instance type: an ENA `interface`
    at card 0 / device 0, then an EFA-only interface on every EFA-capable card (device 1 on card 0,
    which the primary interface holds). Where the sources do not say which cards take an EFA, the
    first `max_efa_interfaces` cards are assumed (EC2 user guide, "Maximize network bandwidth on
    Amazon EC2 instances with multiple network cards"; EKS user guide, EFA page)."""
    cards = (itype.efa_cards if itype.efa_cards is not None else tuple(range(itype.max_efa_interfaces))
             ) if itype.has_efa else ()
    layout: list[dict[str, Any]] = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": INTERFACE}]
    for card in cards:
        layout.append({"networkCardIndex": card, "deviceIndex": 1 if card == 0 else 0,
                       "interfaceType": EFA_ONLY})
    return tuple(layout)


def needs_efa_layout(spec: Spec, pool: NodePool, managers: dict[Family, Resolution]) -> bool:
    """Whether the toolkit must list the pool's interfaces: every static pool whose EFA is managed.
    Karpenter and Auto Mode attach EFA interfaces only for pods requesting EFA's extended resource
    or when the NodeClass lists them (karpenter-provider-aws v1.14.1 `pkg/providers/instance/
    instance.go` ~706, and its design for EFA on static capacity); a static NodeClaim carries no pod
    requests, so without a list its node gets one ENA interface and no EFA. The EKS page "Manage
    hardware devices on Amazon EKS" keeps the static layout (`advancedNetworking.networkInterfaces`
    / `spec.networkInterfaces`) for static capacity. Managed node groups launch from the toolkit's
    template, which must list them too. Dynamic pools are left unset: Karpenter and Auto Mode put an
    EFA on every EFA-capable card for the pods that ask, which their DRA device metadata assumes."""
    return managers[EFA.name].manager != "none" and spec.provisioning(pool) == "static"


def efa_layouts(types: list[catalog.InstanceType]) -> dict[tuple[tuple[int, int, str], ...], list[str]]:
    """The pool's instance types grouped by the interface layout each needs (one key: one layout)."""
    out: dict[tuple[tuple[int, int, str], ...], list[str]] = {}
    for t in types:
        key = tuple((n["networkCardIndex"], n["deviceIndex"], n["interfaceType"]) for n in efa_interface_layout(t))
        out.setdefault(key, []).append(t.name)
    return out


def _labels(spec: Spec, name: str, pool: NodePool, managers: dict[Family, Resolution]) -> dict[str, str]:
    labels = {POOL_LABEL: name}
    for family, res in managers.items():
        if res.manager in ("none", "inferred"):
            continue  # inferred: no label at all, so Auto Mode decides per node and labels the node itself
        labels[manager_label(family)] = res.manager
        if spec.mode == "auto-mode" and FAMILY[family].auto_mode_label:
            labels[eks_manager_label(family)] = res.manager
    for devices in DESCRIPTORS:
        if devices.node_labels:
            labels.update(devices.node_labels(_node_facts(spec, pool, managers, devices.name)))
    labels.update(pool.labels)
    return labels


def _taints(pool: NodePool, managers: dict[Family, Resolution]) -> tuple[dict[str, str], ...]:
    taints = [t.model_dump(exclude_none=True) for t in pool.taints]
    keys = {t["key"] for t in taints}
    for devices in DESCRIPTORS:  # the family's taint on pools whose devices of it are managed
        if devices.taint and managers[devices.name].manager != "none" and devices.taint not in keys:
            taints.append({"key": devices.taint, "value": "true", "effect": NO_SCHEDULE})
    return tuple(taints)


def _node_facts(spec: Spec, pool: NodePool, managers: dict[Family, Resolution], family: Family) -> NodeFacts:
    return NodeFacts(managers[family].manager, spec.mode, pool.ami, pool.gpu_sharing.strategy,
                     pool.gpu_sharing.replicas,
                     any(catalog.instance_types()[t].has(family) for t in pool.instance_types))


def _bottlerocket(spec: Spec, pool: NodePool, managers: dict[Family, Resolution]) -> dict[str, Any]:
    """The Bottlerocket settings each family's devices need on the pool (its descriptor's
    `bottlerocket_settings`); the user's bottlerocketSettings are merged last and win."""
    if pool.ami != "bottlerocket":
        return {}
    derived: dict[str, Any] = {}
    for devices in DESCRIPTORS:
        if devices.bottlerocket_settings:
            derived = merge(derived, devices.bottlerocket_settings(_node_facts(spec, pool, managers, devices.name)))
    return merge(derived, pool.bottlerocket_settings)


def _uses_consumable_capacity(spec: Spec, pool: NodePool, managers: dict[Family, Resolution]) -> bool:
    """Karpenter's consumable capacity (karpenter.sh/docs/tasks/dra) is for dynamic provisioning only: a static pool's
    nodes exist first, Karpenter never simulates their claims, so they time-slice through the
    driver's GpuConfig (gate TimeSlicingSettings) as on managed node groups, on any version."""
    return (spec.mode == "karpenter" and spec.provisioning(pool) == "dynamic"
            and any(managers[d.name].manager == "dra" for d in DESCRIPTORS if d.pool_sharing)
            and pool.gpu_sharing.strategy == "time-slicing")


def _pool_plan(spec: Spec, name: str, pool: NodePool) -> PoolPlan:
    managers = resolve_pool(spec, pool)
    types = [catalog.instance_types()[t] for t in pool.instance_types]
    layout: tuple[dict[str, Any], ...] | None = None
    if pool.fabric.network_interfaces is not None:
        layout = tuple(n.model_dump(by_alias=True) for n in pool.fabric.network_interfaces)
    elif needs_efa_layout(spec, pool, managers):
        # one layout per pool; types needing another are refused by the EFA rule on uniform static layouts
        layout = efa_interface_layout(min(types, key=lambda t: t.max_efa_interfaces))
    annotations = {}
    if _uses_consumable_capacity(spec, pool, managers):
        annotations[CONSUMABLE_CAPACITY_ANNOTATION] = str(pool.gpu_sharing.replicas)
    releases: dict[Family, str] = {}
    for family, res in managers.items():
        if res.manager != "none":
            releases[family] = (bundled_manager(spec, pool.ami, family, res.manager)
                                or charts.RELEASE_FOR[(family, res.manager)])
    return PoolPlan(
        name=name,
        provisioning=spec.provisioning(pool),
        replicas=pool.replicas,
        instance_types=tuple(pool.instance_types),
        architecture="arm64" if all(t.architecture == "arm64" for t in types) else "x86_64",
        capacity=pool.capacity,
        ami=pool.ami,
        managers=managers,
        labels=_labels(spec, name, pool, managers),
        taints=_taints(pool, managers),
        releases=releases,
        network_interfaces=layout,
        bottlerocket_settings=_bottlerocket(spec, pool, managers),
        node_class_annotations=annotations,
        config=pool,
        ami_version=spec.ami_version(pool),
    )


def _releases(spec: Spec, pools: dict[str, PoolPlan]) -> dict[str, Release]:
    if spec.mode == "auto-mode":
        return {}
    out: dict[str, Release] = {}
    for (family, manager), key in charts.RELEASE_FOR.items():
        served = [p for p in pools.values() if p.releases.get(family) == key]
        if not served:
            continue
        chart = charts.CHARTS[key]
        scope = {manager_label(family): manager}
        toolkit_values = release_values(spec, key, scope, served, list(pools.values()))
        out[key] = Release(
            key=key, family=family, manager=manager, chart=digests.chart_reference(spec, key),
            repository=chart.repository,
            version=spec.chart_versions.get(key, chart.version),  # type: ignore[call-overload]
            namespace=chart.namespace, pools=tuple(p.name for p in served), scope=scope,
            toolkit_values=toolkit_values,
            values=digests.pinned(spec, key, merge(toolkit_values, spec.helm_values.get(key, {}))),  # type: ignore[call-overload]
        )
    return out


def dynamic_dra(pools: Iterable[PoolPlan]) -> set[Family]:
    """The device families some dynamic pool runs a DRA driver for: what Karpenter's DRA gates cover."""
    return {f for p in pools if p.provisioning == "dynamic" for f in FAMILIES if p.manager(f) == "dra"}


KARPENTER_CHARTS = ("karpenter-crd", "karpenter")  # the CRDs first, then the controller without them


def _karpenter(spec: Spec, pools: dict[str, PoolPlan]) -> KarpenterPlan | None:
    if spec.mode != "karpenter":
        return None
    dra = karpenter_dra_settings(dynamic_dra(pools.values()))
    static = any(p.provisioning == "static" for p in pools.values())
    settings: dict[str, Any] = dict(dra)
    if static:
        settings["featureGates"] = {"staticCapacity": True}
    if spec.cluster.existing:  # the team's release: its stated settings are what runs
        return KarpenterPlan(version=spec.cluster.karpenter.version, dra_settings=dra, static_capacity=static,
                             toolkit_values={}, values={"settings": dict(spec.cluster.karpenter.settings or {})},
                             reuse_values=False, installed=False)
    toolkit_values = {"settings": settings}
    return KarpenterPlan(
        version=spec.cluster.karpenter.version,  # the one Karpenter version (chartVersions.karpenter is refused)
        dra_settings=dra, static_capacity=static, toolkit_values=toolkit_values,
        values=digests.pinned(spec, "karpenter", merge(toolkit_values, spec.helm_values.get("karpenter", {}))),
        reuse_values=spec.cluster.karpenter.reuse_values,
        charts={key: digests.chart_reference(spec, key) for key in KARPENTER_CHARTS},
    )


def derive(spec: Spec) -> Plan:
    """The plan's derived part: pools, releases, DeviceClasses and Karpenter's settings (no claims,
    no findings: `planner.build` adds those)."""
    pools = {name: _pool_plan(spec, name, pool) for name, pool in sorted(spec.node_pools.items())}
    releases = _releases(spec, pools)
    return Plan(spec=spec, pools=pools, releases=releases, device_classes=device_classes(spec, pools, releases),
                karpenter=_karpenter(spec, pools))
