"""Rules on the stack's declared claims (`eks-devices:claims`), registered in the rule catalogue.

They read `plan.claims` — each claim's object, families and fit per pool, computed by
`eks_devices.core.derive.fit` — and blame the claim's config path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from eks_devices.core.derive.claims import DRIVER_FAMILIES, class_keys, selector_keys
from eks_devices.core.derive.fit import walk
from eks_devices.core.derive.karpenter_gates import GATES, dra_gates
from eks_devices.core.derive.karpenter_launch import Launch, launches, metadata_of
from eks_devices.core.families import DESCRIPTORS, FAMILY
from eks_devices.core.families.base import DROP
from eks_devices.core.knowledge import catalog, versions
from eks_devices.core.knowledge.device_classes import (
    AUTO_MODE_CLASSES,
    CHANNEL_CLASS,
    CLASS_DRIVERS,
    MIG_CLASS,
    NEURON_CLASS,
)
from eks_devices.core.knowledge.devices import PCIE_ROOT, root_names_published
from eks_devices.core.model import ClaimPlan, Plan, PoolPlan
from eks_devices.core.rules.efa import ALIGNED, ALIGNMENT_WHY, alignment_fix, not_dra
from eks_devices.core.rules.registry import (
    Verdict,
    claim_at,
    dra_fix,
    error,
    pool_entry,
    rule,
    stack_claims,
    warning,
)
from eks_devices.core.vocabulary import FAMILIES

CHANNEL_DRIVER = CLASS_DRIVERS[CHANNEL_CLASS]  # the ComputeDomain classes' driver


def class_family(device_class: str) -> str | None:
    """The device family of an upstream DeviceClass, by the driver it selects."""
    return DRIVER_FAMILIES.get(CLASS_DRIVERS.get(device_class, ""))


# `distinctAttribute` belongs to DRAConsumableCapacity (kubernetes/api v0.36.3 `resource/v1/types.go`).
DISTINCT_ATTRIBUTE_FROM = versions.CONSUMABLE_CAPACITY_KUBERNETES


@rule("claim-distinct-attribute-version",
      "a claim's `distinctAttribute` needs Kubernetes 1.36 (DRAConsumableCapacity; dropped before)")
def _claim_distinct_attribute_version(plan: Plan) -> Iterator[Verdict]:
    if plan.spec.cluster.kubernetes >= DISTINCT_ATTRIBUTE_FROM:
        return
    for claim in stack_claims(plan):
        constraints = claim.built.devices.get("constraints", []) if claim.built else []
        if any("distinctAttribute" in c for c in constraints):
            own = [i for i, c in enumerate(claim.config.constraints) if c.distinct_attribute is not None]
            yield error(claim_at(claim, f"constraints.{own[0]}.distinctAttribute" if own else "constraints"),
                        f"the claim spreads devices with distinctAttribute, which Kubernetes "
                        f"{plan.spec.cluster.version} drops (its DRAConsumableCapacity gate is off before 1.36): "
                        "the API server then refuses the constraint as naming no attribute",
                        'use cluster.version "1.36" or later, or drop the distinctAttribute entry from constraints '
                        '(before 1.36 no constraint asks for distinct values; matchAttribute asks for one shared '
                        'value, the opposite)')


@rule("extended-resource-not-dra",
      "extended-resource requests (a device plugin's resources) on Karpenter DRA pools are not DRA requests (warning)",
      modes=("karpenter",))
def _extended_resource_not_dra(plan: Plan) -> Iterator[Verdict]:
    for claim in stack_claims(plan):
        if claim.config.kind != "extended-resource":
            continue
        for pool_name in claim.config.pools:
            pool = plan.pools.get(pool_name)
            if pool is None:
                continue
            dra = [f for f in claim.families if pool.manager(f) == "dra"]
            if dra:
                names = ", ".join(k for k in sorted(claim.config.extended_resources))
                yield warning(claim_at(claim, "extendedResources"),
                              f"{names} is requested as an extended resource on pool {pool_name}, whose "
                              f"{'/'.join(dra)} devices are managed by DRA: Karpenter does not treat such a Pod "
                              "as a DRA Pod and will not provision nodes for it",
                              f"declare the devices as a claim ({'/'.join(d.short_key for d in DESCRIPTORS)}) and "
                              "reference it from the Pod, "
                              "or target a device-plugin pool")


def _request_families(claim: ClaimPlan) -> dict[str, set[str]]:
    """Each request's device families (its subrequests' too), from the classes' drivers."""
    out: dict[str, set[str]] = {}
    for key, device_class in walk(claim.built.devices.get("requests", []) if claim.built else []):
        family = class_family(device_class)
        if family:
            out.setdefault(key.split("/", 1)[0], set()).add(family)
    return out


