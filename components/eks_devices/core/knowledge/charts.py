"""The Helm charts the toolkit installs: one table of names, sources, versions and namespaces,
and where in each chart's values the device-managing DaemonSets take their node scope.

Versions are the upstream releases listed below; a stack overrides any of them with `eks-devices:chartVersions`.
`RELEASES` lists the releases known of each chart (read from the upstream repositories, each with
its source); `chartVersions` naming another is a finding (`chart-version-known`). Each `Agent` records
what the chart's templates do with the values (checked against the chart sources:
kubernetes-sigs/dra-driver-nvidia-gpu, formerly NVIDIA/k8s-dra-driver-gpu, at 0.4.1 and 0.5.0;
NVIDIA/k8s-device-plugin 0.20.0; aws/eks-charts aws-dranet 1.0.0 and aws-efa-k8s-device-plugin
v0.5.30; aws-neuron/neuron-helm-charts neuron-helm-chart 1.10.0), so the overlap proof in `scope.py`
can tell where each DaemonSet lands from the merged values alone: the chart's default affinity
as data (each term as the chart's values.yaml writes it), or the terms its template builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eks_devices.core.families import DESCRIPTORS
from eks_devices.core.names import INSTANCE_TYPE_LABEL, NFD_PREFIX, NVIDIA_GPU_PRESENT_LABEL
from eks_devices.core.vocabulary import NO_SCHEDULE, Family

ManagerName = str  # "dra" | "device-plugin"


@dataclass(frozen=True)
class Toleration:
    """One toleration of a chart's default `tolerations` list: `Exists` on `key` (any value), or
    `Equal` to `value` when one is given; `effect` None tolerates every effect of the key."""

    key: str
    effect: str | None = None
    value: str | None = None

    def render(self) -> dict[str, str]:
        out = {"key": self.key, "operator": "Equal" if self.value is not None else "Exists"}
        if self.value is not None:
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        return out


@dataclass(frozen=True)
class Agent:
    """A DaemonSet in a chart that manages one device family with one manager.

    `enabled` / `node_selector` / `affinity` / `tolerations` / `instance_types` /
    `instance_label_keys` are dotted paths into the release's values. `builtin_tolerations` are
    taints the template tolerates whatever the values say (hard-coded in the template, not list
    defaults a value would replace). `enabled_default` is the chart's default for the `enabled`
    path; `default_tolerations` the chart's default `tolerations` list while the value is unset (a
    null removes them, as Helm deletes null keys). `default_affinity` is the chart's default
    `affinity` value, which Helm merges the release's value into (maps merge, a list of terms
    replaces, null removes it). With `instance_types_in_affinity` it carries the Neuron chart's
    placeholders, which the template fills with the label key and the `instance_types` list
    (`excluded_prefixes` dropped from it). `instance_label_keys` marks the eks-charts templates,
    which build the required affinity themselves from that list of label keys × the
    `instance_types` list (`affinity` is then None); `host_network` pods get the DaemonSet
    controller's network-unavailable toleration.
    """

    family: Family
    manager: ManagerName
    node_selector: str
    affinity: str | None
    tolerations: str | None
    builtin_tolerations: tuple[str, ...] = ()
    enabled: str | None = None
    enabled_default: bool = True
    instance_types: str | None = None
    default_tolerations: tuple[Toleration, ...] = ()
    excluded_prefixes: tuple[str, ...] = ()
    instance_types_in_affinity: bool = False
    default_affinity: dict[str, Any] | None = None
    instance_label_keys: str | None = None
    default_instance_label_keys: tuple[str, ...] = ()
    host_network: bool = False


@dataclass(frozen=True)
class Chart:
    key: str
    chart: str
    repository: str  # an https Helm repository or an oci:// registry path
    version: str
    namespace: str
    agents: tuple[Agent, ...] = ()

    @property
    def reference(self) -> str:
        """What `helm install` takes: `oci://…/chart` for OCI charts, else the bare chart name."""
        return f"{self.repository}/{self.chart}" if self.repository.startswith("oci://") else self.chart

    @property
    def is_oci(self) -> bool:
        return self.repository.startswith("oci://")


INFERENTIA = ("inf", "ml.inf")  # instance-type prefixes the Neuron chart keeps its DRA driver off
# Placeholders the Neuron chart's default affinity carries and its template fills in: the
# instance-type label key and the `neuronInstances` list (without Inferentia for the DRA driver).
NEURON_INSTANCE_TYPE_KEY = "__INSTANCE_TYPE_KEY__"
NEURON_INSTANCES = "__NEURON_INSTANCES__"


def required(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    """A required node affinity with these terms (each a list of match expressions)."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}}


