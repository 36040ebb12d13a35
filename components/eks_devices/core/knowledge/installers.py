"""How device software shows up in any Pulumi program: the chart names of the known device charts
and the container images of their device-managing DaemonSets.

The policy pack reads Helm releases and charts by chart name (the last path segment of `chart`, so
`oci://…/dra-driver-nvidia-gpu`, `nvidia-device-plugin` with a repository, and `repo/chart` all
match) and raw DaemonSets by image repository (the last path segment, without tag or digest).
Sources: kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 `deployments/helm/dra-driver-nvidia-gpu/values.yaml`
(`image.repository`); NVIDIA/k8s-device-plugin v0.20.0 `deployments/helm/nvidia-device-plugin/values.yaml`;
aws/eks-charts `stable/aws-efa-k8s-device-plugin/values.yaml` and `stable/aws-dranet/values.yaml`;
aws-neuron/neuron-helm-charts 1.10.0 `values.yaml` (`devicePlugin.image`, `draDriver.image`).
"""

from __future__ import annotations

from eks_devices.core.knowledge.charts import CHARTS, ManagerName
from eks_devices.core.vocabulary import Family

# Chart name → the chart key whose agents model it. The Neuron chart is one chart in two modes;
# both keys carry the same agents, so either models a release of it. `nvidia-dra-driver-gpu` is the
# NVIDIA DRA driver's chart before its move to kubernetes-sigs (CalVer 25.x, same value paths for the
# kubelet plugin's node selection and `resources.gpus.enabled`).
CHART_KEYS: dict[str, str] = {
    **{c.chart: c.key for c in CHARTS.values() if c.agents and c.key != "neuron-device-plugin"},
    "nvidia-dra-driver-gpu": "nvidia-dra-driver",
}
KARPENTER_CHART = CHARTS["karpenter"].chart

# Image repository name → the device manager a DaemonSet running it is.
IMAGES: dict[str, tuple[Family, ManagerName]] = {
    "dra-driver-nvidia-gpu": ("nvidia", "dra"),       # registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu
    "k8s-dra-driver-gpu": ("nvidia", "dra"),          # nvcr.io/nvidia/k8s-dra-driver-gpu (25.x)
    "k8s-device-plugin": ("nvidia", "device-plugin"),  # nvcr.io/nvidia/k8s-device-plugin
    "dranet": ("efa", "dra"),                          # <account>.dkr.ecr.<region>.amazonaws.com/eks/dranet
    "aws-efa-k8s-device-plugin": ("efa", "device-plugin"),
    "neuron-dra-driver": ("neuron", "dra"),            # public.ecr.aws/neuron/neuron-dra-driver
    "neuron-device-plugin": ("neuron", "device-plugin"),  # public.ecr.aws/neuron/neuron-device-plugin
}


def chart_key(chart: str) -> str | None:
    """The chart key of a Helm chart reference (`oci://…/name`, `repo/name`, `name`), or None."""
    return CHART_KEYS.get(chart.rstrip("/").rsplit("/", 1)[-1])


def image_manager(image: str) -> tuple[Family, ManagerName] | None:
    """The (family, manager) a container image runs, from its repository name, or None."""
    repository = image.split("@", 1)[0]
    name = repository.rsplit("/", 1)[-1].split(":", 1)[0]
    return IMAGES.get(name)