def aligned_families(claim: ClaimPlan) -> tuple[str, ...]:
    """The families a claim's matchAttribute constraints tie together (GPU+EFA on a PCIe root, Neuron+EFA
    on a device group); empty when no constraint spans two families."""
    by_request = _request_families(claim)
    found: set[str] = set()
    for constraint in claim.built.devices.get("constraints", []) if claim.built else []:
        if not constraint.get("matchAttribute"):
            continue
        names = constraint.get("requests") or list(by_request)
        families = set().union(*(by_request.get(n, set()) for n in names))
        if len(families) > 1:
            found |= families
    return tuple(f for f in FAMILIES if f in found)


def _alignment_gaps(plan: Plan, claim: ClaimPlan, own: bool = False) -> list[tuple[PoolPlan, list[str]]]:
    """(pool, families it does not serve with DRA) for the claim's aligned families on each target pool
    that has the devices; pools whose own alignment (`alignWith` of their EFA section) fails too are left to that
    rule unless `own`."""
    families = aligned_families(claim)
    out = []
    for name in claim.config.pools:
        pool = plan.pools.get(name)
        if pool is None or not families or (pool.config.fabric.align_with != "none" and not own):
            continue
        if plan.mode == "auto-mode" and any(not FAMILY[f].auto_mode_dra for f in families):  # type: ignore[index]
            continue  # no Neuron DRA at all: claim-device-class-missing says so, with the plugin's way
        wrong = [f for f in families if pool.manager(f) != "none" and not pool.serves(f, "dra")]  # type: ignore[arg-type]
        if wrong:
            out.append((pool, wrong))
    return out


@rule("claim-alignment-needs-dra", "a claim aligning GPU or Neuron devices with EFA targets pools that run DRA for "
      "both (the EFA device plugin publishes no topology)")
def _claim_alignment_needs_dra(plan: Plan) -> Iterator[Verdict]:
    for claim in stack_claims(plan):
        for pool, wrong in _alignment_gaps(plan, claim):
            other = next((f for f in aligned_families(claim) if f in ALIGNED.values()), next(iter(ALIGNED.values())))
            kinds = " and ".join(FAMILY[f].title for f in aligned_families(claim))
            yield error(pool_entry(claim, pool.name),
                        f"claim {claim.name} aligns {kinds} devices, which needs DRA for both device types: "
                        f"{ALIGNMENT_WHY}. On pool {pool.name}, {not_dra(pool, wrong)}",
                        alignment_fix(plan, pool, other, f"target another pool, or drop the alignment from claims."
                                      f"{claim.name} (alignWith, matchAttribute)"))




def _request_of(claim: ClaimPlan, family: str) -> str:
    """How the claim asks for a family, in its own config words."""
    if claim.config.requests is not None:
        return f"the {family} requests"
    return FAMILY[family].short_key + (" and alignWith" if claim.config.align_with != "none" else "")


def _device_keys(claim: ClaimPlan) -> str:
    """The keys that ask for a claim's devices, in its own config words ("neurons, efa and alignWith")."""
    config = claim.config
    keys = list(config.shorthand) or ["requests"] + [k for k in ("constraints", "config") if getattr(config, k)]
    return ", ".join(keys[:-1]) + " and " + keys[-1] if len(keys) > 1 else keys[0]