def _label_in(key: str, value: str) -> list[dict[str, Any]]:
    return [{"key": key, "operator": "In", "values": [value]}]


# NVIDIA's default kubelet-plugin / plugin affinity: NFD's NVIDIA PCI labels, NFD's Tegra CPU
# vendor, or the `nvidia.com/gpu.present` label (dra-driver-nvidia-gpu v0.4.1
# `deployments/helm/dra-driver-nvidia-gpu/values.yaml` lines 288-322; k8s-device-plugin v0.20.0
# `deployments/helm/nvidia-device-plugin/values.yaml` lines 64-85, without the two PCI-class terms).
_NFD = NFD_PREFIX
NVIDIA_DRA_AFFINITY = required(
    _label_in(f"{_NFD}pci-10de.present", "true"), _label_in(f"{_NFD}pci-0302_10de.present", "true"),
    _label_in(f"{_NFD}pci-0300_10de.present", "true"), _label_in(f"{_NFD}cpu-model.vendor_id", "NVIDIA"),
    _label_in(NVIDIA_GPU_PRESENT_LABEL, "true"))
NVIDIA_PLUGIN_AFFINITY = required(
    _label_in(f"{_NFD}pci-10de.present", "true"), _label_in(f"{_NFD}cpu-model.vendor_id", "NVIDIA"),
    _label_in(NVIDIA_GPU_PRESENT_LABEL, "true"))
# The Neuron chart's default affinity: the instance-type label In the placeholder list.
NEURON_AFFINITY = required([{"key": NEURON_INSTANCE_TYPE_KEY, "operator": "In", "values": NEURON_INSTANCES}])
# eks-charts aws-efa-k8s-device-plugin v0.5.30 and aws-dranet 1.0.0 (`values.yaml`
# `supportedInstanceLabels.keys`): one term per key, `key In supportedInstanceLabels.values`; the
# template appends `eks.amazonaws.com/compute-type NotIn [auto]` after the loop, so to the last term.
EKS_CHARTS_INSTANCE_KEYS = (INSTANCE_TYPE_LABEL,)

# The Neuron chart (1.10.0): both DaemonSets take their tolerations only from the values list,
# which defaults to CriticalAddonsOnly, the Neuron taint (NoSchedule) and SageMaker's
# node-health taint. Both modes' default required affinity admits only the instance types listed in
# `neuronInstances` (through the placeholders above), and the DRA driver's drops the Inferentia
# ones (`inf*`): the Neuron DRA driver serves Trainium.
_NEURON_TOLERATIONS = (Toleration("CriticalAddonsOnly"), Toleration("aws.amazon.com/neuron", NO_SCHEDULE),
                       Toleration("sagemaker.amazonaws.com/node-health-status", NO_SCHEDULE, "Unschedulable"))
_NEURON_DRA = Agent("neuron", "dra", "draDriver.nodeSelector", "draDriver.affinity", "draDriver.tolerations",
                    enabled="draDriver.enabled", enabled_default=False, instance_types="neuronInstances",
                    default_tolerations=_NEURON_TOLERATIONS, excluded_prefixes=INFERENTIA,
                    instance_types_in_affinity=True, default_affinity=NEURON_AFFINITY)
_NEURON_PLUGIN = Agent("neuron", "device-plugin", "devicePlugin.nodeSelector", "devicePlugin.affinity",
                       "devicePlugin.tolerations", enabled="devicePlugin.enabled", enabled_default=True,
                       instance_types="neuronInstances", default_tolerations=_NEURON_TOLERATIONS,
                       instance_types_in_affinity=True, default_affinity=NEURON_AFFINITY)

