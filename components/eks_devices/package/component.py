"""The hosted `Platform` (`eks-devices:index:Platform`): the Python `Platform` with the outputs a
program in another language reads — cluster name, kubeconfig (secret), VPC and subnet ids, node role
ARN, the Kubernetes provider and the device plan.

It registers exactly what the Python `Platform` registers (same type token, names and children), so
`preview` of a stack and a multi-language program with the same arguments agree resource for resource.
"""

# No `from __future__ import annotations`: the analyzer reads the output annotations at run time.

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from eks_devices import platform
from eks_devices.cluster import kubeconfig_with_profile
from eks_devices.config_types import PlatformArgs
from eks_devices.core.model import Plan
from eks_devices.package.arguments import plan_inputs
from eks_devices.package.outputs import DevicePlan


class Platform(platform.Platform):
    """An EKS cluster for accelerated workloads: the network, the cluster, node pools labelled with
    their device manager per family, the DRA drivers or device plugins scoped to exactly those pools,
    and the declared claims. Invalid arguments and error findings are refused before anything is
    created, one property error each."""

    cluster_name: pulumi.Output[str]
    """The EKS cluster's name."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (secret); it asks for tokens with `profile` when set."""
    vpc_id: pulumi.Output[str]
    """The VPC the cluster runs in (created or brought)."""
    private_subnet_ids: pulumi.Output[list[str]]
    """The private subnets (one per zone when the VPC is created; the brought ones otherwise)."""
    public_subnet_ids: pulumi.Output[list[str]]
    """The public subnets (one per zone when the VPC is created; the brought ones otherwise)."""
    node_role_arn: pulumi.Output[str]
    """The IAM role of the accelerated nodes."""
    kubernetes_provider: k8s.Provider
    """The Kubernetes provider for the cluster, for your own workloads."""
    device_plan: pulumi.Output[DevicePlan]
    """Per pool and device family the manager and why, the releases serving them, and the warnings."""

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        self._build(name, plan_inputs(platform.stack_keys(args, PlatformArgs)), opts)

    def _build(self, name: str, plan: Plan, opts: pulumi.ResourceOptions | None) -> None:
        super()._build(name, plan, opts)
        eks_cluster = self.cluster.eks
        profile = plan.spec.aws_profile
        kubeconfig = eks_cluster.kubeconfig_json
        if profile:
            kubeconfig = kubeconfig.apply(lambda text: kubeconfig_with_profile(text, profile))
        self.cluster_name = self.cluster.name
        self.kubeconfig = pulumi.Output.secret(kubeconfig)
        self.vpc_id = self.network.vpc_id
        self.private_subnet_ids = self.network.private_subnet_ids
        self.public_subnet_ids = self.network.public_subnet_ids
        self.node_role_arn = self.cluster.node_role_arn
        self.kubernetes_provider = self.cluster.k8s_provider
        self.device_plan = device_plan(plan)  # type: ignore[assignment]  # plain data, known at construct time


def device_plan(plan: Plan) -> dict[str, Any]:
    """The plan's device decisions as `DevicePlan`. The SDK renames only the top level of an output
    type (`ComponentProvider.map_complex_output`), so nested keys are written as the wire names them."""
    pools = {
        name: {
            "managers": {family: {"manager": r.manager, "requested": r.requested, "reason": r.reason,
                                  **({"release": pool.releases[family]} if family in pool.releases else {})}
                         for family, r in pool.managers.items()},
            "labels": dict(sorted(pool.labels.items())),
            "instanceTypes": list(pool.instance_types),
        }
        for name, pool in sorted(plan.pools.items())
    }
    releases = {key: {"chart": r.chart, "version": r.version, "namespace": r.namespace, "family": r.family,
                      "manager": r.manager, "pools": list(r.pools)}
                for key, r in sorted(plan.releases.items())}
    return {"mode": plan.mode, "pools": pools, "releases": releases,
            "findings": [f.as_dict() for f in plan.findings]}

