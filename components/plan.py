"""Spec → Plan: per pool its device managers (with reasons), labels and taints; the device
software releases and their node scope; the DeviceClasses and their owners; Karpenter's DRA
settings. Pure data: components, preview and render all read this and never re-decide.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import catalog, charts
from .resolve import Resolution, resolve_pool
from .spec import FAMILIES, Family, NodePool, Spec
from .values import merge

TOOLKIT_PREFIX = "eks-devices.io"
POOL_LABEL = f"{TOOLKIT_PREFIX}/pool"
NVIDIA_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
NVIDIA_GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
CONSUMABLE_CAPACITY_ANNOTATION = "karpenter.k8s.aws/nvidia-consumable-capacity"
DEFAULT_TAINTS: dict[Family, str] = {"nvidia": "nvidia.com/gpu", "neuron": "aws.amazon.com/neuron"}


def manager_label(family: Family) -> str:
    """The toolkit's device-manager label, valid in every mode (managed node groups included)."""
    return f"{TOOLKIT_PREFIX}/device-manager-{family}"


def eks_manager_label(family: Family) -> str:
    """The Auto Mode label that selects a node's device manager (NVIDIA and EFA only)."""
    return f"eks.amazonaws.com/device-manager-{family}"


@dataclass(frozen=True)
class PoolPlan:
    """Everything the components need to build one node pool."""

    name: str
    provisioning: str
    replicas: int | None
    instance_types: tuple[str, ...]
    architecture: str
    capacity: str
    ami: str
    managers: dict[Family, Resolution]
    labels: dict[str, str]
    taints: tuple[dict[str, str], ...]
    releases: dict[Family, str]  # family → release key serving it ("auto-mode" when built in)
    network_interfaces: tuple[dict[str, Any], ...] | None
    bottlerocket_settings: dict[str, Any]
    node_class_annotations: dict[str, str]
    config: NodePool

    def manager(self, family: Family) -> str:
        return self.managers[family].manager

    def has_hardware(self, family: Family) -> bool:
        return any(catalog.instance_types()[t].has(family) for t in self.instance_types)

    @property
    def identity(self) -> str:
        """The pool's device-manager identity; a change must replace its nodes."""
        return ",".join(f"{f}={self.manager(f)}" for f in FAMILIES)


@dataclass(frozen=True)
class Release:
    """One Helm release of device software, scoped by label to the pools that chose it."""

    key: str
    family: Family
    manager: str
    chart: str
    repository: str
    version: str
    namespace: str
    pools: tuple[str, ...]
    scope: dict[str, str]
    toolkit_values: dict[str, Any]
    values: dict[str, Any]  # toolkit values with the stack's overrides merged last


@dataclass(frozen=True)
class DeviceClassPlan:
    name: str
    driver: str
    expression: str
    owner: str  # "toolkit" (created by eks-devices) or the release key whose chart creates it
    extended_resource_name: str | None = None

    @property
    def created_by_toolkit(self) -> bool:
        return self.owner == "toolkit"


@dataclass(frozen=True)
class KarpenterPlan:
    version: str
    dra_settings: dict[str, Any]
    static_capacity: bool
    toolkit_values: dict[str, Any]
    values: dict[str, Any]
    reuse_values: bool


@dataclass(frozen=True)
class Plan:
    spec: Spec
    pools: dict[str, PoolPlan]
    releases: dict[str, Release]
    device_classes: tuple[DeviceClassPlan, ...]
    karpenter: KarpenterPlan | None
    findings: tuple[Any, ...] = field(default=())
    claims: tuple[Any, ...] = field(default=())  # fit.ClaimPlan per declared claim, with its fit per pool

    @property
    def mode(self) -> str:
        return self.spec.mode

    @property
    def errors(self) -> tuple[Any, ...]:
        return tuple(f for f in self.findings if f.severity == "error")


GPU_CEL = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
MIG_CEL = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
VFIO_CEL = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'"
CD_DAEMON_CEL = ("device.driver == 'compute-domain.nvidia.com' && "
                 "device.attributes['compute-domain.nvidia.com'].type == 'daemon'")
CD_CHANNEL_CEL = ("device.driver == 'compute-domain.nvidia.com' && "
                  "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
                  "device.attributes['compute-domain.nvidia.com'].id == 0")
EFA_CEL = ("device.driver == \"dra.net\" && "
           "device.attributes[\"dra.net\"].pciDevice == 'Elastic Fabric Adapter (EFA)'")