def _class_missing_why(plan: Plan, claim: ClaimPlan, device_class: str) -> tuple[str, str]:
    """Why a DeviceClass the claim names will not exist, and the fix, by what would create it."""
    family = class_family(device_class)
    targets = [plan.pools[p] for p in claim.config.pools if p in plan.pools]
    known = ", ".join(sorted(c.name for c in plan.device_classes))
    rename = f"name one of {known} in the claim's requests" if known else ""
    if family is None:
        return ("no driver the toolkit knows creates it (no upstream chart names it, and deviceClasses does not "
                "declare it)", rename or "declare it under deviceClasses, or name an upstream class")
    if plan.mode == "auto-mode":
        plugin_only = FAMILY[family].auto_mode_claims  # type: ignore[index]
        if plugin_only:
            return plugin_only[0], plugin_only[1].replace(DROP, _device_keys(claim))
        if device_class not in AUTO_MODE_CLASSES:
            return (f"Auto Mode's built-in drivers offer only {', '.join(AUTO_MODE_CLASSES)} (no MIG, VFIO, "
                    "ComputeDomains or Neuron through DRA)",
                    (rename + ", or " if rename else "") + "use a static Karpenter pool or a managed node group "
                    "(cluster.mode) for it")
        if not plan.spec.cluster.auto_mode.create_device_classes:
            return ("Auto Mode creates no DeviceClasses and the toolkit's creation is off "
                    "(cluster.autoMode.createDeviceClasses: false)", "set cluster.autoMode.createDeviceClasses: true")
    plain = [p for p in targets if p.manager(family) != "none" and not p.serves(family, "dra")]  # type: ignore[arg-type]
    if plain:
        name = FAMILY[family].title
        who = (f"the toolkit creates it only for pools whose {name} devices run DRA, and no pool's do"
               if plan.mode == "auto-mode" else f"only the {name} DRA driver's chart creates it, and no pool runs "
               "that driver")
        return (f"{who}: " + "; ".join(f"on pool {p.name} {not_dra(p, [family])}" for p in plain),
                "; ".join(dra_fix(plan, p, [family]) for p in plain))
    bare = [p for p in targets if p.manager(family) == "none"]  # type: ignore[arg-type]
    if targets and len(bare) == len(targets):
        name = FAMILY[family].title
        return (f"no target pool has {name} devices ("
                + "; ".join(f"{p.name}: {', '.join(p.instance_types)}" for p in bare) + ")",
                f"target a pool whose instanceTypes have {name} devices, or drop {_request_of(claim, family)} from "
                f"claims.{claim.name}")
    if CLASS_DRIVERS[device_class] == CHANNEL_DRIVER:
        dynamic = [p.name for p in targets if plan.mode == "karpenter" and p.provisioning == "dynamic"]
        static = (f" (Karpenter serves them on static pools only: make {', '.join(dynamic)} provisioning: static "
                  "with replicas)") if dynamic else ""
        return ("the NVIDIA DRA driver serves ComputeDomains only where a pool turns them on",
                "set " + " and ".join(f"nodePools.{p.name}.computeDomains: true" for p in targets) + static)
    return (f"the {FAMILY[family].title} DRA driver of this stack does not create it (its chart creates "
            f"{', '.join(c.name for c in plan.device_classes if class_family(c.name) == family) or 'none'})",
            rename or "name a class the driver creates")


@rule("claim-device-class-missing", "a claim names a DeviceClass that will not exist in this mode, and why")
def _claim_device_class_missing(plan: Plan) -> Iterator[Verdict]:
    """One finding per missing class, at the key that names it (`requests.0.exactly.deviceClassName`, or the
    short shape's `efa`): the key the user edits when the fix is to name another class or drop the request."""
    for claim in stack_claims(plan):
        if not claim.missing_classes or _alignment_gaps(plan, claim, own=True) or mig_dynamic_pools(plan, claim):
            continue  # claim-alignment-needs-dra / karpenter-mig-claim-static-only say why
        missing = claim.missing_classes
        if plan.mode == "auto-mode" and NEURON_CLASS in missing:
            missing = (NEURON_CLASS,)  # no Neuron DRA in Auto Mode: the rest of the claim cannot help it
        keys = class_keys(claim.config)
        for device_class in missing:
            why, fix = _class_missing_why(plan, claim, device_class)
            first, *more = keys.get(device_class) or [""]
            also = f" (also named at {', '.join(claim_at(claim, k) for k in more)})" if more else ""
            yield error(claim_at(claim, first),
                        f"the claim names DeviceClass {device_class}{also}, which will not exist in this "
                        f"{plan.mode} cluster, so its Pods stay Pending: {why}", fix)


@rule("claim-unsatisfiable", "no instance type of the claim's pool can allocate it (counts, selectors, topology)")
def _claim_unsatisfiable(plan: Plan) -> Iterator[Verdict]:
    for claim in stack_claims(plan):
        if claim.missing_classes:
            continue  # claim-device-class-missing says it better
        covered = {p.name for p, _ in _alignment_gaps(plan, claim)} | mig_dynamic_pools(plan, claim)
        for pool_name, fit in sorted(claim.pools.items()):
            if fit.fits or not fit.settled or pool_name in covered:
                continue
            pool = plan.pools[pool_name]
            blocked = [f for f in claim.families if pool.manager(f) != "none" and not pool.serves(f, "dra")]
            fix = (f"{dra_fix(plan, pool, blocked)}; or target pools that run the {'/'.join(blocked)} DRA driver"
                   if fit.blocked and blocked else _mig_fix(claim, pool) or
                   "change the claim (count, model, selectors, alignWith) or its pools to ones whose instance "
                   "types can satisfy it; `eks-devices preview` shows what each instance type offers")
            yield error(pool_entry(claim, pool_name),
                        f"claim {claim.name} cannot be allocated on pool {pool_name}: {fit.reason}", fix)


