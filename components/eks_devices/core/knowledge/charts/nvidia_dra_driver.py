"""The NVIDIA DRA driver's chart: dra-driver-nvidia-gpu (kubernetes-sigs/dra-driver-nvidia-gpu, formerly
NVIDIA/k8s-dra-driver-gpu), read at 0.4.1 and 0.5.0."""

from __future__ import annotations

from typing import Any

from eks_devices.core.families import NVIDIA
from eks_devices.core.knowledge import versions
from eks_devices.core.knowledge.charts.base import (
    Agent,
    Chart,
    ChartClass,
    Image,
    Refusal,
    Releases,
    Toleration,
    Values,
    label_in,
    required,
    truthy,
)
from eks_devices.core.names import NFD_PREFIX, NVIDIA_GPU_PRESENT_LABEL, RESOURCE_API_V1
from eks_devices.core.values import chart_value, dig
from eks_devices.core.vocabulary import NO_SCHEDULE

# The default kubelet-plugin affinity: NFD's NVIDIA PCI labels, NFD's Tegra CPU vendor, or the
# `nvidia.com/gpu.present` label (v0.4.1 `deployments/helm/dra-driver-nvidia-gpu/values.yaml` lines 288-322).
NVIDIA_DRA_AFFINITY = required(
    label_in(f"{NFD_PREFIX}pci-10de.present", "true"), label_in(f"{NFD_PREFIX}pci-0302_10de.present", "true"),
    label_in(f"{NFD_PREFIX}pci-0300_10de.present", "true"), label_in(f"{NFD_PREFIX}cpu-model.vendor_id", "NVIDIA"),
    label_in(NVIDIA_GPU_PRESENT_LABEL, "true"))

# The ConsumableShares gate (system-mediated time-slicing through consumable capacity): merged
# 2026-07-30 (PR #1257), first released in 0.5.0. Older drivers refuse the unknown gate.
CONSUMABLE_SHARES_SINCE = "0.5.0"

# GPU models on which the DynamicMIG gate can switch MIG on and partition on demand: Hopper and later
# (EKS-MIG). Ampere (A100) needs partitions created before the driver starts.
DYNAMIC_MIG_GPU_MODELS: frozenset[str] = frozenset(
    {"NVIDIA H100", "NVIDIA H200", "NVIDIA B200", "NVIDIA B300", "NVIDIA GB200", "NVIDIA RTX PRO Server 6000"}
)

# What its templates refuse: `templates/validation.yaml` at v0.4.1 (unchanged on main at 95932046, the
# 0.5.0 development line) and `templates/_helpers.tpl` `validateIMEXConfig` (main at 95932046, released in
# 0.5.0, PR #1367). Its `default`-namespace and resource.k8s.io API checks cannot be reached: the toolkit
# installs into `nvidia` and sets `resourceApiVersion`, which every supported Kubernetes serves.
VALIDATION = "dra-driver-nvidia-gpu v0.4.1 templates/validation.yaml"
IMEX = "dra-driver-nvidia-gpu v0.5.0 templates/_helpers.tpl (validateIMEXConfig)"


def _webhook_on(values: Values) -> bool:
    return truthy(chart_value(values, "webhook.enabled", False))


def _tls_mode(values: Values) -> Any:
    return chart_value(values, "webhook.tls.mode", "cert-manager")


def _issuer_type(values: Values) -> Any:
    return chart_value(values, "webhook.tls.certManager.issuerType", "selfsigned")


def _imex(values: Values, field: str, default: str) -> str:
    """`dig <field> <default> imex` as the 0.5.0 helper reads it (a null imex map is an empty one)."""
    if not truthy(chart_value(values, "resources.computeDomains.enabled", True)):
        return default  # the kubelet plugin template validates IMEX only with ComputeDomains on
    imex = chart_value(values, "resources.computeDomains.imex", None) or {}
    value = imex.get(field) if isinstance(imex, dict) else None
    return default if value is None else str(value)  # Helm drops a null key: the default applies