NEURON_CEL = 'device.driver == "neuron.aws.com"'


def efa_interface_layout(itype: catalog.InstanceType) -> tuple[dict[str, Any], ...]:
    """The EKS-recommended launch-template interfaces for an EFA instance type: an ENA
    `interface` at card 0 / device 0, `efa-only` at card 0 / device 1 and on every other EFA card."""
    layout: list[dict[str, Any]] = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]
    for card in range(itype.max_efa_interfaces):
        layout.append({"networkCardIndex": card, "deviceIndex": 1 if card == 0 else 0,
                       "interfaceType": "efa-only"})
    return tuple(layout)


def _labels(spec: Spec, name: str, pool: NodePool, managers: dict[Family, Resolution]) -> dict[str, str]:
    labels = {POOL_LABEL: name}
    for family, res in managers.items():
        if res.manager == "none":
            continue
        labels[manager_label(family)] = res.manager
        if spec.mode == "auto-mode" and family in ("nvidia", "efa"):
            labels[eks_manager_label(family)] = res.manager
    nvidia = managers["nvidia"].manager
    if spec.mode != "auto-mode" and nvidia == "dra" and pool.ami != "al2023":
        labels[NVIDIA_GPU_PRESENT_LABEL] = "true"  # the DRA kubelet plugin's affinity needs it
    if nvidia == "device-plugin" and pool.gpu_sharing.strategy == "time-slicing" and spec.mode != "auto-mode":
        labels[NVIDIA_PLUGIN_CONFIG_LABEL] = f"time-slicing-{pool.gpu_sharing.replicas}"
    labels.update(pool.labels)
    return labels


def _taints(pool: NodePool, managers: dict[Family, Resolution]) -> tuple[dict[str, str], ...]:
    taints = [t.model_dump(exclude_none=True) for t in pool.taints]
    keys = {t["key"] for t in taints}
    for family, key in DEFAULT_TAINTS.items():
        if managers[family].manager != "none" and key not in keys:
            taints.append({"key": key, "value": "true", "effect": "NoSchedule"})
    return tuple(taints)


def _bottlerocket(pool: NodePool, managers: dict[Family, Resolution]) -> dict[str, Any]:
    """Bottlerocket NVIDIA variants bundle the device plugin: switch it off on NVIDIA DRA pools."""
    if pool.ami != "bottlerocket":
        return {}
    derived: dict[str, Any] = {}
    if managers["nvidia"].manager == "dra":
        derived = {"kubelet-device-plugins": {"nvidia": {"enabled": False}}}
    return merge(derived, pool.bottlerocket_settings)


def _uses_consumable_capacity(spec: Spec, pool: NodePool, managers: dict[Family, Resolution]) -> bool:
    return (spec.mode == "karpenter" and managers["nvidia"].manager == "dra"
            and pool.gpu_sharing.strategy == "time-slicing")


def _pool_plan(spec: Spec, name: str, pool: NodePool) -> PoolPlan:
    managers = resolve_pool(spec, pool)
    types = [catalog.instance_types()[t] for t in pool.instance_types]
    layout: tuple[dict[str, Any], ...] | None = None
    if pool.efa.network_interfaces is not None:
        layout = tuple(n.model_dump(by_alias=True) for n in pool.efa.network_interfaces)
    elif spec.mode == "managed-node-groups" and managers["efa"].manager != "none":
        layout = efa_interface_layout(min(types, key=lambda t: t.max_efa_interfaces))
    annotations = {}
    if _uses_consumable_capacity(spec, pool, managers):
        annotations[CONSUMABLE_CAPACITY_ANNOTATION] = str(pool.gpu_sharing.replicas)
    releases: dict[Family, str] = {}
    for family, res in managers.items():
        if res.manager != "none":
            releases[family] = "auto-mode" if spec.mode == "auto-mode" else charts.RELEASE_FOR[(family, res.manager)]
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
        bottlerocket_settings=_bottlerocket(pool, managers),
        node_class_annotations=annotations,
        config=pool,
    )


