"""Karpenter rules: DRA gates, static capacity, labels, AMI pins, upgrades, shared instance types."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.derive import shape_scope
from eks_devices.core.derive.karpenter_gates import GATES, dra_gates, gate_clashes, karpenter_dra_settings
from eks_devices.core.derive.karpenter_launch import metadata_of
from eks_devices.core.derive.pools import dynamic_dra
from eks_devices.core.derive.resources import KARPENTER_POOL, Facts
from eks_devices.core.knowledge import amis, versions
from eks_devices.core.knowledge.karpenter_metadata import Metadata
from eks_devices.core.manifests.nodes import refused_template_label
from eks_devices.core.model import Plan, PoolPlan
from eks_devices.core.names import manager_label
from eks_devices.core.rules.registry import (
    Blame,
    Verdict,
    at,
    dra_pools,
    error,
    on_resources,
    pool_types,
    refused_labels,
    rule,
    warning,
)
from eks_devices.core.values import dig
from eks_devices.core.vocabulary import reserves


@rule("karpenter-dra-gates-exclusive", "`enableDRA` never with the single gates or `ignoreDRARequests`",
      modes=("karpenter",))
def _karpenter_dra_gates_exclusive(plan: Plan) -> Iterator[Verdict]:
    if plan.karpenter is None:
        return
    clash = gate_clashes(plan.karpenter.values.get("settings"))
    if clash and not plan.karpenter.installed:
        for key in clash:  # each key set with enableDRA, at its own path: the one to remove
            yield error(f"cluster.karpenter.settings.{key}",
                        f"the cluster's Karpenter release sets settings.enableDRA together with settings.{key}: its "
                        "chart fails to render on the next upgrade",
                        f"keep one of them on the release, {versions.KARPENTER_RESET_THEN_REUSE}, and state what it "
                        "then runs in cluster.karpenter.settings")
    else:
        for key in clash:
            yield error(f"helmValues.karpenter.settings.{key}",
                        f"settings.enableDRA is set together with settings.{key}: the Karpenter chart fails to render",
                        f"remove settings.{key} (and settings.enableDRA) from helmValues.karpenter; the toolkit "
                        "derives the DRA settings from the pools")


@on_resources("karpenter-dra-gates-exclusive")
def _karpenter_dra_gates_exclusive_resources(facts: Facts) -> Iterator[Blame]:
    for release in facts.karpenter:
        if clash := gate_clashes(dig(release.props, "values.settings")):
            yield Blame(release.urn, "settings.enableDRA is set together with "
                        f"{', '.join('settings.' + c for c in clash)}: the Karpenter chart fails to render; keep "
                        "only settings.enableDRA")


@rule("karpenter-dra-gates-match-drivers", "Karpenter's DRA gates equal the DRA drivers dynamic pools run",
      modes=("karpenter",))
def _karpenter_dra_gates_match(plan: Plan) -> Iterator[Verdict]:
    if plan.karpenter is None:
        return
    enabled = dra_gates(plan.karpenter.values.get("settings"))
    running = dra_gates(karpenter_dra_settings(dynamic_dra(plan.pools.values())))
    if not plan.karpenter.installed:  # the team's release may serve its own NodePools too: only what ours lack
        if missing := sorted(running - enabled):
            pools = sorted({p.name for p, f in dra_pools(plan) if p.provisioning == "dynamic" and f in missing})
            stated = plan.karpenter.values["settings"]
            # enableDRA where every gate is wanted and no single gate is set (the chart refuses the two together);
            # else the missing single gates, which the chart takes beside the ones set
            singles = any(dig(stated, f"awsFeatureGates.{g}") is not None for g in GATES.values())
            key = "enableDRA" if running == set(GATES) and not singles else f"awsFeatureGates.{GATES[missing[0]]}"
            want = "settings.enableDRA: true" if key == "enableDRA" else " and ".join(
                f"settings.awsFeatureGates.{GATES[f]}: true" for f in missing) + (
                " in place of settings.enableDRA (the chart refuses both)" if "enableDRA" in stated else "")
            yield error(f"cluster.karpenter.settings.{key}",
                        f"dynamic pools {', '.join(pools)} run the {' and '.join(missing)} DRA driver, but the "
                        f"cluster's Karpenter release has no DRA gate for {' or '.join(missing)}: it never launches "
                        "nodes for their ResourceClaims, and their Pods stay Pending",
                        f"set {want} on the cluster's Karpenter release, {versions.KARPENTER_RESET_THEN_REUSE}, and "
                        "state it in cluster.karpenter.settings; or make those pools static")
        return
    if enabled != running:
        override = (plan.spec.helm_values.get("karpenter") or {}).get("settings") or {}  # type: ignore[call-overload]
        keys = [k for k in ("enableDRA", "awsFeatureGates") if k in override] or [""]  # the override's DRA keys
        yield error(f"helmValues.karpenter.settings{'.' + keys[0] if keys[0] else ''}",
                    f"Karpenter's DRA gates cover {sorted(enabled) or 'nothing'} but dynamic pools run DRA "
                    f"drivers for {sorted(running) or 'nothing'}: Karpenter would launch nodes that cannot "
                    "serve the claims, or ignore claims it should serve",
                    "remove the DRA settings from helmValues.karpenter; the toolkit derives them")


@on_resources("karpenter-dra-gates-match-drivers")
def _karpenter_dra_gates_match_resources(facts: Facts) -> Iterator[Blame]:
    """The families a dynamic Karpenter NodePool's nodes run a DRA driver for, as the proof finds them,
    against the gates each Karpenter release turns on."""
    pools = [s for s in facts.shapes if s.source == KARPENTER_POOL]
    if not pools:
        return
    dra = {r.family for shape in pools if shape.provisioning == "dynamic" for t in shape.instance_types
           for r in shape_scope.running(shape, facts.installers, t) if r.manager == "dra"}
    needed = dra_gates(karpenter_dra_settings(dra))
    for release in facts.karpenter:
        enabled = dra_gates(dig(release.props, "values.settings"))
        if enabled != needed:
            yield Blame(release.urn, f"Karpenter's DRA gates cover {sorted(enabled) or 'nothing'} but dynamic "
                        f"NodePools run DRA drivers for {sorted(needed) or 'nothing'}: Karpenter would launch nodes "
                        "that cannot serve the claims, or ignore claims it should serve. Set settings.enableDRA "
                        "(NVIDIA and EFA) or settings.awsFeatureGates.draNVIDIAGPU / draEFA to match")


@rule("node-pool-karpenter-labels", "no NodePool labels in the karpenter.sh / karpenter.k8s.aws domains or that "
      "Karpenter sets itself", modes=("auto-mode", "karpenter"))
def _node_pool_karpenter_labels(plan: Plan) -> Iterator[Verdict]:
    """Auto Mode and Karpenter pools become `karpenter.sh/v1` NodePools, whose CRD refuses template
    labels in the karpenter.sh and karpenter.k8s.aws domains and the labels Karpenter sets on each
    node, so `pulumi up` would fail on the NodePool."""
    for pool, key in refused_labels(plan, refused_template_label):
        yield error(at(pool, f"labels.{key}"),
                    f"Karpenter's NodePool refuses the template label {key}: Karpenter keeps it for itself",
                    "rename it in labels to a key under your own prefix")


@rule("karpenter-static-capacity-gate", "static pools keep the StaticCapacity gate on", modes=("karpenter",))
def _karpenter_static_capacity(plan: Plan) -> Iterator[Verdict]:
    if plan.karpenter is None or not plan.karpenter.static_capacity:
        return
    if dig(plan.karpenter.values, "settings.featureGates.staticCapacity") is not True and not plan.karpenter.installed:
        yield error("cluster.karpenter.settings.featureGates.staticCapacity",
                    "static pools need Karpenter's settings.featureGates.staticCapacity: true, which the cluster's "
                    "Karpenter release does not set", "set settings.featureGates.staticCapacity: true on the release, "
                    f"{versions.KARPENTER_RESET_THEN_REUSE}, and state it in cluster.karpenter.settings")
    elif dig(plan.karpenter.values, "settings.featureGates.staticCapacity") is not True:
        yield error("helmValues.karpenter.settings.featureGates.staticCapacity",
                    "static pools need settings.featureGates.staticCapacity: true, which an override turns off",
                    "remove settings.featureGates.staticCapacity from helmValues.karpenter")


@rule("karpenter-ami-latest", "static and reserved-capacity pools pin their AMI (warning)", modes=("karpenter",))
def _ami_latest(plan: Plan) -> Iterator[Verdict]:
    """`@latest` drifts every node on each AMI release (knowledge/amis.py): a static pool or one on
    reserved capacity then loses nodes it cannot get back at will."""
    for pool in plan.pools.values():
        if (pool.provisioning == "static" or reserves(pool.capacity)) and pool.ami_version == amis.LATEST:
            what = ", ".join(w for w in (pool.provisioning if pool.provisioning == "static" else "",
                                         pool.capacity if reserves(pool.capacity) else "") if w)
            example = amis.KARPENTER_ALIAS_VERSIONS[pool.ami][1]
            yield warning(at(pool, "amiVersion"),
                          f"the {what} pool selects {amis.alias(pool.ami, amis.LATEST)}: {amis.KARPENTER_LATEST_DRIFT}",
                          f"pin the AMI: set nodePools.{pool.name}.amiVersion (or cluster.amiVersion) to {example}, "
                          "and move it forward deliberately (docs/amis.md)")


@rule("karpenter-reuse-values", "upgrades never reuse stale values", modes=("karpenter",))
def _karpenter_reuse_values(plan: Plan) -> Iterator[Verdict]:
    if plan.karpenter is not None and plan.karpenter.reuse_values:
        yield error("cluster.karpenter.reuseValues",
                    "reusing old values keeps ignoreDRARequests: true from earlier charts and the DRA "
                    "settings then fail to render", "set cluster.karpenter.reuseValues: false (the toolkit "
                    "resets values and applies the declared ones)")


def _dynamic_dra_types(pool: PoolPlan, family: str, metadata: Metadata) -> set[str]:
    """The pool's types Karpenter may launch for a `family` DRA claim: the family's hardware and the running
    release's device metadata for it (which holds for every NodePool allowing the type, whatever its manager)."""
    if pool.provisioning != "dynamic":
        return set()
    return {t.name for t in pool_types(pool) if metadata.covers(t, family)}