CHARTS: dict[str, Chart] = {
    c.key: c
    for c in (
        Chart("karpenter-crd", "karpenter-crd", "oci://public.ecr.aws/karpenter", "1.15.0", "kube-system"),
        Chart("karpenter", "karpenter", "oci://public.ecr.aws/karpenter", "1.15.0", "kube-system"),
        # kubeletPlugin.tolerations defaults to [nvidia.com/gpu NoSchedule]; a value replaces it. The
        # kubelet plugin manages GPUs only while `resources.gpus.enabled` (default true); with it off
        # it serves ComputeDomains at most, or is not rendered at all. Pinned to 0.5.0, the first
        # release with the ConsumableShares gate that Karpenter time-slicing needs (docs/upgrading.md);
        # its kubelet plugin's affinity, tolerations and DeviceClasses read as 0.4.1's (chart on main at
        # 95932046, the 0.5.0 development line, 2026-08-07).
        Chart("nvidia-dra-driver", "dra-driver-nvidia-gpu", "oci://registry.k8s.io/dra-driver-nvidia/charts",
              "0.5.0", "nvidia",
              (Agent("nvidia", "dra", "kubeletPlugin.nodeSelector", "kubeletPlugin.affinity",
                     "kubeletPlugin.tolerations", enabled="resources.gpus.enabled", enabled_default=True,
                     default_tolerations=(Toleration("nvidia.com/gpu", NO_SCHEDULE),),
                     default_affinity=NVIDIA_DRA_AFFINITY),)),
        # tolerations defaults to [CriticalAddonsOnly, nvidia.com/gpu NoSchedule]; a value replaces both.
        Chart("nvidia-device-plugin", "nvidia-device-plugin", "https://nvidia.github.io/k8s-device-plugin",
              "0.20.0", "nvidia",
              (Agent("nvidia", "device-plugin", "nodeSelector", "affinity", "tolerations",
                     enabled="devicePlugin.enabled",
                     default_tolerations=(Toleration("CriticalAddonsOnly"),
                                          Toleration("nvidia.com/gpu", NO_SCHEDULE)),
                     default_affinity=NVIDIA_PLUGIN_AFFINITY),)),
        # Both eks-charts templates hard-code CriticalAddonsOnly and append `tolerations`, run on the
        # host network, and build their required affinity from supportedInstanceLabels.keys × .values
        # (aws-dranet `templates/daemonset.yaml` lines 35-66, aws-efa-k8s-device-plugin lines 34-64).
        Chart("aws-dranet", "aws-dranet", "https://aws.github.io/eks-charts", "1.0.0", "kube-system",
              (Agent("efa", "dra", "nodeSelector", None, "tolerations", ("CriticalAddonsOnly",),
                     instance_types="supportedInstanceLabels.values", host_network=True,
                     instance_label_keys="supportedInstanceLabels.keys",
                     default_instance_label_keys=EKS_CHARTS_INSTANCE_KEYS),)),
        Chart("aws-efa-k8s-device-plugin", "aws-efa-k8s-device-plugin", "https://aws.github.io/eks-charts",
              "v0.5.30", "kube-system",
              (Agent("efa", "device-plugin", "nodeSelector", None, "tolerations", ("CriticalAddonsOnly",),
                     instance_types="supportedInstanceLabels.values", host_network=True,
                     instance_label_keys="supportedInstanceLabels.keys",
                     default_instance_label_keys=EKS_CHARTS_INSTANCE_KEYS),)),
        # One chart, two releases: DRA mode and plugin mode are exclusive per release (neuron-helm-chart 1.10.0).
        # In DRA mode the chart itself renders the `neuron-dra-driver` Namespace its DaemonSet runs in
        # (`draDriver.namespaceOverride`, no switch to turn that off), so the release lives in
        # kube-system: installed into neuron-dra-driver, Helm could neither create the namespace
        # first (the chart's own object would collide) nor store the release without it.
        Chart("neuron-dra-driver", "neuron-helm-chart", "oci://public.ecr.aws/neuron", "1.10.0",
              "kube-system", (_NEURON_DRA, _NEURON_PLUGIN)),
        Chart("neuron-device-plugin", "neuron-helm-chart", "oci://public.ecr.aws/neuron", "1.10.0",
              "kube-system", (_NEURON_DRA, _NEURON_PLUGIN)),
    )
}