def _tolerations(pools: list[PoolPlan]) -> list[dict[str, str]]:
    """Tolerations for every NoSchedule/NoExecute taint of the pools a release serves."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for pool in pools:
        for taint in pool.taints:
            if taint["effect"] != "PreferNoSchedule":
                seen[(taint["key"], taint["effect"])] = {
                    "key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
    return [seen[k] for k in sorted(seen)]


def _release_values(spec: Spec, key: str, scope: dict[str, str], pools: list[PoolPlan]) -> dict[str, Any]:
    """The toolkit's values for one release: scope, tolerations and the settings its pools need."""
    tolerations = _tolerations(pools)
    ecr = f"{charts.EKS_ECR_ACCOUNT}.dkr.ecr.{spec.region}.amazonaws.com/eks"
    sharing = [p.config.gpu_sharing for p in pools]
    if key == "nvidia-dra-driver":
        gates: dict[str, bool] = {}
        values: dict[str, Any] = {
            "gpuResourcesEnabledOverride": True,
            "resourceApiVersion": "resource.k8s.io/v1",
            "nvidiaDriverRoot": "/",
            "resources": {"gpus": {"enabled": True},
                          "computeDomains": {"enabled": any(p.config.compute_domains for p in pools)}},
            "kubeletPlugin": {"nodeSelector": scope, "tolerations": tolerations},
            # 25.x requires control-plane nodes for the controller; EKS has none to offer.
            "controller": {"nodeSelector": None, "affinity": None, "tolerations": []},
        }
        shares = sorted({s.replicas for p, s in zip(pools, sharing, strict=True)
                         if s.strategy == "time-slicing" and p.node_class_annotations})
        if shares:
            gates["ConsumableShares"] = True
            values["consumableShares"] = shares[-1]
        if any(s.strategy == "time-slicing" for p, s in zip(pools, sharing, strict=True)
               if not p.node_class_annotations):
            gates["TimeSlicingSettings"] = True
        if any(s.strategy == "mig" for s in sharing):
            gates["DynamicMIG"] = True
        if gates:
            values["featureGates"] = gates
        return values
    if key == "nvidia-device-plugin":
        values = {"nodeSelector": scope, "tolerations": tolerations, "mofedEnabled": False,
                  "migStrategy": "mixed" if any(s.strategy == "mig" for s in sharing) else "none"}
        slicing = sorted({s.replicas for s in sharing if s.strategy == "time-slicing" and s.replicas})
        if slicing:
            configs = {"default": "version: v1\n"}
            for replicas in slicing:
                configs[f"time-slicing-{replicas}"] = (
                    "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: false\n"
                    "    failRequestsGreaterThanOne: true\n    resources:\n"
                    f"    - name: nvidia.com/gpu\n      replicas: {replicas}\n")
            values["config"] = {"map": configs, "default": "default"}
        return values
    if key == "aws-dranet":
        return {"nodeSelector": scope, "tolerations": tolerations,
                "image": {"repository": f"{ecr}/dranet"},
                "deviceClass": {"create": True, "name": "efa.networking.k8s.aws"}}
    if key == "aws-efa-k8s-device-plugin":
        return {"nodeSelector": scope, "tolerations": tolerations,
                "image": {"repository": f"{ecr}/aws-efa-k8s-device-plugin"}}
    if key == "neuron-dra-driver":
        return {"devicePlugin": {"enabled": False}, "npd": {"enabled": False}, "scheduler": {"enabled": False},
                "draDriver": {"enabled": True, "nodeSelector": scope}}
    if key == "neuron-device-plugin":
        return {"devicePlugin": {"enabled": True, "nodeSelector": scope}, "npd": {"enabled": False},
                "draDriver": {"enabled": False}, "scheduler": {"enabled": False}}
    raise KeyError(key)


def _releases(spec: Spec, pools: dict[str, PoolPlan]) -> dict[str, Release]:
    if spec.mode == "auto-mode":
        return {}
    out: dict[str, Release] = {}
    for (family, manager), key in charts.RELEASE_FOR.items():
        served = [p for p in pools.values() if p.manager(family) == manager]
        if not served:
            continue
        chart = charts.CHARTS[key]
        scope = {manager_label(family): manager}
        toolkit_values = _release_values(spec, key, scope, served)
        out[key] = Release(
            key=key, family=family, manager=manager, chart=chart.reference, repository=chart.repository,
            version=spec.chart_versions.get(key, chart.version),  # type: ignore[call-overload]
            namespace=chart.namespace, pools=tuple(p.name for p in served), scope=scope,
            toolkit_values=toolkit_values,
            values=merge(toolkit_values, spec.helm_values.get(key, {})),  # type: ignore[call-overload]
        )
    return out