KEY = "nvidia-dra-driver"
REFUSALS: tuple[Refusal, ...] = (
    Refusal(KEY, ("namespace",), lambda v: truthy(chart_value(v, "namespace")),
            "an explicit `namespace` value is no longer supported", "no `namespace` value (the release's "
            "namespace is the toolkit's)", VALIDATION),
    Refusal(KEY, ("gpuResourcesEnabledOverride", "resources.gpus.enabled"),
            lambda v: truthy(chart_value(v, "resources.gpus.enabled", True))
            and not truthy(chart_value(v, "gpuResourcesEnabledOverride", False)),
            "GPU resources are on (resources.gpus.enabled) without gpuResourcesEnabledOverride: true",
            "gpuResourcesEnabledOverride: true while resources.gpus.enabled is on (the toolkit sets both)",
            VALIDATION),
    Refusal(KEY, ("nvidiaCtkPath",), lambda v: truthy(chart_value(v, "nvidiaCtkPath")),
            "a user-defined nvidiaCtkPath is no longer supported", "no nvidiaCtkPath value", VALIDATION),
    Refusal(KEY, ("webhook.tls.mode", "webhook.enabled"),
            lambda v: _webhook_on(v) and _tls_mode(v) not in ("cert-manager", "secret"),
            "the webhook is on without a valid webhook.tls.mode",
            "webhook.tls.mode: cert-manager or secret", VALIDATION),
    Refusal(KEY, ("webhook.tls.certManager.issuerType", "webhook.enabled"),
            lambda v: _webhook_on(v) and _tls_mode(v) == "cert-manager"
            and _issuer_type(v) not in ("selfsigned", "clusterissuer", "issuer"),
            "the webhook's cert-manager mode has no valid issuer type",
            "webhook.tls.certManager.issuerType: selfsigned, clusterissuer or issuer", VALIDATION),
    Refusal(KEY, ("webhook.tls.certManager.issuerName", "webhook.tls.certManager.issuerType"),
            lambda v: _webhook_on(v) and _tls_mode(v) == "cert-manager"
            and _issuer_type(v) in ("clusterissuer", "issuer")
            and not truthy(chart_value(v, "webhook.tls.certManager.issuerName", "")),
            "the webhook's cert-manager issuer is not self-signed but has no name",
            "webhook.tls.certManager.issuerName: the name of your issuer (or issuerType: selfsigned)",
            VALIDATION),
    Refusal(KEY, ("webhook.tls.secret.name", "webhook.tls.mode"),
            lambda v: _webhook_on(v) and _tls_mode(v) == "secret"
            and not truthy(chart_value(v, "webhook.tls.secret.name", "")),
            "the webhook's secret mode names no TLS secret",
            "webhook.tls.secret.name: the secret holding tls.crt and tls.key", VALIDATION),
    Refusal(KEY, ("resources.computeDomains.imex.mode", "featureGates.HostManagedIMEXDaemon"),
            lambda v: _imex(v, "mode", "driverManaged") not in ("driverManaged", "hostManaged")
            or (_imex(v, "mode", "driverManaged") == "hostManaged"
                and not truthy(chart_value(v, "featureGates.HostManagedIMEXDaemon", False))),
            "ComputeDomains' IMEX mode is unknown, or hostManaged without the HostManagedIMEXDaemon gate",
            "resources.computeDomains.imex.mode: driverManaged, or hostManaged with "
            "featureGates.HostManagedIMEXDaemon: true", IMEX, since="0.5.0"),
    Refusal(KEY, ("resources.computeDomains.imex.isolation",),
            lambda v: _imex(v, "isolation", "domain") not in ("", "domain"),
            "ComputeDomains' IMEX isolation is not `domain` (channel isolation is not implemented)",
            "resources.computeDomains.imex.isolation: domain", IMEX, since="0.5.0"),
)

# kubeletPlugin.tolerations defaults to [nvidia.com/gpu NoSchedule]; a value replaces it. The kubelet plugin
# manages GPUs only while `resources.gpus.enabled` (default true); with it off it serves ComputeDomains at most,
# or is not rendered at all. Pinned to 0.5.0, the first release with the ConsumableShares gate that Karpenter
# time-slicing needs (docs/upgrading.md); its kubelet plugin's affinity, tolerations and DeviceClasses read as
# 0.4.1's (chart on main at 95932046, the 0.5.0 development line, 2026-08-07). templates/controller.yaml renders
# the controller Deployment under `resources.computeDomains.enabled` (default true), templates/webhook-deployment
# .yaml the webhook under `webhook.enabled` (default false); `crds/resource.nvidia.com_computedomains.yaml`.
# The DeviceClasses its templates create (templates/deviceclass-*.yaml at 0.4.1 and 0.5.0): the GPU, MIG and
# VFIO classes under `resources.gpus.enabled`, the ComputeDomain daemon and default-channel classes under
# `resources.computeDomains.enabled` (0.5.0 renders no daemon class when the host runs IMEX).
GPU_CEL = NVIDIA.device_class_cel
MIG_CEL = GPU_CEL.replace("== 'gpu'", "== 'mig'")
VFIO_CEL = GPU_CEL.replace("== 'gpu'", "== 'vfio'")
COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"
CD_DAEMON_CEL = (f"device.driver == '{COMPUTE_DOMAIN_DRIVER}' && "
                 f"device.attributes['{COMPUTE_DOMAIN_DRIVER}'].type == 'daemon'")