def _mig_fix(claim: ClaimPlan, pool: PoolPlan) -> str:
    """A MIG claim on a pool whose GPUs are not partitioned into its profile: the pool's gpuSharing is the fix."""
    if not _mig_requests(claim):
        return ""
    sharing = pool.config.gpu_sharing
    wanted = claim.config.mig.profile if claim.config.mig else "<the claim's profile>"
    if sharing.strategy != "mig":
        return (f"partition the pool's GPUs: set nodePools.{pool.name}.gpuSharing to {{strategy: mig, profile: "
                f"{wanted}}}, or target a pool that has MIG devices")
    if claim.config.mig and sharing.profile != wanted:
        return (f"set nodePools.{pool.name}.gpuSharing.profile: {wanted}, or claim the pool's profile "
                f"(claims.{claim.name}.mig.profile: {sharing.profile})")
    return ""


def _mig_requests(claim: ClaimPlan) -> bool:
    return any(c == MIG_CLASS for _, c in walk(claim.built.devices.get("requests", []) if claim.built else []))


def mig_dynamic_pools(plan: Plan, claim: ClaimPlan) -> set[str]:
    """The dynamic Karpenter pools a MIG claim targets: Karpenter launches no node for it there."""
    if plan.mode != "karpenter" or not _mig_requests(claim):
        return set()
    return {p for p in claim.config.pools if p in plan.pools and plan.pools[p].provisioning == "dynamic"}


@rule("claim-fit-undetermined", "a claim whose fit the offline model cannot settle: the search gave up, or it fails "
      "only on a PCIe layout, or on a selector reading PCIe root names, that is modelled rather than published "
      "(warning)")
def _claim_fit_undetermined(plan: Plan) -> Iterator[Verdict]:
    for claim in stack_claims(plan):
        for pool_name, fit in sorted(claim.pools.items()):
            if not fit.settled:
                yield warning(pool_entry(claim, pool_name),
                              f"could not decide whether claim {claim.name} fits pool {pool_name}: {fit.reason}",
                              "check it on a real node (its ResourceSlices show the layout), or simplify the claim "
                              "(fewer requests or constraints)")


# Attributes Karpenter 1.15 knows before a node exists: those its AWS provider's DRA metadata carries
# (karpenter-provider-aws v1.15.0 to v1.15.2 `pkg/providers/drametadata`, the same names in each;
# karpenter.sh/docs/tasks/dra), held to each release's metadata
# by tests/e2e/test_device_inventory.py; others only in matchAttribute. The metadata also carries each device's
# PCIe root, as the name scraped from a running instance of the type: Karpenter evaluates a selector naming one
# (its scheduler launches p5 for `pcieRoot == 'pci0000:44'`, tests/e2e/test_karpenter_launch.py). The device
# layouts keep those names, so the launch model (karpenter-claim-not-launched) and the fit check judge such a
# selector; only for a type Karpenter has metadata for and the layouts lack could the toolkit not say.
KARPENTER_SELECTABLE = {d.dra_driver: set(d.karpenter_selectable) for d in DESCRIPTORS if d.karpenter_selectable}
KARPENTER_SCRAPED_NAMES = {tuple(PCIE_ROOT.split("/"))}
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
      "claims on dynamic Karpenter pools select only attributes known before launch (a named PCIe root on a type "
      "whose root names the toolkit lacks: warning)",
      modes=("karpenter",))