@rule("karpenter-shared-instance-types", "dynamic pools sharing an instance type with different managers for a "
      "family: DRA pods must select the DRA pool (warning)", modes=("karpenter",))
def _karpenter_shared_instance_types(plan: Plan) -> Iterator[Verdict]:
    """Karpenter's DRA device metadata applies to every NodePool that allows a supported instance type
    (EKS "Manage hardware devices on Amazon EKS", Using DRA with Karpenter): for a DRA claim it may
    launch the type from a pool that runs the device plugin, where the claim never allocates.
    Each pool's types are read once (an index per family and type), so the rule grows with pools x
    instance types, not with pairs of pools."""
    without_dra: dict[tuple[str, str], list[str]] = {}  # (family, type) → the non-DRA pools allowing it
    metadata = metadata_of(plan)
    for family in {family for _, family in dra_pools(plan)}:
        for other in plan.pools.values():
            if other.manager(family) != "dra":  # type: ignore[arg-type]
                for type_ in _dynamic_dra_types(other, family, metadata):
                    without_dra.setdefault((family, type_), []).append(other.name)
    for pool, family in dra_pools(plan):
        shared: dict[str, list[str]] = {}
        for type_ in sorted(_dynamic_dra_types(pool, family, metadata)):
            for name in without_dra.get((family, type_), ()):
                shared.setdefault(name, []).append(type_)
        if shared:
            listing = "; ".join(f"{name} ({', '.join(types)})" for name, types in sorted(shared.items()))
            label = manager_label(family)  # type: ignore[arg-type]
            yield warning(at(pool, "instanceTypes"),
                          f"dynamic pools {listing} allow the same instance types without the {family} DRA driver: "
                          f"Karpenter may launch a node from them for a {family} DRA claim, which then never "
                          "allocates", f"give every {family} DRA pod the nodeSelector {label}: dra (the toolkit's "
                          "claims carry it), or list these instanceTypes in one of the pools only")