def _device_classes(
    spec: Spec, pools: dict[str, PoolPlan], releases: dict[str, Release]
) -> tuple[DeviceClassPlan, ...]:
    """Auto Mode: the toolkit creates the upstream-named classes its DRA pools need. Elsewhere the
    driver charts create (and own) them; they are listed so claims can be checked against them."""
    dra = {f for p in pools.values() for f in FAMILIES if p.manager(f) == "dra"}
    if spec.mode == "auto-mode":
        if not spec.cluster.auto_mode.create_device_classes:
            return ()
        out = []
        if "nvidia" in dra:
            out.append(DeviceClassPlan("gpu.nvidia.com", "gpu.nvidia.com", GPU_CEL, "toolkit",
                                       "nvidia.com/gpu" if spec.cluster.kubernetes >= (1, 36) else None))
        if "efa" in dra:
            out.append(DeviceClassPlan("efa.networking.k8s.aws", "dra.net", EFA_CEL, "toolkit"))
        return tuple(out)
    out = []
    if "nvidia-dra-driver" in releases:
        values = releases["nvidia-dra-driver"].values
        owner = "nvidia-dra-driver"
        if (values.get("resources") or {}).get("gpus", {}).get("enabled", True):
            out += [DeviceClassPlan("gpu.nvidia.com", "gpu.nvidia.com", GPU_CEL, owner, "nvidia.com/gpu"),
                    DeviceClassPlan("mig.nvidia.com", "gpu.nvidia.com", MIG_CEL, owner),
                    DeviceClassPlan("vfio.gpu.nvidia.com", "gpu.nvidia.com", VFIO_CEL, owner)]
        if (values.get("resources") or {}).get("computeDomains", {}).get("enabled"):
            out += [DeviceClassPlan("compute-domain-daemon.nvidia.com", "compute-domain.nvidia.com",
                                    CD_DAEMON_CEL, owner),
                    DeviceClassPlan("compute-domain-default-channel.nvidia.com", "compute-domain.nvidia.com",
                                    CD_CHANNEL_CEL, owner)]
    if "aws-dranet" in releases:
        out.append(DeviceClassPlan("efa.networking.k8s.aws", "dra.net", EFA_CEL, "aws-dranet"))
    if "neuron-dra-driver" in releases:
        out.append(DeviceClassPlan("neuron.aws.com", "neuron.aws.com", NEURON_CEL, "neuron-dra-driver"))
    return tuple(out)


def karpenter_dra_settings(pools: dict[str, PoolPlan]) -> dict[str, Any]:
    """Karpenter's DRA settings from the DRA drivers its dynamic pools run: `enableDRA` when both
    NVIDIA and EFA DRA run, else the one gate, else nothing (FACTS §3.2)."""
    dynamic = [p for p in pools.values() if p.provisioning == "dynamic"]
    nvidia = any(p.manager("nvidia") == "dra" for p in dynamic)
    efa = any(p.manager("efa") == "dra" for p in dynamic)
    if nvidia and efa:
        return {"enableDRA": True}
    if nvidia:
        return {"awsFeatureGates": {"draNVIDIAGPU": True}}
    if efa:
        return {"awsFeatureGates": {"draEFA": True}}
    return {}


def _karpenter(spec: Spec, pools: dict[str, PoolPlan]) -> KarpenterPlan | None:
    if spec.mode != "karpenter":
        return None
    dra = karpenter_dra_settings(pools)
    static = any(p.provisioning == "static" for p in pools.values())
    settings: dict[str, Any] = dict(dra)
    if static:
        settings["featureGates"] = {"staticCapacity": True}
    toolkit_values = {"settings": settings}
    return KarpenterPlan(
        version=spec.chart_versions.get("karpenter", spec.cluster.karpenter.version),
        dra_settings=dra, static_capacity=static, toolkit_values=toolkit_values,
        values=merge(toolkit_values, spec.helm_values.get("karpenter", {})),
        reuse_values=spec.cluster.karpenter.reuse_values,
    )


def build(spec: Spec) -> Plan:
    """Derive the plan and run every rule on it; the findings travel with the plan."""
    from .fit import plan_claims  # claims and the fit check read pools and classes; one-way as well
    from .rules import evaluate  # rules read plans; imported here to keep the module graph one-way

    pools = {name: _pool_plan(spec, name, pool) for name, pool in sorted(spec.node_pools.items())}
    releases = _releases(spec, pools)
    device_classes = _device_classes(spec, pools, releases)
    plan = Plan(spec=spec, pools=pools, releases=releases, device_classes=device_classes,
                karpenter=_karpenter(spec, pools), claims=plan_claims(spec, pools, device_classes))
    return Plan(**{**plan.__dict__, "findings": tuple(evaluate(plan))})
