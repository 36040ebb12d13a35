"""The device-software part of the plan: each release's toolkit values and the DeviceClasses.

Pure data derived from the Spec and the pool plans (`plan.build` calls in here). Every value
below is a chart value checked against the chart's templates (the chart releases in `charts.py`):

- scope: the release's DaemonSet nodeSelector is the toolkit label
  `eks-devices.io/device-manager-<family>: <manager>`, so it lands on exactly the pools that chose it;
- tolerations: every NoSchedule/NoExecute taint of those pools (GPU, Neuron, and the user's own);
- instance types: the EFA and Neuron charts' built-in affinity lists are narrowed to the pools' types;
- the per-chart settings the pools ask for (gates, sharing, MIG, compute domains).

The stack's `helmValues` for a chart are merged over these last (in `plan._releases`) and the
overlap proof (`scope.py`) then re-checks the merged result.
"""

from __future__ import annotations

from typing import Any

from eks_devices.core.config.stack import FAMILIES, Family, Spec
from eks_devices.core.families import DESCRIPTORS, EFA, FAMILY, NEURON, NVIDIA
from eks_devices.core.knowledge import catalog, charts, registries, versions
from eks_devices.core.knowledge.device_classes import (
    BASE_CLASSES,
    EXTENDED_RESOURCE_KUBERNETES,
    RESOURCE_API_V1,
)
from eks_devices.core.model import DeviceClassPlan, PoolPlan, Release
from eks_devices.core.names import PLUGIN_CONFIG_PREFIX, POOL_LABEL
from eks_devices.core.values import dig, merge, nested
from eks_devices.core.vocabulary import PREFER_NO_SCHEDULE


def bundled_manager(spec: Spec, ami: str, family: Family, manager: str) -> str | None:
    """What serves a family on a pool's nodes without a toolkit release: Auto Mode's runtime, or the
    manager a Bottlerocket variant bundles (`DeviceFamily.bottlerocket_bundled`: on pools with that
    manager it stays on and is the pool's; on others the node settings switch it off)."""
    if spec.mode == "auto-mode":
        return "auto-mode"
    bundled = FAMILY[family].bottlerocket_bundled
    if ami == "bottlerocket" and bundled and bundled[0] == manager:
        return "bottlerocket"
    return None


def _tolerations(pools: list[PoolPlan]) -> list[dict[str, str]]:
    """Tolerations for every NoSchedule/NoExecute taint of the pools a release serves."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for pool in pools:
        for taint in pool.taints:
            if taint["effect"] != PREFER_NO_SCHEDULE:
                seen[(taint["key"], taint["effect"])] = {
                    "key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
    return [seen[k] for k in sorted(seen)]


def _types(pools: list[PoolPlan], family: Family) -> list[str]:
    return sorted({t for p in pools for t in p.instance_types if catalog.instance_types()[t].has(family)})


def _not_in_pools(names: list[str]) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": POOL_LABEL, "operator": "NotIn", "values": names}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def _dynamic_mig(spec: Spec, mig_pools: list[PoolPlan]) -> bool:
    """DynamicMIG partitions on demand, but destroys partitions it did not create and works only on
    Hopper and later with partitionable devices (on by default from Kubernetes 1.36). Turn it on only
    when every DRA MIG pool can use it; otherwise MIG stays static (partitions made on the node)."""
    models = {catalog.instance_types()[t].gpu_model for p in mig_pools for t in p.instance_types
              if catalog.instance_types()[t].has_nvidia}
    return (bool(mig_pools) and spec.cluster.kubernetes >= versions.PARTITIONABLE_DEVICES_KUBERNETES
            and models <= charts.DYNAMIC_MIG_GPU_MODELS)


# The NVIDIA driver's gate for a sharing strategy of its opaque GpuConfig: without it the driver
# refuses the config when it prepares the claim (v0.4.1 `validate.go`), so the Pod never starts.
# MPS (gate MPSSupport) is left to helmValues: that gate excludes DynamicMIG, which the toolkit sets.
SHARING_GATES = {"TimeSlicing": "TimeSlicingSettings"}


def claim_sharing_gates(spec: Spec, pool_names: set[str]) -> dict[str, bool]:
    """The driver gates the declared claims' NVIDIA sharing configs need (`timeSlicing`, or a raw
    GPU driver's opaque config naming a strategy), for claims aimed at any of `pool_names`."""
    gates: dict[str, bool] = {}
    for claim in spec.claims.values():
        if not pool_names & set(claim.pools):
            continue
        strategies = ["TimeSlicing"] if claim.time_slicing else []
        strategies += [dig(c.opaque.parameters, "sharing.strategy") for c in claim.config
                       if c.opaque.driver == NVIDIA.dra_driver]
        gates.update({SHARING_GATES[s]: True for s in strategies if s in SHARING_GATES})
    return gates