# Which chart key runs a (family, manager) in the self-managed modes: each family's descriptor says.
RELEASE_FOR: dict[tuple[Family, ManagerName], str] = {
    (d.name, manager): key for d in DESCRIPTORS for manager, key in d.releases.items()}  # type: ignore[misc]

@dataclass(frozen=True)
class Releases:
    """The releases known of a chart, oldest first, and where they were read."""

    versions: tuple[str, ...]
    source: str

    def knows(self, version: str) -> bool:
        """Whether `version` is one of them (a leading `v` is optional, as Helm's semver reads it)."""
        return version.removeprefix("v") in {v.removeprefix("v") for v in self.versions}

    @property
    def newest(self) -> str:
        return self.versions[-1]


def _series(prefix: str, minor: int, patches: int | tuple[int, ...]) -> tuple[str, ...]:
    """`prefix1.<minor>.0` … — the patch releases of one minor line."""
    numbers = range(patches + 1) if isinstance(patches, int) else patches
    return tuple(f"{prefix}{minor}.{n}" for n in numbers)


_KARPENTER = Releases(
    tuple(v for minor, last in ((0, 14), (1, 10), (2, 8), (3, 8), (4, 4), (5, 8), (6, 8), (7, 6), (8, 8), (9, 2),
                                (10, 2), (11, 3), (12, 2), (13, 1), (14, 1), (15, 2))
          for v in _series("1.", minor, last)),
    "aws/karpenter-provider-aws tags v1.0.0-v1.14.1; v1.15.0 (#9719, 2026-10), v1.15.1 and v1.15.2 (release notes)")

RELEASES: dict[str, Releases] = {
    "karpenter": _KARPENTER,
    "karpenter-crd": _KARPENTER,
    "nvidia-dra-driver": Releases(
        ("0.4.0", "0.4.1", "0.5.0"),
        "kubernetes-sigs/dra-driver-nvidia-gpu tags v0.4.0, v0.4.1; v0.5.0 (issue #1365, PR #1367, 2026-08-19; "
        "earlier releases are the calendar-versioned nvidia-dra-driver-gpu chart, another name)"),
    "nvidia-device-plugin": Releases(
        ("0.14.0", "0.14.1", "0.14.2", "0.14.3", "0.14.4", "0.14.5", "0.15.0", "0.15.1", "0.16.0", "0.16.1", "0.16.2",
         "0.17.0", "0.17.1", "0.17.2", "0.17.3", "0.17.4", "0.18.0", "0.18.1", "0.18.2", "0.19.0", "0.19.1", "0.19.2",
         "0.19.3", "0.20.0", "0.20.1"),
        "NVIDIA/k8s-device-plugin gh-pages index.yaml (2026-08-20) to 0.20.0; v0.20.1 (PR #2057, 2026-09-22)"),
    "aws-dranet": Releases(("1.0.0",), "aws/eks-charts gh-pages index.yaml (2026-08-03)"),
    "aws-efa-k8s-device-plugin": Releases(
        ("v0.4.2", "v0.4.4", *_series("v0.", 5, (2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21,
                                                   22, 24, 25, 26, 27, 28, 29, 30))),
        "aws/eks-charts gh-pages index.yaml (2026-08-03); later image bumps (PRs #1363, #1366) not read"),
    "neuron-dra-driver": (_NEURON := Releases(
        ("1.8.0", "1.9.0", "1.10.0"), "aws-neuron/neuron-helm-charts releases 1.8.0-1.10.0 (1.10.0: 2026-08-19)")),
    "neuron-device-plugin": _NEURON,
}

# dra-driver-nvidia-gpu's ConsumableShares gate (system-mediated time-slicing through consumable
# capacity): merged 2026-07-30 (PR #1257), first released in 0.5.0. Older drivers refuse the unknown gate.
CONSUMABLE_SHARES_SINCE = "0.5.0"

# GPU models on which the NVIDIA DRA driver's DynamicMIG gate can switch MIG on and partition on
# demand: Hopper and later (EKS-MIG). Ampere (A100) needs partitions created before the driver starts.
DYNAMIC_MIG_GPU_MODELS: frozenset[str] = frozenset(
    {"NVIDIA H100", "NVIDIA H200", "NVIDIA B200", "NVIDIA B300", "NVIDIA GB200", "NVIDIA RTX PRO Server 6000"}
)
