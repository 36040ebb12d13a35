"""Node pools, device software and claims on an EKS cluster the team already runs.

`ClusterDevices(name, ClusterDevicesArgs(...))` takes the stack configuration's sections for what the
cluster runs (`cluster`: name, Kubernetes version, mode and, in karpenter mode, the version and
`settings` of the cluster's own Karpenter release) and what to add (`node_pools`, `claims`, …), plus
what the cluster already has (its Kubernetes provider, node role, subnets, security groups). It plans
them as `Platform` does, with `cluster.existing` set, so the rules check the pools against the
cluster's stated Karpenter (a DRA pool under Karpenter 1.14 or without `settings.enableDRA` is an
error with the fix) and nothing creates a VPC, a cluster or a Karpenter release. Problems raise
`pulumi.InputPropertiesError` before any resource is registered.
"""

# No `from __future__ import annotations`: the args' annotations are read at run time like PlatformArgs'.

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from eks_devices.claims import ClaimTemplates, ClaimTemplatesArgs
from eks_devices.core.config.errors import article
from eks_devices.core.model import Plan
from eks_devices.device_software import DeviceSoftware, DeviceSoftwareArgs
from eks_devices.inputs import check_plan, name_problems, provider_problems, reject
from eks_devices.node_pools import NodePools, NodePoolsArgs, input_problems
from eks_devices.platform import plan_config

CLUSTER_DEVICES_TYPE = "eks-devices:index:ClusterDevices"


@dataclass(frozen=True)
class ClusterDevicesArgs:
    """What the cluster runs and what to add to it (the stack file's sections, camelCase content),
    and the cluster's own resources the pools use."""

    cluster: dict[str, Any]
    """name, version, mode; in karpenter mode `karpenter: {version, settings}` of the cluster's release."""
    k8s_provider: pulumi.ProviderResource
    """A pulumi_kubernetes.Provider for the cluster."""
    node_role_name: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    private_subnet_ids: pulumi.Input[Sequence[str]]
    private_subnets_by_zone: pulumi.Input[dict[str, str]]
    cluster_security_group_id: pulumi.Input[str]
    node_pools: dict[str, Any] = field(default_factory=dict)
    claims: dict[str, Any] = field(default_factory=dict)
    device_classes: dict[str, Any] = field(default_factory=dict)
    helm_values: dict[str, Any] = field(default_factory=dict)
    chart_versions: dict[str, Any] = field(default_factory=dict)
    region: str | None = None
    efa_security_group_id: pulumi.Input[str] | None = None
    """Required by EFA pools: a group allowing all traffic to and from itself."""
    public_subnets_by_zone: pulumi.Input[dict[str, str]] | None = None
    discovery_tag: str | None = None
    """The karpenter.sh/discovery tag value of the subnets and security groups (the cluster's name)."""
    depends_on: Sequence[pulumi.Resource] = ()

    def config(self) -> dict[str, Any]:
        """The stack-configuration part, as PlatformArgs spells it, with `cluster.existing` set."""
        cluster = {**self.cluster, "existing": True} if isinstance(self.cluster, dict) else self.cluster
        out: dict[str, Any] = {"cluster": cluster}
        for key in ("node_pools", "claims", "device_classes", "helm_values", "chart_versions"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.region is not None:
            out["region"] = self.region
        return out


class ClusterDevices(pulumi.ComponentResource):
    """eks-devices' node pools, device software and claims on a cluster the team runs."""

    pulumi_type = CLUSTER_DEVICES_TYPE

    node_pools: NodePools
    device_software: DeviceSoftware
    claims: ClaimTemplates

    def __init__(self, name: str, args: ClusterDevicesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        if not isinstance(args, ClusterDevicesArgs):
            wrong = ("args", f"given {article(type(args).__name__)}; accepted: ClusterDevicesArgs(cluster=..., "
                             "k8s_provider=..., ...)")
            reject("ClusterDevices", [*name_problems(name), wrong])
        self._build(name, plan_config("ClusterDevices", args.config(), name_problems(name)), args, opts)

    @classmethod
    def from_plan(cls, name: str, plan: Plan, args: ClusterDevicesArgs,
                  opts: pulumi.ResourceOptions | None = None) -> "ClusterDevices":
        """The component for a Plan the caller built from `args.config()` (the component provider plans
        first, so that a refusal reaches the engine as property errors)."""
        instance = cls.__new__(cls)
        instance._build(name, plan, args, opts)
        return instance

    def _build(self, name: str, plan: Plan, args: ClusterDevicesArgs, opts: pulumi.ResourceOptions | None) -> None:
        if not isinstance(plan, Plan):
            check_plan("ClusterDevices", plan)  # refuses it
        spec = plan.spec.cluster
        pools = NodePoolsArgs(
            plan=plan, cluster_name=spec.name, k8s_provider=args.k8s_provider, node_role_name=args.node_role_name,
            node_role_arn=args.node_role_arn, private_subnet_ids=args.private_subnet_ids,
            private_subnets_by_zone=args.private_subnets_by_zone, public_subnets_by_zone=args.public_subnets_by_zone,
            cluster_security_group_id=args.cluster_security_group_id, efa_security_group_id=args.efa_security_group_id,
            discovery_tag=args.discovery_tag or spec.name, depends_on=list(args.depends_on))
        # error findings, the name and what the pools lack (the EFA security group, the provider) are refused
        # here, all at once, before this component registers (not by NodePools once it has)
        problems = input_problems(pools)
        if "k8sProvider" not in {path for path, _ in problems}:  # the device software and claims need one
            problems.extend(provider_problems(args.k8s_provider, required=True))
        check_plan("ClusterDevices", plan, [*name_problems(name), *problems])
        self.plan = plan
        super().__init__(CLUSTER_DEVICES_TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.node_pools = NodePools(name, pools, opts=child)
        # DaemonSet-only releases wait for nothing; one running a Deployment lands on the cluster's running nodes
        self.device_software = software = DeviceSoftware(name, DeviceSoftwareArgs(
            plan=plan, k8s_provider=args.k8s_provider), opts=child)
        self.claims = ClaimTemplates(name, ClaimTemplatesArgs(
            plan=plan, k8s_provider=args.k8s_provider, namespaces=software.namespaces,
            device_classes=software.device_classes, releases=software.releases), opts=child)
        self.register_outputs({"nodePools": self.node_pools.physical_names})
