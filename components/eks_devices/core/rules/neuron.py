"""The Neuron family's rules: where its DRA driver can run (not in Auto Mode; Kubernetes 1.34)."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, at, dra_pools, error, rule


@rule("auto-mode-neuron-plugin-only", "Neuron stays on the plugin in Auto Mode", modes=("auto-mode",))
def _auto_mode_neuron_plugin_only(plan: Plan) -> Iterator[Verdict]:
    for pool, _ in dra_pools(plan, ("neuron",)):
        yield error(at(pool, "devices.neuron"),
                    "Auto Mode's DRA covers NVIDIA GPUs and EFA only: its nodes run the Neuron device plugin for "
                    "Trainium and Inferentia, so no Neuron DRA driver would publish these devices",
                    "set devices.neuron: device-plugin (or auto); for the Neuron DRA driver (Logical NeuronCore, "
                    "connected device subsets) use cluster.mode karpenter or managed-node-groups")


@rule("neuron-dra-version", "the Neuron DRA driver needs Kubernetes 1.34")
def _neuron_dra_version(plan: Plan) -> Iterator[Verdict]:
    if plan.spec.cluster.kubernetes >= (1, 34):
        return
    for pool, _ in dra_pools(plan, ("neuron",)):
        yield error(at(pool, "devices.neuron"),
                    f"the Neuron DRA driver needs Kubernetes 1.34 (cluster is {plan.spec.cluster.version})",
                    'set cluster.version to "1.34" or later, or devices.neuron: device-plugin')