def _nvidia_dra(spec: Spec, scope: dict[str, str], pools: list[PoolPlan]) -> dict[str, Any]:
    values: dict[str, Any] = {
        "gpuResourcesEnabledOverride": True,  # the render fails without it while gpus are on
        "resourceApiVersion": RESOURCE_API_V1,
        "nvidiaDriverRoot": "/",  # EKS AMIs ship the host driver
        "resources": {"gpus": {"enabled": True},
                      "computeDomains": {"enabled": any(p.config.compute_domains for p in pools)}},
        "kubeletPlugin": {"nodeSelector": scope, "tolerations": _tolerations(pools)},
        # EKS has no control-plane nodes to schedule on: drop any control-plane placement and let
        # the controller (rendered with computeDomains only) run on the system nodes.
        "controller": {"nodeSelector": None, "affinity": None,
                       "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}]},
    }
    gates: dict[str, bool] = {}
    sliced = [p for p in pools if p.config.gpu_sharing.strategy == "time-slicing"]
    consumable = [p for p in sliced if p.node_class_annotations]
    if consumable:  # Karpenter consumable capacity (karpenter.sh/docs/tasks/dra): one share count for the driver
        gates["ConsumableShares"] = True
        values["consumableShares"] = max(p.config.gpu_sharing.replicas or 0 for p in consumable)
    if len(consumable) < len(sliced):  # claims carry a GpuConfig with TimeSlicing
        gates["TimeSlicingSettings"] = True
    gates.update(claim_sharing_gates(spec, {p.name for p in pools}))
    if _dynamic_mig(spec, [p for p in pools if p.config.gpu_sharing.strategy == "mig"]):
        gates["DynamicMIG"] = True
    if gates:
        values["featureGates"] = gates
    return values


def _plugin_config(replicas: int) -> str:
    return ("version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: false\n"
            "    failRequestsGreaterThanOne: true\n    resources:\n"
            f"    - name: {NVIDIA.extended_resource}\n      replicas: {replicas}\n")


def _nvidia_plugin(scope: dict[str, str], pools: list[PoolPlan], bundled: list[str]) -> dict[str, Any]:
    sharing = [p.config.gpu_sharing for p in pools]
    values: dict[str, Any] = {
        "nodeSelector": scope, "tolerations": _tolerations(pools),
        "mofedEnabled": False,  # 0.19.0-0.19.2 default it on and break the EFA plugin (EKS-EFA)
        "migStrategy": "mixed" if any(s.strategy == "mig" for s in sharing) else "none",
    }
    if bundled:  # Bottlerocket plugin pools run the bundled plugin; keep this one off them
        values["affinity"] = _not_in_pools(bundled)
    slicing = sorted({s.replicas for s in sharing if s.strategy == "time-slicing" and s.replicas})
    if slicing:  # per-node config: the config-manager sidecar follows NVIDIA_PLUGIN_CONFIG_LABEL
        configs = {"default": "version: v1\n"}
        configs.update({f"{PLUGIN_CONFIG_PREFIX}{r}": _plugin_config(r) for r in slicing})
        values["config"] = {"map": configs, "default": "default"}
    return values


def release_values(spec: Spec, key: str, scope: dict[str, str], pools: list[PoolPlan],
                   all_pools: list[PoolPlan]) -> dict[str, Any]:
    """The toolkit's values for one release: scope, tolerations and the settings its pools need.
    `pools` are the pools it serves; `all_pools` lets a release keep off pools that match its
    scope label but are served by the node image (Bottlerocket's bundled NVIDIA plugin)."""
    if key == NVIDIA.releases["dra"]:
        return _nvidia_dra(spec, scope, pools)
    if key == NVIDIA.releases["device-plugin"]:
        bundled = sorted(p.name for p in all_pools if p.manager(NVIDIA.name) == "device-plugin"
                         and bundled_manager(spec, p.ami, NVIDIA.name, "device-plugin"))
        return _nvidia_plugin(scope, pools, bundled)
    if key in EFA.releases.values():
        values: dict[str, Any] = {"nodeSelector": scope, "tolerations": _tolerations(pools)}
        registry = registries.eks_registry(spec.region)  # None: the stack sets image.repository (spec check)
        if registry is not None:
            values["image"] = {"repository": f"{registry}/{charts.CHARTS[key].eks_image}"}
        values["supportedInstanceLabels"] = {"values": _types(pools, EFA.name)}
        if key == EFA.releases["dra"]:
            values["deviceClass"] = {"create": True, "name": EFA.device_class}
        return values
    common = {"npd": {"enabled": False}, "scheduler": {"enabled": False},
              "neuronInstances": _types(pools, NEURON.name)}
    if key == NEURON.releases["dra"]:
        return {**common, "devicePlugin": {"enabled": False},
                "draDriver": {"enabled": True, "nodeSelector": scope, "tolerations": _tolerations(pools)}}
    if key == NEURON.releases["device-plugin"]:
        return {**common, "draDriver": {"enabled": False},
                "devicePlugin": {"enabled": True, "nodeSelector": scope, "tolerations": _tolerations(pools)}}
    return _scoped(charts.CHARTS[key], scope, pools)


def _scoped(chart: charts.Chart, scope: dict[str, str], pools: list[PoolPlan]) -> dict[str, Any]:
    """A chart the toolkit knows only by its descriptor (a family another distribution adds): each agent's
    node selector and tolerations, so its DaemonSets reach exactly the pools that chose it."""
    values: dict[str, Any] = {}
    for agent in chart.agents:
        values = merge(values, nested(agent.node_selector, scope))
        if agent.tolerations:
            values = merge(values, nested(agent.tolerations, _tolerations(pools)))
    return values


def _chart_classes(spec: Spec, releases: dict[str, Release]) -> list[DeviceClassPlan]:
    """The DeviceClasses the driver charts create with the merged values (each chart descriptor's
    `device_classes`), in the order of the charts."""
    out: list[DeviceClassPlan] = []
    for key in (k for k in charts.CHARTS if k in releases):
        release = releases[key]
        for chart_class in charts.CHARTS[key].device_classes:
            found = chart_class.rendered(release.values, release.version, spec.cluster.kubernetes)
            if found is not None:
                out.append(DeviceClassPlan(found[0], chart_class.driver, chart_class.cel, key, found[1]))
    return out


def _extra_classes(spec: Spec) -> list[DeviceClassPlan]:
    """`eks-devices:deviceClasses`: toolkit-owned classes under other names, each narrowing a base class."""
    out = []
    for name, extra in sorted(spec.device_classes.items()):
        driver, base = BASE_CLASSES[extra.base]
        parts = [base]
        if extra.product_name:
            parts.append(f"device.attributes['{NVIDIA.dra_driver}'].productName == '{extra.product_name}'")
        if extra.expression:
            parts.append(f"({extra.expression})")
        out.append(DeviceClassPlan(name, driver, " && ".join(parts), "toolkit"))
    return out


def device_classes(spec: Spec, pools: dict[str, PoolPlan], releases: dict[str, Release]) -> tuple[
        DeviceClassPlan, ...]:
    """Auto Mode: the toolkit creates the upstream-named classes its DRA pools need (same names and
    CEL as the charts, so claims are portable). Elsewhere the driver charts create and own them; they
    are listed so claims can be checked against them. Extra classes are the toolkit's in every mode."""
    out: list[DeviceClassPlan] = []
    if spec.mode == "auto-mode":
        dra = {f for p in pools.values() for f in FAMILIES if p.serves(f, "dra")}
        # a class naming its extended resource as the chart's does: honoured from 1.36 (DRAExtendedResource
        # beta), and only if the stack wants it
        served = spec.cluster.kubernetes >= EXTENDED_RESOURCE_KUBERNETES and spec.cluster.serves_extended_resources
        for devices in DESCRIPTORS if spec.cluster.auto_mode.create_device_classes else ():
            if devices.auto_mode_dra and devices.name in dra:
                named = devices.extended_resource if devices.device_class_names_resource and served else None
                out.append(DeviceClassPlan(devices.device_class, devices.dra_driver, devices.device_class_cel,
                                           "toolkit", named))
    else:
        out += _chart_classes(spec, releases)
    return tuple(out + _extra_classes(spec))
