"""Device-manager resolution: `auto` becomes `dra`, `device-plugin` or `none` per pool and family,
with the reason recorded (`inferred` stays `inferred`: Auto Mode decides per node). `auto` picks DRA
(recommended by EKS from Kubernetes 1.34) wherever the mode, the versions, the instance types and the
pool's GPU features allow it.
"""

from __future__ import annotations

from eks_devices.core.config.stack import FAMILIES, Family, NodePool, Spec
from eks_devices.core.families import FAMILY
from eks_devices.core.knowledge import catalog, charts, karpenter_metadata, versions
from eks_devices.core.model import Resolution

# EKS user guide, "Manage hardware devices", Selecting the device manager explicitly: dynamic pools need no label.
INFERRED_REASON = ("no device-manager label: Auto Mode picks DRA or the device plugin per node from the Pods it "
                   "launches the node for, so this pool serves DRA Pods and device-plugin Pods")


def _dra_blocker(spec: Spec, pool: NodePool, family: Family, types: list[catalog.InstanceType]) -> str | None:
    """Why DRA cannot serve this family on this pool, or None when it can."""
    k8s = spec.cluster.kubernetes
    mode = spec.mode
    dynamic = spec.provisioning(pool) == "dynamic"
    sharing = pool.gpu_sharing.strategy
    if k8s < versions.DRA_KUBERNETES:
        return f"Kubernetes {spec.cluster.version} is below 1.34, where DRA is GA and recommended"
    devices = FAMILY[family]
    if mode == "auto-mode":
        if not devices.auto_mode_dra:
            return f"Auto Mode runs {devices.title} devices with the device plugin only"
        if k8s < versions.AUTO_MODE_DRA_KUBERNETES:
            return f"Auto Mode needs Kubernetes 1.36 for DRA (cluster is {spec.cluster.version})"
        unsupported = sorted(t.name for t in types if not t.auto_mode_dra_metadata)
        if unsupported:
            return f"Auto Mode has no DRA device metadata for {', '.join(unsupported)}"
        if devices.pool_sharing and sharing in ("time-slicing", "mig"):
            return f"Auto Mode offers no {sharing} through DRA"
        return None
    off, serves = charts.kept_off(family, "dra", (t.name for t in types if t.has(family)))
    if off:
        return f"the {devices.title} DRA driver serves {serves} only (the chart keeps it off {', '.join(off)})"
    if k8s < devices.dra_kubernetes:
        need = ".".join(map(str, devices.dra_kubernetes))
        return f"{devices.releases['dra']} needs Kubernetes {need} (cluster is {spec.cluster.version})"
    if mode == "karpenter" and dynamic:
        if spec.cluster.karpenter_version < (1, 15, 0):
            return f"Karpenter {spec.cluster.karpenter.version} cannot provision for DRA claims (needs 1.15)"
        metadata = karpenter_metadata.for_version(spec.cluster.karpenter.version)
        missing = sorted(t.name for t in types if t.has(family) and not metadata.covers(t, family))
        if missing:
            return f"Karpenter {metadata.release} ships no DRA metadata for {', '.join(missing)}"
        if devices.pool_sharing and sharing == "mig":
            return "Karpenter does not launch nodes for MIG claims (use a static pool)"
        if devices.pool_sharing and sharing == "time-slicing" and k8s < versions.CONSUMABLE_CAPACITY_KUBERNETES:
            return "Karpenter time-slicing through consumable capacity needs Kubernetes 1.36"
    return None


def _auto(spec: Spec, pool: NodePool, family: Family, types: list[catalog.InstanceType]) -> tuple[str, str]:
    blocker = _dra_blocker(spec, pool, family, types)
    if blocker is None:
        return "dra", f"DRA is supported here ({spec.mode}, Kubernetes {spec.cluster.version})"
    return "device-plugin", blocker


def resolve_pool(spec: Spec, pool: NodePool) -> dict[Family, Resolution]:
    """Resolve every family for one pool."""
    types = [catalog.instance_types()[t] for t in pool.instance_types]
    out: dict[Family, Resolution] = {}
    for family in FAMILIES:
        choice = getattr(pool.devices, family)
        if not any(t.has(family) for t in types):
            out[family] = Resolution(family, "none", choice,
                                     f"the instance types have no {FAMILY[family].title} devices")
        elif choice == "inferred":  # dynamic Auto Mode pools only (spec check); no label, Auto Mode decides
            out[family] = Resolution(family, "inferred", choice, INFERRED_REASON)
        elif choice != "auto":
            out[family] = Resolution(family, choice, choice, "set in the stack configuration")
        else:
            manager, reason = _auto(spec, pool, family, types)
            out[family] = Resolution(family, manager, choice, reason)
    return out