@rule("karpenter-enable-dra-one-driver", "`enableDRA` assumes both DRA drivers on every dynamic DRA pool (warning)",
      modes=("karpenter",))
def _karpenter_enable_dra_one_driver(plan: Plan) -> Iterator[Verdict]:
    """The derived `settings.enableDRA` turns on Karpenter's NVIDIA and EFA metadata for every pool
    (EKS "Manage hardware devices on Amazon EKS": "assumes that both the NVIDIA and EFA DRA drivers run on
    your DRA nodes"); a dynamic DRA pool running one of them gets nodes launched for the other's claims."""
    if plan.karpenter is None:
        return
    # the settings Karpenter runs: the derived ones, or those an existing cluster's release states
    settings = plan.karpenter.dra_settings if plan.karpenter.installed else plan.karpenter.values["settings"]
    if not settings.get("enableDRA"):
        return
    for pool in plan.pools.values():
        running = [f for f in GATES if pool.manager(f) == "dra"]  # type: ignore[arg-type]
        if len(running) != 1:
            continue
        missing = next(f for f in GATES if f not in running)
        types = sorted(_dynamic_dra_types(pool, missing, metadata_of(plan)))
        if types:
            yield warning(at(pool, f"devices.{missing}"),
                          f"settings.enableDRA is on (the dynamic pools run both DRA drivers), so Karpenter assumes "
                          f"{', '.join(types)} nodes of this pool offer {missing} DRA devices, but the pool runs "
                          f"the {missing} {pool.manager(missing)}: {missing} DRA claims can launch nodes here that "  # type: ignore[arg-type]
                          "never serve them",
                          f"set devices.{missing}: dra on this pool, or give every {missing} DRA pod the "
                          f"nodeSelector {manager_label(missing)}: dra")  # type: ignore[arg-type]
