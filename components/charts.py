"""The Helm charts the toolkit installs: one table of names, sources, versions and namespaces,
and where in each chart's values the device-managing DaemonSets take their node scope.

Versions are FACTS.md's; a stack overrides any of them with `eks-devices:chartVersions`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .spec import Family

ManagerName = str  # "dra" | "device-plugin"


@dataclass(frozen=True)
class Agent:
    """A DaemonSet in a chart that manages one device family with one manager.

    `enabled` / `node_selector` / `affinity` / `tolerations` are dotted paths into the release's
    values; `builtin_tolerations` are taints the chart tolerates whatever the values say.
    `enabled_default` is the chart's default for the `enabled` path.
    """

    family: Family
    manager: ManagerName
    node_selector: str
    affinity: str | None
    tolerations: str | None
    builtin_tolerations: tuple[str, ...] = ()
    enabled: str | None = None
    enabled_default: bool = True


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


_NEURON_DRA = Agent("neuron", "dra", "draDriver.nodeSelector", None, None,
                    ("aws.amazon.com/neuron",), enabled="draDriver.enabled", enabled_default=False)
_NEURON_PLUGIN = Agent("neuron", "device-plugin", "devicePlugin.nodeSelector", None, None,
                       ("aws.amazon.com/neuron",), enabled="devicePlugin.enabled", enabled_default=True)

CHARTS: dict[str, Chart] = {
    c.key: c
    for c in (
        Chart("karpenter-crd", "karpenter-crd", "oci://public.ecr.aws/karpenter", "1.15.0", "kube-system"),
        Chart("karpenter", "karpenter", "oci://public.ecr.aws/karpenter", "1.15.0", "kube-system"),
        Chart("nvidia-dra-driver", "dra-driver-nvidia-gpu", "oci://registry.k8s.io/dra-driver-nvidia/charts",
              "0.4.1", "nvidia",
              (Agent("nvidia", "dra", "kubeletPlugin.nodeSelector", "kubeletPlugin.affinity",
                     "kubeletPlugin.tolerations"),)),
        Chart("nvidia-device-plugin", "nvidia-device-plugin", "https://nvidia.github.io/k8s-device-plugin",
              "0.20.0", "nvidia",
              (Agent("nvidia", "device-plugin", "nodeSelector", "affinity", "tolerations",
                     ("CriticalAddonsOnly",)),)),
        Chart("aws-dranet", "aws-dranet", "https://aws.github.io/eks-charts", "1.0.0", "kube-system",
              (Agent("efa", "dra", "nodeSelector", None, "tolerations"),)),
        Chart("aws-efa-k8s-device-plugin", "aws-efa-k8s-device-plugin", "https://aws.github.io/eks-charts",
              "v0.5.30", "kube-system",
              (Agent("efa", "device-plugin", "nodeSelector", None, "tolerations", ("CriticalAddonsOnly",)),)),
        # One chart, two releases: DRA mode and plugin mode are exclusive per release (FACTS §2.5).
        Chart("neuron-dra-driver", "neuron-helm-chart", "oci://public.ecr.aws/neuron", "1.10.0",
              "neuron-dra-driver", (_NEURON_DRA, _NEURON_PLUGIN)),
        Chart("neuron-device-plugin", "neuron-helm-chart", "oci://public.ecr.aws/neuron", "1.10.0",
              "kube-system", (_NEURON_DRA, _NEURON_PLUGIN)),
    )
}

# Which chart key runs a (family, manager) in the self-managed modes.
RELEASE_FOR: dict[tuple[Family, ManagerName], str] = {
    ("nvidia", "dra"): "nvidia-dra-driver",
    ("nvidia", "device-plugin"): "nvidia-device-plugin",
    ("efa", "dra"): "aws-dranet",
    ("efa", "device-plugin"): "aws-efa-k8s-device-plugin",
    ("neuron", "dra"): "neuron-dra-driver",
    ("neuron", "device-plugin"): "neuron-device-plugin",
}

# ECR account that serves EKS add-on images in most commercial regions.
EKS_ECR_ACCOUNT = "602401143452"
