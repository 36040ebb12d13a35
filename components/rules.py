"""The rule catalogue: every constraint of the EKS device-management page, checked before deploy.

Each rule is one small function registered under a stable slug. It reads the Plan (and the Spec
inside it) and yields Findings: severity, the config path it blames, what is wrong, and the fix.
`error` findings block `pulumi up` and make the CLI exit 1; `warning` findings are printed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from . import catalog, scope, versions
from .plan import Plan, PoolPlan, eks_manager_label, karpenter_dra_settings
from .spec import FAMILIES
from .values import dig

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    slug: str
    severity: Severity
    path: str
    message: str
    fix: str

    def as_dict(self) -> dict[str, str]:
        return {"slug": self.slug, "severity": self.severity, "path": self.path,
                "message": self.message, "fix": self.fix}


@dataclass(frozen=True)
class Rule:
    slug: str
    summary: str
    check: Callable[[Plan], Iterable[Finding]]


RULES: dict[str, Rule] = {}


Check = Callable[[Plan], Iterable[Finding]]


def rule(slug: str, summary: str) -> Callable[[Check], Check]:
    """Register a check under a stable slug."""

    def register(check: Check) -> Check:
        RULES[slug] = Rule(slug, summary, check)
        return check
    return register


def evaluate(plan: Plan) -> list[Finding]:
    """Run every rule; findings sorted errors first, then by path, for stable output."""
    found = [f for r in RULES.values() for f in r.check(plan)]
    return sorted(found, key=lambda f: (f.severity != "error", f.path, f.slug))


def _at(pool: PoolPlan, field: str) -> str:
    return f"nodePools.{pool.name}.{field}"


def _dra_pools(plan: Plan, families: Iterable[str] = FAMILIES) -> Iterator[tuple[PoolPlan, str]]:
    for pool in plan.pools.values():
        for family in families:
            if pool.manager(family) == "dra":  # type: ignore[arg-type]
                yield pool, family


def _types(pool: PoolPlan) -> list[catalog.InstanceType]:
    return [catalog.instance_types()[t] for t in pool.instance_types]


# --- versions -------------------------------------------------------------------------------

@rule("dra-kubernetes-version", "DRA needs Kubernetes 1.34 (1.33 works with a known upstream issue)")
def _dra_kubernetes_version(plan: Plan) -> Iterator[Finding]:
    k8s = plan.spec.cluster.kubernetes
    users = sorted({f"{p.name}.{f}" for p, f in _dra_pools(plan)})
    if users and k8s < (1, 34):
        yield Finding("dra-kubernetes-version", "error" if k8s < (1, 33) else "warning", "cluster.version",
                      f"DRA is used by {', '.join(users)} but the cluster runs Kubernetes {plan.spec.cluster.version}"
                      + (" (DRA works on 1.33 only with an upstream issue)" if k8s == (1, 33) else ""),
                      'set cluster.version to "1.34" or later, or set those pools\' devices to device-plugin')


@rule("auto-mode-dra-version", "Auto Mode runs DRA drivers from Kubernetes 1.36")
def _auto_mode_dra_version(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode" or plan.spec.cluster.kubernetes >= (1, 36):
        return
    for pool, family in _dra_pools(plan, ("nvidia", "efa")):
        yield Finding("auto-mode-dra-version", "error", _at(pool, f"devices.{family}"),
                      f"Auto Mode includes the {family} DRA driver only from Kubernetes 1.36 "
                      f"(cluster is {plan.spec.cluster.version})",
                      'set cluster.version to "1.36", or use device-plugin on this pool')


@rule("karpenter-dra-version", "dynamic DRA provisioning needs Karpenter 1.15")
def _karpenter_dra_version(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "karpenter" or plan.spec.cluster.karpenter_version >= (1, 15, 0):
        return
    pools = sorted({p.name for p, _ in _dra_pools(plan) if p.provisioning == "dynamic"})
    if pools:
        yield Finding("karpenter-dra-version", "error", "cluster.karpenter.version",
                      f"dynamic pools {', '.join(pools)} use DRA but Karpenter {plan.spec.cluster.karpenter.version} "
                      "cannot provision nodes for ResourceClaims (added in 1.15)",
                      "set cluster.karpenter.version to 1.15.0 or later, or make those pools static")


# Kubernetes minor → the first Karpenter release that supports it (KARP compatibility.md).
KARPENTER_MINIMUM = {
    (1, 33): (1, 5, 0), (1, 34): (1, 6, 0), (1, 35): (1, 9, 0), (1, 36): (1, 13, 0), (1, 37): (1, 15, 0),
}


@rule("karpenter-kubernetes-compat", "the Karpenter release must support the cluster's Kubernetes version")
def _karpenter_kubernetes_compat(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "karpenter":
        return
    k8s, karp = plan.spec.cluster.kubernetes, plan.spec.cluster.karpenter_version
    newest = max(KARPENTER_MINIMUM)
    if k8s > newest:
        yield Finding("karpenter-kubernetes-compat", "error", "cluster.version",
                      f"no Karpenter release is known to support Kubernetes {plan.spec.cluster.version} "
                      f"(newest known: {versions.show(newest)})",
                      f'use cluster.version "{versions.show(newest)}" or earlier')
    elif k8s in KARPENTER_MINIMUM and karp < KARPENTER_MINIMUM[k8s]:
        need = versions.show(KARPENTER_MINIMUM[k8s])
        yield Finding("karpenter-kubernetes-compat", "error", "cluster.karpenter.version",
                      f"Karpenter {plan.spec.cluster.karpenter.version} does not support Kubernetes "
                      f"{plan.spec.cluster.version} (needs {need} or later)",
                      f"set cluster.karpenter.version to {need} or later")


@rule("neuron-dra-version", "the Neuron DRA driver needs Kubernetes 1.34")
def _neuron_dra_version(plan: Plan) -> Iterator[Finding]:
    if plan.spec.cluster.kubernetes >= (1, 34):
        return
    for pool, _ in _dra_pools(plan, ("neuron",)):
        yield Finding("neuron-dra-version", "error", _at(pool, "devices.neuron"),
                      f"the Neuron DRA driver needs Kubernetes 1.34 (cluster is {plan.spec.cluster.version})",
                      'set cluster.version to "1.34" or later, or devices.neuron: device-plugin')


@rule("efa-dra-kubernetes-version", "aws-dranet (EFA DRA) is gated on Kubernetes 1.35")
def _efa_dra_version(plan: Plan) -> Iterator[Finding]:
    if plan.mode == "auto-mode" or plan.spec.cluster.kubernetes >= (1, 35):
        return
    for pool, _ in _dra_pools(plan, ("efa",)):
        yield Finding("efa-dra-kubernetes-version", "error", _at(pool, "devices.efa"),
                      f"aws-dranet requires Kubernetes 1.35 (cluster is {plan.spec.cluster.version})",
                      'set cluster.version to "1.35" or later, or devices.efa: device-plugin')


# --- one manager per node ---------------------------------------------------------------------

@rule("one-manager-per-node", "no node may run a DRA driver and a device plugin for one family")
def _one_manager_per_node(plan: Plan) -> Iterator[Finding]:
    for overlap in scope.overlaps(plan):
        if any(r.source == "bottlerocket" for r in overlap.running):
            continue  # reported by bottlerocket-bundled-plugin with its own fix
        overridden = [r.source for r in overlap.running if r.source in plan.spec.helm_values]
        path = f"helmValues.{overridden[0]}" if overridden else f"nodePools.{overlap.pool}.devices.{overlap.family}"
        yield Finding("one-manager-per-node", "error", path, overlap.problem,
                      "keep each release's nodeSelector on its eks-devices.io/device-manager-<family> label "
                      "(do not override nodeSelector/affinity/enabled in helmValues) and keep the pool's "
                      "device-manager labels as planned")


@rule("bottlerocket-bundled-plugin", "Bottlerocket's bundled NVIDIA plugin must be off on NVIDIA DRA pools")
def _bottlerocket_bundled_plugin(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools.values():
        if pool.ami != "bottlerocket" or pool.manager("nvidia") != "dra":
            continue
        if dig(pool.bottlerocket_settings, "kubelet-device-plugins.nvidia.enabled", True) is not False:
            yield Finding("bottlerocket-bundled-plugin", "error", _at(pool, "bottlerocketSettings"),
                          "the Bottlerocket NVIDIA variant would run its bundled device plugin beside the "
                          "NVIDIA DRA driver",
                          "remove kubelet-device-plugins.nvidia.enabled from bottlerocketSettings "
                          "(the toolkit sets it to false)")


# --- Auto Mode --------------------------------------------------------------------------------

@rule("auto-mode-no-gpu-sharing", "Auto Mode has no time-slicing or MIG through DRA")
def _auto_mode_no_gpu_sharing(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode":
        return
    for pool, _ in _dra_pools(plan, ("nvidia",)):
        strategy = pool.config.gpu_sharing.strategy
        if strategy in ("time-slicing", "mig"):
            yield Finding("auto-mode-no-gpu-sharing", "error", _at(pool, "gpuSharing.strategy"),
                          f"Auto Mode does not offer {strategy} through the NVIDIA DRA driver",
                          "use gpuSharing.strategy: shared-claim, devices.nvidia: device-plugin, "
                          "or a Karpenter cluster")


@rule("auto-mode-no-compute-domains", "ComputeDomains are not supported in Auto Mode")
def _auto_mode_no_compute_domains(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode":
        return
    for pool in plan.pools.values():
        if pool.config.compute_domains:
            yield Finding("auto-mode-no-compute-domains", "error", _at(pool, "computeDomains"),
                          "Auto Mode does not support NVIDIA ComputeDomains (multi-node NVLink)",
                          "use a static Karpenter pool or a managed node group for ComputeDomains")


@rule("auto-mode-neuron-plugin-only", "Auto Mode runs Neuron with the device plugin only")
def _auto_mode_neuron_plugin_only(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode":
        return
    for pool, _ in _dra_pools(plan, ("neuron",)):
        yield Finding("auto-mode-neuron-plugin-only", "error", _at(pool, "devices.neuron"),
                      "Auto Mode supports DRA for NVIDIA and EFA only; Neuron stays on the device plugin",
                      "set devices.neuron to device-plugin (or auto)")


@rule("device-classes-present", "Auto Mode DRA pools need the toolkit to create the DeviceClasses")
def _device_classes_present(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode" or plan.spec.cluster.auto_mode.create_device_classes:
        return
    pools = sorted({p.name for p, _ in _dra_pools(plan, ("nvidia", "efa"))})
    if pools:
        yield Finding("device-classes-present", "error", "cluster.autoMode.createDeviceClasses",
                      f"pools {', '.join(pools)} use DRA, but Auto Mode creates no DeviceClasses and the "
                      "toolkit's creation is off: every claim would stay Pending",
                      "set cluster.autoMode.createDeviceClasses: true")


@rule("static-pool-device-manager-label", "static Auto Mode pools need the device-manager label for DRA")
def _static_pool_label(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode":
        return
    for pool in plan.pools.values():
        for family in ("nvidia", "efa"):
            label = eks_manager_label(family)  # type: ignore[arg-type]
            manager = pool.manager(family)  # type: ignore[arg-type]
            actual = pool.labels.get(label)
            wrong = (manager == "dra" and pool.provisioning == "static" and actual != "dra") or (
                manager != "none" and actual is not None and actual != manager)
            if wrong:
                yield Finding("static-pool-device-manager-label", "error", _at(pool, f"labels.{label}"),
                              f"the pool's {family} manager is {manager} but its label {label} is "
                              f"{actual!r}" + (" (a static pool without it runs the device plugin)"
                                               if manager == "dra" else ""),
                              f"remove {label} from the pool's labels; the toolkit sets it from devices.{family}")


# --- instance types ---------------------------------------------------------------------------

@rule("dra-unsupported-instance-type", "dynamic DRA pools may only allow types with DRA metadata")
def _dra_unsupported_instance_type(plan: Plan) -> Iterator[Finding]:
    if plan.mode == "managed-node-groups":
        return
    for pool, family in _dra_pools(plan):
        if pool.provisioning != "dynamic":
            continue
        types = [t for t in _types(pool) if t.has(family)]
        if plan.mode == "auto-mode":
            bad = [t.name for t in types if not t.auto_mode_dra_metadata]
        else:
            bad = [t.name for t in types if not t.karpenter_dra_metadata]
        if bad:
            yield Finding("dra-unsupported-instance-type", "error", _at(pool, "instanceTypes"),
                          f"{plan.mode} has no DRA device metadata for {', '.join(sorted(bad))}: dynamic "
                          f"provisioning never launches them for {family} claims",
                          f"remove them from this pool, make the pool static, or use devices.{family}: device-plugin")


@rule("efa-unsupported-instance-type", "EFA managers need EFA-capable instance types")
def _efa_unsupported_instance_type(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools.values():
        if pool.managers["efa"].requested not in ("dra", "device-plugin") or not pool.has_hardware("efa"):
            continue
        bad = sorted(t.name for t in _types(pool) if not t.has_efa)
        if bad:
            yield Finding("efa-unsupported-instance-type", "error", _at(pool, "instanceTypes"),
                          f"devices.efa is {pool.manager('efa')} but {', '.join(bad)} have no EFA",
                          "allow only EFA-capable instance types in this pool, or set devices.efa: none")


@rule("device-family-absent", "an explicit manager needs the family's devices")
def _device_family_absent(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools.values():
        for family, res in pool.managers.items():
            if res.requested in ("dra", "device-plugin") and not pool.has_hardware(family):
                yield Finding("device-family-absent", "error", _at(pool, f"devices.{family}"),
                              f"devices.{family} is {res.requested} but none of {', '.join(pool.instance_types)} "
                              f"has {family} devices",
                              f"set devices.{family}: auto (or none), or add instance types that have them")


@rule("mig-unsupported-gpu", "MIG needs a GPU model with Multi-Instance GPU")
def _mig_unsupported_gpu(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools.values():
        if pool.config.gpu_sharing.strategy != "mig":
            continue
        bad = sorted(f"{t.name} ({t.gpu_model})" for t in _types(pool) if t.has_nvidia and not t.mig_capable)
        if bad:
            yield Finding("mig-unsupported-gpu", "error", _at(pool, "gpuSharing.strategy"),
                          f"MIG is not available on {', '.join(bad)}",
                          "use A100/H100/H200/B200/B300 instance types (p4d, p5, p5e, p5en, p6) or time-slicing")


@rule("gpu-sharing-needs-nvidia", "GPU sharing and ComputeDomains need an NVIDIA manager that offers them")
def _gpu_sharing_needs_nvidia(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools.values():
        manager = pool.manager("nvidia")
        strategy = pool.config.gpu_sharing.strategy
        if strategy != "none" and manager == "none":
            yield Finding("gpu-sharing-needs-nvidia", "error", _at(pool, "gpuSharing.strategy"),
                          f"gpuSharing {strategy} on a pool with no NVIDIA manager",
                          "remove gpuSharing or use GPU instance types")
        elif strategy == "shared-claim" and manager != "dra":
            yield Finding("gpu-sharing-needs-nvidia", "error", _at(pool, "gpuSharing.strategy"),
                          "a shared ResourceClaim needs the NVIDIA DRA driver, the pool runs the device plugin",
                          "set devices.nvidia: dra, or use time-slicing with the device plugin")
        if pool.config.compute_domains and manager != "dra":
            yield Finding("gpu-sharing-needs-nvidia", "error", _at(pool, "computeDomains"),
                          "ComputeDomains are served by the NVIDIA DRA driver only",
                          "set devices.nvidia: dra on this pool")


# --- EFA --------------------------------------------------------------------------------------

@rule("efa-interfaces-dynamic-aligned", "dynamic + static interface layout + aligned EFA is undefined")
def _efa_interfaces_dynamic_aligned(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools.values():
        if (pool.provisioning == "dynamic" and pool.config.efa.network_interfaces is not None
                and pool.config.efa.align_with != "none"):
            yield Finding("efa-interfaces-dynamic-aligned", "error", _at(pool, "efa.networkInterfaces"),
                          "dynamic provisioning with a static network-interface layout and topology-aligned "
                          "EFA is undefined: nodes launch but aligned pods stay Pending",
                          "remove efa.networkInterfaces (an EFA on every card is assumed), or make the pool static")


@rule("efa-partial-interfaces", "dynamic EFA DRA pools should have an EFA on every EFA card")
def _efa_partial_interfaces(plan: Plan) -> Iterator[Finding]:
    for pool, _ in _dra_pools(plan, ("efa",)):
        layout = pool.config.efa.network_interfaces
        if pool.provisioning != "dynamic" or layout is None:
            continue
        efas = sum(1 for n in layout if n.interface_type in ("efa", "efa-only"))
        most = max(t.max_efa_interfaces for t in _types(pool))
        if efas < most:
            yield Finding("efa-partial-interfaces", "warning", _at(pool, "efa.networkInterfaces"),
                          f"the layout has {efas} EFA interface(s) but the instance types support up to {most}; "
                          "the scheduler assumes all of them and can launch nodes that cannot satisfy claims",
                          "remove efa.networkInterfaces, or make the pool static")


@rule("efa-private-subnets", "EFA nodes need private subnets with a NAT route")
def _efa_private_subnets(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools.values():
        if pool.manager("efa") == "none":
            continue
        if pool.config.subnets == "public":
            yield Finding("efa-private-subnets", "error", _at(pool, "subnets"),
                          "multi-interface EFA nodes get no public IP: on a public subnet they join but "
                          "cannot pull images", "set subnets: private")
        elif not plan.spec.network.has_nat:
            yield Finding("efa-private-subnets", "error", "network.natGateways",
                          f"EFA pool {pool.name} runs on private subnets with no NAT route",
                          "set network.natGateways to one-per-az or single")


@rule("topology-alignment-needs-dra", "aligned GPU/Neuron + EFA needs DRA for both families")
def _topology_alignment_needs_dra(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools.values():
        align = pool.config.efa.align_with
        if align == "none":
            continue
        other = "nvidia" if align == "gpu" else "neuron"
        wrong = [f"{f} is {pool.manager(f)}" for f in ("efa", other) if pool.manager(f) != "dra"]  # type: ignore[arg-type]
        if wrong:
            yield Finding("topology-alignment-needs-dra", "error", _at(pool, "efa.alignWith"),
                          f"topology-aligned EFA with {align} needs DRA for both, but {' and '.join(wrong)} "
                          "(the EFA device plugin publishes no PCIe topology)",
                          f"set devices.efa and devices.{other} to dra (or auto on a version that supports it)")


# --- Karpenter --------------------------------------------------------------------------------

def _karpenter_gates(values: dict) -> set[str]:
    settings = values.get("settings") or {}
    if settings.get("enableDRA"):
        return {"nvidia", "efa"}
    gates = settings.get("awsFeatureGates") or {}
    return {f for f, key in (("nvidia", "draNVIDIAGPU"), ("efa", "draEFA")) if gates.get(key)}


@rule("karpenter-dra-gates-exclusive", "settings.enableDRA cannot be combined with the single gates")
def _karpenter_dra_gates_exclusive(plan: Plan) -> Iterator[Finding]:
    if plan.karpenter is None:
        return
    settings = plan.karpenter.values.get("settings") or {}
    if settings.get("enableDRA") is None:
        return
    clash = [k for k in ("awsFeatureGates.draNVIDIAGPU", "awsFeatureGates.draEFA", "ignoreDRARequests")
             if dig(settings, k) is not None]
    if clash:
        yield Finding("karpenter-dra-gates-exclusive", "error", "helmValues.karpenter.settings",
                      f"settings.enableDRA is set together with {', '.join('settings.' + c for c in clash)}: "
                      "the Karpenter chart fails to render", "remove those keys from helmValues.karpenter; "
                      "the toolkit derives the DRA settings from the pools")


@rule("karpenter-dra-gates-match-drivers", "Karpenter's DRA gates must match the DRA drivers dynamic pools run")
def _karpenter_dra_gates_match(plan: Plan) -> Iterator[Finding]:
    if plan.karpenter is None:
        return
    enabled = _karpenter_gates(plan.karpenter.values)
    running = _karpenter_gates({"settings": karpenter_dra_settings(plan.pools)})
    if enabled != running:
        yield Finding("karpenter-dra-gates-match-drivers", "error", "helmValues.karpenter.settings",
                      f"Karpenter's DRA gates cover {sorted(enabled) or 'nothing'} but dynamic pools run DRA "
                      f"drivers for {sorted(running) or 'nothing'}: Karpenter would launch nodes that cannot "
                      "serve the claims, or ignore claims it should serve",
                      "remove the DRA settings from helmValues.karpenter; the toolkit derives them")


@rule("karpenter-compute-domains-static-only", "Karpenter launches no nodes for ComputeDomains")
def _karpenter_compute_domains(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "karpenter":
        return
    for pool in plan.pools.values():
        if pool.config.compute_domains and pool.provisioning == "dynamic":
            yield Finding("karpenter-compute-domains-static-only", "error", _at(pool, "computeDomains"),
                          "Karpenter does not provision dynamically for ComputeDomain claims",
                          "set provisioning: static with replicas on this pool")


@rule("karpenter-mig-static-only", "Karpenter launches no nodes for MIG claims")
def _karpenter_mig(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "karpenter":
        return
    for pool in plan.pools.values():
        if pool.config.gpu_sharing.strategy == "mig" and pool.provisioning == "dynamic":
            yield Finding("karpenter-mig-static-only", "error", _at(pool, "gpuSharing.strategy"),
                          "Karpenter's device metadata describes whole GPUs only: it never launches nodes for MIG",
                          "set provisioning: static with replicas on this pool")


@rule("karpenter-static-capacity-gate", "static Karpenter pools need the StaticCapacity gate")
def _karpenter_static_capacity(plan: Plan) -> Iterator[Finding]:
    if plan.karpenter is None or not plan.karpenter.static_capacity:
        return
    if dig(plan.karpenter.values, "settings.featureGates.staticCapacity") is not True:
        yield Finding("karpenter-static-capacity-gate", "error", "helmValues.karpenter.settings.featureGates",
                      "static pools need settings.featureGates.staticCapacity: true, which an override turns off",
                      "remove settings.featureGates.staticCapacity from helmValues.karpenter")


@rule("karpenter-reuse-values", "Karpenter upgrades must not reuse stale values")
def _karpenter_reuse_values(plan: Plan) -> Iterator[Finding]:
    if plan.karpenter is not None and plan.karpenter.reuse_values:
        yield Finding("karpenter-reuse-values", "error", "cluster.karpenter.reuseValues",
                      "reusing old values keeps ignoreDRARequests: true from earlier charts and the DRA "
                      "settings then fail to render", "set cluster.karpenter.reuseValues: false (the toolkit "
                      "resets values and applies the declared ones)")


@rule("karpenter-time-slicing", "consumable-capacity time-slicing needs Kubernetes 1.36 and Karpenter 1.15")
def _karpenter_time_slicing(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "karpenter":
        return
    for pool, _ in _dra_pools(plan, ("nvidia",)):
        if pool.config.gpu_sharing.strategy != "time-slicing":
            continue
        low = plan.spec.cluster.kubernetes < (1, 36) or plan.spec.cluster.karpenter_version < (1, 15, 0)
        if low:
            yield Finding("karpenter-time-slicing", "error", _at(pool, "gpuSharing.strategy"),
                          "GPU time-slicing through consumable capacity needs Kubernetes 1.36 and Karpenter 1.15",
                          "upgrade, or use devices.nvidia: device-plugin for time-slicing")
        else:
            yield Finding("karpenter-time-slicing", "warning", _at(pool, "gpuSharing.strategy"),
                          "consumable-capacity time-slicing is alpha in Karpenter, and the driver gate "
                          "ConsumableShares is absent from dra-driver-nvidia-gpu 0.4.0",
                          "pin chartVersions.nvidia-dra-driver to a release with ConsumableShares and test first")


# --- managed node groups ----------------------------------------------------------------------

RESERVED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "eks.amazonaws.com")


@rule("managed-node-group-reserved-labels", "managed node groups reject reserved label prefixes")
def _mng_reserved_labels(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "managed-node-groups":
        return
    for pool in plan.pools.values():
        for key in sorted(pool.labels):
            domain = key.split("/", 1)[0] if "/" in key else ""
            if any(domain == d or domain.endswith("." + d) for d in RESERVED_LABEL_DOMAINS):
                yield Finding("managed-node-group-reserved-labels", "error", _at(pool, f"labels.{key}"),
                              f"EKS rejects node group label {key}: Label cannot contain reserved prefixes",
                              "use a label under your own prefix; device managers are in eks-devices.io/ labels")


from . import claim_rules  # noqa: E402,F401  (registers the claim rules)
