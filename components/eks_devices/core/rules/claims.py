"""Rules on the stack's declared claims (`eks-devices:claims`), registered in the rule catalogue.

They read `plan.claims` — each claim's object, families and fit per pool, computed by
`eks_devices.core.derive.fit` — and blame the claim's config path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from eks_devices.core.model import ClaimPlan, Plan
from eks_devices.core.rules.registry import Verdict, error, rule, warning

EFA_DRIVER = "dra.net"


def _at(claim: ClaimPlan, field: str = "") -> str:
    return f"claims.{claim.name}" + (f".{field}" if field else "")


def _claims(plan: Plan) -> Iterator[ClaimPlan]:
    yield from plan.claims


# `distinctAttribute` belongs to DRAConsumableCapacity: alpha (off) in 1.34-1.35, beta (on) from 1.36
# (kubernetes/api v0.36.3 `resource/v1/types.go`).
DISTINCT_ATTRIBUTE_FROM = (1, 36)


@rule("claim-distinct-attribute-version",
      "a claim's `distinctAttribute` needs Kubernetes 1.36 (DRAConsumableCapacity; dropped before)")
def _claim_distinct_attribute_version(plan: Plan) -> Iterator[Verdict]:
    if plan.spec.cluster.kubernetes >= DISTINCT_ATTRIBUTE_FROM:
        return
    for claim in _claims(plan):
        constraints = claim.built.devices.get("constraints", []) if claim.built else []
        if any("distinctAttribute" in c for c in constraints):
            yield error(_at(claim, "constraints"),
                        f"the claim spreads devices with distinctAttribute, which Kubernetes "
                        f"{plan.spec.cluster.version} drops (its DRAConsumableCapacity gate is off before 1.36): "
                        "the API server then refuses the constraint as naming no attribute",
                        'use cluster.version "1.36" or later, or express the claim with matchAttribute')


@rule("efa-not-shareable", "no shared ResourceClaim with EFA devices (one Pod per EFA)")
def _efa_not_shareable(plan: Plan) -> Iterator[Verdict]:
    for claim in _claims(plan):
        if claim.shared and "efa" in claim.families:
            yield error(_at(claim, "kind"),
                        "a shared ResourceClaim includes EFA devices, but an EFA is allocated to one Pod at a "
                        "time: the second Pod naming the claim never starts",
                        "use kind: template (one claim per Pod), or move the EFA request to its own template")


@rule("extended-resource-not-dra",
      "extended-resource requests (`nvidia.com/gpu`, …) on Karpenter DRA pools are not DRA requests (warning)",
      modes=("karpenter",))
def _extended_resource_not_dra(plan: Plan) -> Iterator[Verdict]:
    for claim in _claims(plan):
        if claim.config.kind != "extended-resource":
            continue
        for pool_name in claim.config.pools:
            pool = plan.pools.get(pool_name)
            if pool is None:
                continue
            dra = [f for f in claim.families if pool.manager(f) == "dra"]
            if dra:
                names = ", ".join(k for k in sorted(claim.config.extended_resources))
                yield warning(_at(claim, "extendedResources"),
                              f"{names} is requested as an extended resource on pool {pool_name}, whose "
                              f"{'/'.join(dra)} devices are managed by DRA: Karpenter does not treat such a Pod "
                              "as a DRA Pod and will not provision nodes for it",
                              "declare the devices as a claim (gpus/efa/neurons) and reference it from the Pod, "
                              "or target a device-plugin pool")


@rule("claim-device-class-missing", "a claim names a DeviceClass that will not exist in this mode")
def _claim_device_class_missing(plan: Plan) -> Iterator[Verdict]:
    known = sorted(c.name for c in plan.device_classes)
    for claim in _claims(plan):
        if claim.missing_classes:
            yield error(_at(claim),
                        f"the claim names DeviceClass {', '.join(claim.missing_classes)}, which no driver or the "
                        f"toolkit creates in this {plan.mode} cluster: its Pods stay Pending",
                        f"name one of {', '.join(known) or 'no classes (no pool runs a DRA driver)'} in the claim's "
                        "requests, or set the matching pool's devices to dra")


@rule("claim-unsatisfiable", "no instance type of the claim's pool can allocate it (counts, selectors, topology)")
def _claim_unsatisfiable(plan: Plan) -> Iterator[Verdict]:
    for claim in _claims(plan):
        if claim.missing_classes:
            continue  # claim-device-class-missing says it better
        for pool_name, fit in sorted(claim.pools.items()):
            if fit.fits or not fit.settled:
                continue
            yield error(_at(claim, "pools"),
                        f"claim {claim.name} cannot be allocated on pool {pool_name}: {fit.reason}",
                        "change the claim (count, model, selectors, alignWith) or its pools to ones whose instance "
                        "types can satisfy it; `eks-devices preview` shows what each instance type offers")


@rule("claim-fit-undetermined", "a claim whose fit the offline model cannot settle: the search gave up, or it fails "
      "only on a PCIe layout that is modelled rather than published (warning)")
def _claim_fit_undetermined(plan: Plan) -> Iterator[Verdict]:
    for claim in _claims(plan):
        for pool_name, fit in sorted(claim.pools.items()):
            if not fit.settled:
                yield warning(_at(claim, "pools"),
                              f"could not decide whether claim {claim.name} fits pool {pool_name}: {fit.reason}",
                              "check it on a real node (its ResourceSlices show the layout), or simplify the claim "
                              "(fewer requests or constraints)")


# Attributes Karpenter 1.15 knows before a node exists (karpenter.sh/docs/tasks/dra); others only in matchAttribute.
KARPENTER_SELECTABLE = {
    "gpu.nvidia.com": {"productName", "architecture", "brand", "cudaComputeCapability", "type"},
    "dra.net": {"pciDevice", "pciVendor", "pciSubsystem", "rdma", "numaNode"},
}
_ATTRIBUTE = re.compile(r"""attributes\s*\[\s*['"]([^'"]+)['"]\s*\]\s*\.\s*(\w+)""")


def _expressions(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expression" and isinstance(value, str):
                yield value
            else:
                yield from _expressions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _expressions(item)


@rule("karpenter-claim-selector-attributes",
      "claims on dynamic Karpenter pools select only attributes known before launch", modes=("karpenter",))
def _karpenter_claim_selector_attributes(plan: Plan) -> Iterator[Verdict]:
    for claim in _claims(plan):
        if claim.built is None:
            continue
        dynamic = [p for p in claim.config.pools if p in plan.pools and plan.pools[p].provisioning == "dynamic"]
        if not dynamic:
            continue
        unknown = sorted({f"{domain}/{name}" for expression in _expressions(claim.built.manifest)
                          for domain, name in _ATTRIBUTE.findall(expression)
                          if name not in KARPENTER_SELECTABLE.get(domain, set())})
        if unknown:
            yield error(_at(claim),
                        f"selectors read {', '.join(unknown)}, which Karpenter cannot know before launching a "
                        f"node for dynamic pool(s) {', '.join(dynamic)}: the Pod never gets a node",
                        "in the requests' selectors, select on productName, architecture, brand, cudaComputeCapability "
                        "or type (GPUs) and "
                        "pciDevice, pciVendor, pciSubsystem, rdma or numaNode (EFA); use pcieRoot and driver "
                        "versions only in matchAttribute constraints, or target a static pool")
