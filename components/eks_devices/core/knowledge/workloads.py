"""What the device charts bring that other objects wait for: which run a Deployment, and under
which values; which install the custom resource definitions the toolkit's objects use.

Most device software is DaemonSets only: a Helm release of it installs (and Helm's wait is
satisfied) before any node exists, because a DaemonSet with no matching node has nothing to wait
for. A Deployment is different: its release waits until a replica runs, so it needs nodes that
can take it. The deploy graph uses this table to let DaemonSet-only releases start as soon as the
cluster answers, and to keep the others behind the system nodes.

Each entry: chart key → the value paths that switch a Deployment on, with the chart's default.
"""

from __future__ import annotations

from typing import Any

from eks_devices.core.values import chart_value

# (value path, chart default) pairs; any true value renders a Deployment.
DEPLOYMENT_SWITCHES: dict[str, tuple[tuple[str, bool], ...]] = {
    # dra-driver-nvidia-gpu v0.4.1: templates/controller.yaml renders the controller Deployment under
    # `resources.computeDomains.enabled` (default true), templates/webhook-deployment.yaml the webhook
    # under `webhook.enabled` (default false); the kubelet plugin is a DaemonSet.
    "nvidia-dra-driver": (("resources.computeDomains.enabled", True), ("webhook.enabled", False)),
    # nvidia-device-plugin 0.20.0: the plugin and GPU feature discovery are DaemonSets; the
    # node-feature-discovery subchart (its master is a Deployment) comes with `nfd.enabled` or `gfd.enabled`.
    "nvidia-device-plugin": (("nfd.enabled", False), ("gfd.enabled", False)),
    # neuron-helm-chart: templates/scheduler-extn.yaml and custom-scheduler.yaml are Deployments under
    # `scheduler.enabled` (default false); the device plugin, DRA driver and node problem detector are DaemonSets.
    "neuron-dra-driver": (("scheduler.enabled", False),),
    "neuron-device-plugin": (("scheduler.enabled", False),),
    # eks-charts aws-dranet 1.0.0 and aws-efa-k8s-device-plugin v0.5.30: one DaemonSet each.
    "aws-dranet": (),
    "aws-efa-k8s-device-plugin": (),
}


def runs_deployment(chart_key: str, values: dict[str, Any]) -> bool:
    """Whether a release of the chart with these merged values renders a Deployment (its install
    then waits for a node to run it); a chart the table does not know is assumed to."""
    switches = DEPLOYMENT_SWITCHES.get(chart_key)
    if switches is None:
        return True
    return any(bool(chart_value(values, path, default)) for path, default in switches)


# Custom resources the toolkit creates → the chart key whose release installs their CRD
# (dra-driver-nvidia-gpu v0.4.1 ships `crds/resource.nvidia.com_computedomains.yaml`).
CRD_CHARTS: dict[str, str] = {"resource.nvidia.com/v1beta1/ComputeDomain": "nvidia-dra-driver"}
