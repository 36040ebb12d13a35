"""One stack's platform: the network, the cluster on it, then the node pools, the device software
and the declared claims — every piece read from the plan, none of them re-deciding it.

`Platform(name, PlatformArgs(...))` takes the stack configuration's shape and plans it itself;
`Platform.from_plan(name, plan)` takes a Plan already built. Either way a configuration problem or
an error finding raises `pulumi.InputPropertiesError` (one entry per problem, at its property
path) before any resource is registered.
"""

# No `from __future__ import annotations` here: Pulumi's component analyzer reads these annotations
# at run time to infer the multi-language schema of PlatformArgs.

from typing import Any, NotRequired, TypedDict

import pulumi

from eks_devices import answers
from eks_devices.claims import ClaimTemplates, ClaimTemplatesArgs
from eks_devices.cluster import Cluster, ClusterArgs, cluster_reads, endpoint_problems
from eks_devices.core import planner
from eks_devices.core.model import Plan
from eks_devices.core.names import PLATFORM_TYPE
from eks_devices.core.spec.errors import ConfigError
from eks_devices.core.spec.stack import NAMESPACE, parse
from eks_devices.device_software import DeviceSoftware, DeviceSoftwareArgs
from eks_devices.inputs import check_plan, config_problems, reject
from eks_devices.network import Network, NetworkArgs, network_reads
from eks_devices.node_pools import NodePools, NodePoolsArgs


class PlatformArgs(TypedDict):
    """The stack configuration, key for key: each `eks-devices:<key>` of a stack file under its
    snake_case name, with the same camelCase content (see the README's configuration reference);
    `aws:region` is `region` and `aws:profile` is `profile`. Only `cluster` is required."""

    cluster: dict[str, Any]
    """name, version (e.g. "1.36"), mode (auto-mode | karpenter | managed-node-groups) and settings."""
    region: NotRequired[str]
    """The AWS region (us-west-2 when absent)."""
    profile: NotRequired[str]
    """The AWS profile the cluster's kubeconfig asks for tokens with."""
    network: NotRequired[dict[str, Any]]
    """The VPC to create (cidr, availabilityZones, natGateways) or to bring (vpcId, subnet ids)."""
    node_pools: NotRequired[dict[str, Any]]
    """Node pools by name: instanceTypes, provisioning, capacity, devices per family, efa, gpuSharing, …"""
    device_classes: NotRequired[dict[str, Any]]
    """Extra DeviceClasses under your own names, narrowing an upstream class."""
    claims: NotRequired[dict[str, Any]]
    """Workload ResourceClaims / ResourceClaimTemplates by name, with the pools they must fit."""
    helm_values: NotRequired[dict[str, Any]]
    """Per-chart value overrides, merged last and re-checked by the rules."""
    chart_versions: NotRequired[dict[str, Any]]
    """Per-chart version overrides."""


# PlatformArgs key → the stack configuration key it stands for.
STACK_KEYS = {"region": "aws:region", "profile": "aws:profile", "network": f"{NAMESPACE}:network",
              "cluster": f"{NAMESPACE}:cluster", "node_pools": f"{NAMESPACE}:nodePools",
              "device_classes": f"{NAMESPACE}:deviceClasses", "claims": f"{NAMESPACE}:claims",
              "helm_values": f"{NAMESPACE}:helmValues", "chart_versions": f"{NAMESPACE}:chartVersions"}
# A problem's stack path head → the PlatformArgs property it is reported at.
PROPERTY_PATHS = {"aws:region": "region", "aws:profile": "profile",
                  **{f"{NAMESPACE}:{k}": k for k in ("network", "cluster", "nodePools", "deviceClasses",
                                                    "claims", "helmValues", "chartVersions")}}


def plan_args(args: PlatformArgs) -> Plan:
    """Parse and plan PlatformArgs, or raise InputPropertiesError naming every problem."""
    return plan_config("Platform", args)


