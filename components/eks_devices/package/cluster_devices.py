"""The hosted `ClusterDevices` (`eks-devices:index:ClusterDevices`): node pools, device software and
claims added to an EKS cluster a team already runs, for programs in any Pulumi language.

Its arguments are the Python `ClusterDevicesArgs` as the analyzer reads them: the configuration
sections (what the cluster runs, what to add; plain, since the device plan decides which resources
exist) and the cluster's own resources (its Kubernetes provider, node role, subnets, security groups;
these may be Outputs). Problems come back one property error each before anything is registered.
"""

# No `from __future__ import annotations`: the analyzer reads the annotations at run time.

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from eks_devices import cluster_devices
from eks_devices.config_types import ClusterConfig, DeviceClassConfig, NodePoolConfig
from eks_devices.core.config.keys import camel_case, snake_case
from eks_devices.core.model import Plan
from eks_devices.inputs import Problem, reject
from eks_devices.package.arguments import integers, output_paths
from eks_devices.package.component import device_plan
from eks_devices.package.outputs import DevicePlan

COMPONENT = "ClusterDevices"
# the configuration sections: plain values, planned at construct time
SECTIONS = ("cluster", "node_pools", "claims", "device_classes", "helm_values", "chart_versions", "region",
            "discovery_tag")


class ClusterDevicesArgs(TypedDict):
    """What the cluster runs and what to add to it, and the cluster's own resources the pools use."""

    cluster: ClusterConfig
    """What the cluster runs: name, version, mode, and in karpenter mode its own release's `karpenter`."""
    k8s_provider: k8s.Provider
    """A Kubernetes provider for the cluster."""
    node_role_name: pulumi.Input[str]
    """The IAM role the pools' nodes run as (its name)."""
    node_role_arn: pulumi.Input[str]
    """The same role's ARN."""
    private_subnet_ids: pulumi.Input[list[str]]
    """The private subnets the pools' nodes launch in."""
    private_subnets_by_zone: pulumi.Input[dict[str, str]]
    """The private subnet of each availability zone (pools pinned to a zone use it)."""
    cluster_security_group_id: pulumi.Input[str]
    """The cluster security group the nodes join."""
    node_pools: NotRequired[dict[str, NodePoolConfig]]
    """Node pools by name."""
    claims: NotRequired[dict[str, dict[str, Any]]]
    """Workload ResourceClaims / ResourceClaimTemplates by name, with the pools they must fit."""
    device_classes: NotRequired[dict[str, DeviceClassConfig]]
    """Extra DeviceClasses by name."""
    helm_values: NotRequired[dict[str, dict[str, Any]]]
    """Per-chart value overrides (free-form), merged last and re-checked by the rules."""
    chart_versions: NotRequired[dict[str, str]]
    """Per-chart version overrides."""
    region: NotRequired[str]
    """The cluster's AWS region."""
    efa_security_group_id: NotRequired[pulumi.Input[str]]
    """Required by EFA pools: a security group allowing all traffic to and from itself."""
    public_subnets_by_zone: NotRequired[pulumi.Input[dict[str, str]]]
    """The public subnet of each availability zone, for pools that launch in public subnets."""
    discovery_tag: NotRequired[str]
    """The `karpenter.sh/discovery` tag value of the subnets and security groups (the cluster's name)."""


def component_args(inputs: Mapping[str, Any]) -> cluster_devices.ClusterDevicesArgs:
    """The Python component's arguments from the wire's (camelCase keys; snake_case from Python), or
    `pulumi.InputPropertiesError` listing every problem: unknown or missing arguments, and Outputs where a
    plain section is needed."""
    inputs = {camel_case(k): v for k, v in inputs.items()}
    hosted = ClusterDevicesArgs  # its keys are the schema's: the Python args' `depends_on` is an option there
    accepted = sorted(camel_case(k) for k in hosted.__required_keys__ | hosted.__optional_keys__)
    required = sorted(camel_case(k) for k in hosted.__required_keys__)
    problems: list[Problem] = [(k, f"unknown argument; accepted: {', '.join(accepted)}")
                               for k in sorted(set(inputs) - set(accepted))]
    problems += [(k, "required and not given") for k in required if inputs.get(k) is None]
    problems += [(path, "given an Output (unknown until deployed); accepted: a plain value — the device plan "
                        "decides at construct time which resources exist")
                 for k in SECTIONS for path in output_paths({camel_case(k): inputs.get(camel_case(k))})
                 if inputs.get(camel_case(k)) is not None]
    if problems:
        reject(COMPONENT, problems)
    given = {snake_case(k): integers(v) if snake_case(k) in SECTIONS else v
             for k, v in inputs.items() if v is not None}
    return cluster_devices.ClusterDevicesArgs(**given)


class ClusterDevices(cluster_devices.ClusterDevices):
    """Node pools, device software and claims on an EKS cluster the team already runs: each pool labelled
    with its device manager per family, the DRA drivers or device plugins scoped to exactly those pools,
    checked against what the cluster states it runs (Kubernetes version, mode, its own Karpenter release
    and DRA settings). Invalid arguments and error findings are refused before anything is created."""

    node_pool_names: pulumi.Output[dict[str, str]]
    """Each pool's NodePool or node group name in the cluster."""
    device_plan: pulumi.Output[DevicePlan]
    """Per pool and device family the manager and why, the releases serving them, and the warnings."""

    def __init__(self, name: str, args: ClusterDevicesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, component_args(args), opts)

    def _build(self, name: str, plan: Plan, args: cluster_devices.ClusterDevicesArgs,
               opts: pulumi.ResourceOptions | None) -> None:
        super()._build(name, plan, args, opts)
        self.node_pool_names = self.node_pools.physical_names  # type: ignore[assignment]  # plain, known now
        self.device_plan = device_plan(self.plan)  # type: ignore[assignment]