def _karpenter_claim_selector_attributes(plan: Plan) -> Iterator[Verdict]:
    for claim in stack_claims(plan):
        if claim.built is None:
            continue
        dynamic = [p for p in claim.config.pools if p in plan.pools and plan.pools[p].provisioning == "dynamic"]
        if not dynamic or mig_dynamic_pools(plan, claim):
            continue  # karpenter-mig-claim-static-only: no node is launched for it at all
        # each of the claim's own selectors at its key; a short shape's at the claim (it builds them itself)
        expressions = selector_keys(claim.config) if claim.config.requests is not None else [
            ("", e) for e in _expressions(claim.built.manifest)]
        by_key: dict[str, list[str]] = {}
        scraped: dict[str, list[str]] = {}
        for key, expression in expressions:
            for domain, name in _ATTRIBUTE.findall(expression):
                if (domain, name) in KARPENTER_SCRAPED_NAMES:
                    scraped.setdefault(key, []).append(f"{domain}/{name}")
                elif name not in KARPENTER_SELECTABLE.get(domain, set()):
                    by_key.setdefault(key, []).append(f"{domain}/{name}")
        metadata = metadata_of(plan)  # a type whose EFAs it describes bare has no root to name: judged, not unknown
        unnamed = sorted({t for p in dynamic for t in plan.pools[p].instance_types
                          if metadata.launchable(catalog.instance_types()[t]) and not root_names_published(t)
                          and not metadata.bare_efas(catalog.instance_types()[t])})
        for key, names in scraped.items() if unnamed else ():
            yield warning(claim_at(claim, key),
                          f"selectors name a value of {', '.join(sorted(set(names)))}: Karpenter launches a node for "
                          f"dynamic pool(s) {', '.join(dynamic)} only if the names it scraped from running instances "
                          f"of the type match, which the toolkit cannot check for {', '.join(unnamed)} (its device "
                          "layouts lack their root names)",
                          "in the requests' selectors, name no root: align devices with a matchAttribute constraint "
                          "on it instead, or target a static pool, whose nodes publish their roots before the claim")
        for key, unknown in by_key.items():
            yield error(claim_at(claim, key),
                        f"selectors read {', '.join(sorted(set(unknown)))}, which Karpenter cannot know before "
                        f"launching a node for dynamic pool(s) {', '.join(dynamic)}: the Pod never gets a node",
                        "in the requests' selectors, select on productName, architecture, brand, cudaComputeCapability "
                        "or type (GPUs) and "
                        "pciDevice, pciVendor, pciSubsystem, rdma or numaNode (EFA); use pcieRoot and driver "
                        "versions only in matchAttribute constraints, or target a static pool")


def _not_launched_fix(claim: ClaimPlan, pool: str, launch: Launch) -> str:
    static = f"or target a static pool (nodePools.{pool}.provisioning: static with replicas), whose nodes exist " \
             "before the claim"
    if launch.cause == "refused":
        return f"drop the distinctAttribute constraint from claims.{claim.name}.constraints, {static}"
    return ("change the claim so that the devices Karpenter's metadata describes satisfy it (whole GPUs, an EFA on "
            f"every EFA-capable card, the gated drivers only), {static}")


@rule("karpenter-claim-not-launched", "a claim the nodes of its dynamic Karpenter pool would serve, for which "
      "Karpenter's scheduling simulation launches no node", modes=("karpenter",))
def _karpenter_claim_not_launched(plan: Plan) -> Iterator[Verdict]:
    """Karpenter launches a node for a pending DRA Pod only when the devices its metadata describes satisfy the
    claim and its claim validation accepts it (derive/karpenter_launch.py); a claim the running node would
    serve can still never get one. Left to their own rules: MIG claims, ComputeDomain channels
    (karpenter-compute-domains-static-only), missing classes, the DRA gates."""
    gated = dra_gates(plan.karpenter.values.get("settings")) if plan.karpenter else set()
    for claim in stack_claims(plan):
        if claim.built is None or claim.missing_classes:
            continue
        if any(f in GATES and f not in gated for f in claim.families):
            continue  # karpenter-dra-gates-match-drivers: the release's gates leave a family out
        if any(CLASS_DRIVERS.get(c) == CHANNEL_DRIVER for _, c in walk(claim.built.devices.get("requests", []))):
            continue
        mig = mig_dynamic_pools(plan, claim)
        for name, found in sorted(launches(plan, claim).items()):
            fit = claim.pools.get(name)
            if found.launches or not found.settled or found.cause == "ignored" or name in mig or not (fit and fit.fits):
                continue
            refused = [i for i, c in enumerate(claim.config.constraints) if c.distinct_attribute is not None]
            where = claim_at(claim, f"constraints.{refused[0]}") if found.cause == "refused" and refused else \
                pool_entry(claim, name)
            yield error(where, f"Karpenter launches no node for claim {claim.name} on dynamic pool {name}, whose "
                        f"nodes would serve it, so its Pods stay Pending: {found.reason}",
                        _not_launched_fix(claim, name, found))