CD_CHANNEL_CEL = (f"device.driver == '{COMPUTE_DOMAIN_DRIVER}' && "
                  f"device.attributes['{COMPUTE_DOMAIN_DRIVER}'].type == 'channel' && "
                  f"device.attributes['{COMPUTE_DOMAIN_DRIVER}'].id == 0")
MIG_CLASS = "mig.nvidia.com"
VFIO_CLASS = "vfio.gpu.nvidia.com"
DAEMON_CLASS = "compute-domain-daemon.nvidia.com"
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
_GPUS = ("resources.gpus.enabled", True)
_DOMAINS = ("resources.computeDomains.enabled", True)


def _gpu_resource(values: Values, kubernetes: tuple[int, int]) -> str | None:
    """The GPU class names `nvidia.com/gpu` for plain requests when the chart renders resource.k8s.io/v1
    classes (`resourceApiVersion`, by default v1 from Kubernetes 1.34)."""
    api = dig(values, "resourceApiVersion") or (RESOURCE_API_V1 if kubernetes >= (1, 34) else "")
    return NVIDIA.extended_resource if api == RESOURCE_API_V1 else None


def _host_imex(values: Values, version: str) -> bool:
    return (dig(values, "resources.computeDomains.imex.mode") == "hostManaged"
            and versions.semver(version) >= (0, 5, 0))


DEVICE_CLASSES = (
    ChartClass(NVIDIA.device_class, NVIDIA.dra_driver, GPU_CEL, _GPUS, extended_resource=_gpu_resource),
    ChartClass(MIG_CLASS, NVIDIA.dra_driver, MIG_CEL, _GPUS),
    ChartClass(VFIO_CLASS, NVIDIA.dra_driver, VFIO_CEL, _GPUS),
    ChartClass(DAEMON_CLASS, COMPUTE_DOMAIN_DRIVER, CD_DAEMON_CEL, _DOMAINS, skipped=_host_imex),
    ChartClass(CHANNEL_CLASS, COMPUTE_DOMAIN_DRIVER, CD_CHANNEL_CEL, _DOMAINS),
)
# The ComputeDomain CRD the chart installs: its API, and the rule that makes its spec immutable
# (`self == oldSelf`; the driver was NVIDIA/k8s-dra-driver-gpu before it moved to kubernetes-sigs).
COMPUTE_DOMAIN_API = "resource.nvidia.com/v1beta1"
COMPUTE_DOMAIN_IMMUTABLE = ("kubernetes-sigs/dra-driver-nvidia-gpu v25.12.0 "
                            "api/nvidia.com/resource/v1beta1/computedomain.go:60")

CHART = Chart(
    KEY, "dra-driver-nvidia-gpu", "oci://registry.k8s.io/dra-driver-nvidia/charts", "0.5.0", "nvidia",
    Releases(("0.4.0", "0.4.1", "0.5.0"),
             "kubernetes-sigs/dra-driver-nvidia-gpu tags v0.4.0, v0.4.1; v0.5.0 (issue #1365, PR #1367, 2026-08-19; "
             "earlier releases are the calendar-versioned nvidia-dra-driver-gpu chart, another name)"),
    # templates/_helpers.tpl `dra-driver-nvidia-gpu.fullimage`: `<repository>:<tag | default "v" + appVersion>`
    # (appVersion is the chart version), for the kubelet plugin, controller and webhook alike
    images=(Image("image.repository", "image.tag", "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu",
                  tag_of=lambda version: f"v{version}"),),
    agents=(Agent("nvidia", "dra", "kubeletPlugin.nodeSelector", "kubeletPlugin.affinity", "kubeletPlugin.tolerations",
                  enabled="resources.gpus.enabled", enabled_default=True,
                  default_tolerations=(Toleration("nvidia.com/gpu", NO_SCHEDULE),),
                  default_affinity=NVIDIA_DRA_AFFINITY,
                  # registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu; nvcr.io/nvidia/k8s-dra-driver-gpu (25.x)
                  images=("dra-driver-nvidia-gpu", "k8s-dra-driver-gpu")),),
    refusals=REFUSALS,
    read_values=(("featureGates", "mapping"), ("resourceApiVersion", "text")),
    device_classes=DEVICE_CLASSES,
    deployment_switches=(("resources.computeDomains.enabled", True), ("webhook.enabled", False)),
    crds=(f"{COMPUTE_DOMAIN_API}/ComputeDomain",),
    # the chart before its move to kubernetes-sigs (CalVer 25.x, same value paths for the kubelet plugin's
    # node selection and `resources.gpus.enabled`)
    former_names=("nvidia-dra-driver-gpu",),
)