def plan_config(component: str, args: Any) -> Plan:
    """Parse and plan the stack-configuration sections a component takes (PlatformArgs' keys), or
    raise InputPropertiesError naming every problem."""
    if not isinstance(args, dict):
        reject(component, [("args", f"given a {type(args).__name__}; accepted: PlatformArgs (a mapping)")])
    unknown = sorted(set(args) - set(STACK_KEYS))
    outputs = sorted(k for k, v in args.items() if isinstance(v, pulumi.Output))
    if unknown or outputs:
        reject(component, [*((k, f"unknown argument; accepted: {', '.join(sorted(STACK_KEYS))}") for k in unknown),
                           *((k, "given an Output; accepted: a plain value, known when the program runs "
                                 "(the plan decides which resources exist)") for k in outputs)])
    config = {STACK_KEYS[k]: v for k, v in args.items()}
    try:
        spec = parse(config, source=f"{component}Args")
    except ConfigError as exc:
        reject(component, config_problems(exc, PROPERTY_PATHS))
    plan = planner.build(spec)
    check_plan(component, plan)
    return plan


# The Pulumi program's platform name. Logical names do not follow the cluster's name, so renaming
# the cluster replaces only what must follow the EKS cluster's own (immutable) name.
PROGRAM_NAME = "platform"


class Platform(pulumi.ComponentResource):
    """Everything `pulumi up` builds for a stack. Its children are named after `name`."""

    pulumi_type = PLATFORM_TYPE  # the type token; Pulumi's component analyzer reads it from the class

    network: Network
    cluster: Cluster
    node_pools: NodePools
    device_software: DeviceSoftware
    claims: ClaimTemplates

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        self._build(name, plan_args(args), opts)

    @classmethod
    def from_plan(cls, name: str, plan: Plan, opts: pulumi.ResourceOptions | None = None) -> "Platform":
        """A platform from a Plan the caller built (`eks_devices.build(eks_devices.parse(config))`)."""
        check_plan("Platform", plan)
        platform = cls.__new__(cls)
        platform._build(name, plan, opts)
        return platform

    def _build(self, name: str, plan: Plan, opts: pulumi.ResourceOptions | None) -> None:
        if plan.spec.cluster.existing:
            reject("Platform", [("cluster.existing", "given true; accepted: false: Platform creates the cluster; "
                                 "add pools, device software and claims to an existing one with "
                                 "eks_devices.ClusterDevices")])
        if problems := endpoint_problems(plan.spec.cluster.endpoint):
            reject("Platform", problems)
        # under a team's own mocks, every answer the platform reads is asked for before anything is registered
        answers.check_mocks("Platform", [*network_reads(plan.spec.network), *cluster_reads(plan)])
        super().__init__(PLATFORM_TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        spec = plan.spec
        self.plan = plan
        self.network = Network(name, NetworkArgs(cluster_name=spec.cluster.name, config=spec.network,
                                                 tags=spec.cluster.tags, required_zones=spec.pinned_zones,
                                                 protect=spec.cluster.protect), opts=child)
        self.cluster = cluster = Cluster(name, ClusterArgs(plan=plan, network=self.network), opts=child)
        self.node_pools = NodePools(name, NodePoolsArgs(
            plan=plan, cluster_name=cluster.name, k8s_provider=cluster.k8s_provider,
            node_role_name=cluster.node_role_name, node_role_arn=cluster.node_role_arn,
            private_subnet_ids=self.network.private_subnet_ids,
            private_subnets_by_zone=self.network.private_subnets_by_zone,
            public_subnets_by_zone=self.network.public_subnets_by_zone,
            efa_security_group_id=self.network.efa_security_group_id,
            cluster_security_group_id=cluster.cluster_security_group_id,
            discovery_tag=spec.cluster.name, tagged_security_groups=True,
            depends_on=cluster.node_pool_prerequisites, private_egress=self.network.private_egress,
            public_egress=self.network.public_egress), opts=child)
        # each piece waits only for what it needs (the provider waits for the cluster): DaemonSet-only
        # releases for nothing more, a release running a Deployment for the system nodes
        self.device_software = software = DeviceSoftware(name, DeviceSoftwareArgs(
            plan=plan, k8s_provider=cluster.k8s_provider, workload_nodes=cluster.workload_nodes), opts=child)
        self.claims = ClaimTemplates(name, ClaimTemplatesArgs(
            plan=plan, k8s_provider=cluster.k8s_provider, namespaces=software.namespaces,
            device_classes=software.device_classes, releases=software.releases), opts=child)
        self.register_outputs({"clusterName": cluster.name, "vpcId": self.network.vpc_id})
