"""NVIDIA's device plugin chart: nvidia-device-plugin (NVIDIA/k8s-device-plugin), read at 0.20.0; and the other
installer of NVIDIA's device plugin the policy pack recognises, the GPU Operator.

The NVIDIA GPU Operator installs the device plugin itself (NVIDIA/gpu-operator v26.7.0
`deployments/gpu-operator/values.yaml`: `devicePlugin.enabled: true`, operands tolerate
`daemonsets.tolerations`, by default `nvidia.com/gpu` NoSchedule; `clusterPolicy.deployCR` makes the
`ClusterPolicy` that deploys it) and, from 26.7, the DRA driver when `gpuCluster.deployCR` makes a
`GPUCluster` (nvidia.com/v1alpha1; "It is an invalid configuration for both CRs to exist"). Its
operands select nodes by `nvidia.com/gpu.deploy.<operand>: "true"` (`assets/state-device-plugin/
0500_daemonset.yaml`), a label the operator puts on every node with an NVIDIA GPU, except nodes
labelled `nvidia.com/gpu.deploy.operands=false` or `nvidia.com/gpu.deploy.<operand>=false`
(`controllers/state_manager.go`, `hasOperandsDisabled`): every other GPU node, whatever the values say.
The agents below model that labelling as a required affinity.
"""

from __future__ import annotations

from typing import Any

from eks_devices.core.knowledge.charts.base import (
    Agent,
    Chart,
    Image,
    Refusal,
    Releases,
    Toleration,
    Values,
    label_in,
    required,
    truthy,
)
from eks_devices.core.names import NFD_PREFIX, NVIDIA_GPU_PRESENT_LABEL
from eks_devices.core.values import chart_value
from eks_devices.core.vocabulary import NO_SCHEDULE

# The default affinity: NFD's NVIDIA PCI label, NFD's Tegra CPU vendor, or `nvidia.com/gpu.present`
# (v0.20.0 `deployments/helm/nvidia-device-plugin/values.yaml` lines 64-85, without the two PCI-class terms).
NVIDIA_PLUGIN_AFFINITY = required(
    label_in(f"{NFD_PREFIX}pci-10de.present", "true"), label_in(f"{NFD_PREFIX}cpu-model.vendor_id", "NVIDIA"),
    label_in(NVIDIA_GPU_PRESENT_LABEL, "true"))

# What its templates refuse: `templates/validation.yml` at v0.20.0, with `hasDefaultConfig` from
# `templates/_helpers.tpl` (its `default`-namespace check cannot be reached: the toolkit installs into `nvidia`).
VALIDATION = "nvidia-device-plugin v0.20.0 templates/validation.yml"


def _has_default(values: Values) -> bool:
    """The chart's `hasDefaultConfig`: `config.default`, or a fallback strategy that finds one."""
    if truthy(chart_value(values, "config.default", "")):
        return True
    config_map = chart_value(values, "config.map", {}) or {}
    strategies = chart_value(values, "config.fallbackStrategies", ["named", "single"]) or []
    return bool(config_map) and (("named" in strategies and "default" in config_map)
                                 or ("single" in strategies and len(config_map) == 1) or "empty" in strategies)


KEY = "nvidia-device-plugin"
# tolerations defaults to [CriticalAddonsOnly, nvidia.com/gpu NoSchedule]; a value replaces both. The plugin
# and GPU feature discovery are DaemonSets; the node-feature-discovery subchart (its master is a Deployment)
# comes with `nfd.enabled` or `gfd.enabled`.
CHART = Chart(
    KEY, "nvidia-device-plugin", "https://nvidia.github.io/k8s-device-plugin", "0.20.0", "nvidia",
    Releases(("0.14.0", "0.14.1", "0.14.2", "0.14.3", "0.14.4", "0.14.5", "0.15.0", "0.15.1", "0.16.0", "0.16.1",
              "0.16.2", "0.17.0", "0.17.1", "0.17.2", "0.17.3", "0.17.4", "0.18.0", "0.18.1", "0.18.2", "0.19.0",
              "0.19.1", "0.19.2", "0.19.3", "0.20.0", "0.20.1"),
             "NVIDIA/k8s-device-plugin gh-pages index.yaml (2026-08-20) to 0.20.0; v0.20.1 (PR #2057, 2026-09-22)"),
    # templates/_helpers.tpl `nvidia-device-plugin.fullimage`: `<repository>:<tag | default "v" + appVersion>`
    # (appVersion is the chart version); the plugin and GPU feature discovery run it
    images=(Image("image.repository", "image.tag", "nvcr.io/nvidia/k8s-device-plugin",
                  tag_of=lambda version: f"v{version}"),),
    agents=(Agent("nvidia", "device-plugin", "nodeSelector", "affinity", "tolerations",
                  enabled="devicePlugin.enabled",
                  default_tolerations=(Toleration("CriticalAddonsOnly"), Toleration("nvidia.com/gpu", NO_SCHEDULE)),
                  default_affinity=NVIDIA_PLUGIN_AFFINITY, images=("k8s-device-plugin",)),),
    refusals=(
        Refusal(KEY, ("namespace",), lambda v: truthy(chart_value(v, "namespace")),
                "an explicit `namespace` value is no longer supported", "no `namespace` value (the release's "
                "namespace is the toolkit's)", VALIDATION),
        Refusal(KEY, ("config.name", "config.map"),
                lambda v: truthy(chart_value(v, "config.name", "")) and truthy(chart_value(v, "config.map", {})),
                "both config.name and config.map are set (the toolkit sets config.map for time-slicing pools)",
                "only one of config.name or config.map", VALIDATION),
        Refusal(KEY, ("config.default", "config.map", "config.fallbackStrategies"),
                lambda v: truthy(chart_value(v, "config.map", {})) and not _has_default(v),
                "config.map has no default config and no fallback strategy finds one",
                "config.default naming an entry of config.map (or a map with a `default` entry)", VALIDATION),
    ),
    deployment_switches=(("nfd.enabled", False), ("gfd.enabled", False)),
)


GPU_OPERATOR_CHART = "gpu-operator"
GPU_OPERATOR_CRS = {"ClusterPolicy": "nvidia.com", "GPUCluster": "nvidia.com"}  # kind → API group
_OPERAND = {"node_selector": "daemonsets.nodeSelector", "affinity": None, "tolerations": "daemonsets.tolerations",
            "default_tolerations": (Toleration("nvidia.com/gpu", NO_SCHEDULE),)}


def _operand_nodes(operand: str) -> dict[str, Any]:
    """The GPU nodes the operator deploys `operand` to: those not opted out by label."""
    opted_out = [{"key": key, "operator": "NotIn", "values": ["false"]}
                 for key in ("nvidia.com/gpu.deploy.operands", f"nvidia.com/gpu.deploy.{operand}")]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": opted_out}]}}}


# the operator's own chart values (a release) and the CRs' specs share these paths
GPU_OPERATOR_AGENTS = (Agent("nvidia", "device-plugin", enabled="devicePlugin.enabled",
                             default_affinity=_operand_nodes("device-plugin"), **_OPERAND),
                       Agent("nvidia", "dra", enabled="gpuCluster.deployCR", enabled_default=False,
                             default_affinity=_operand_nodes("dra-driver"), **_OPERAND))
CLUSTER_POLICY_AGENTS = (GPU_OPERATOR_AGENTS[0],)
GPU_CLUSTER_AGENTS = (Agent("nvidia", "dra", default_affinity=_operand_nodes("dra-driver"), **_OPERAND),)
