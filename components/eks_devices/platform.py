"""One stack's platform: the network, the cluster on it, then the node pools, the device software
and the declared claims — every piece read from the plan, none of them re-deciding it.

`Platform(name, PlatformArgs(...))` takes the stack configuration's shape and plans it itself;
`Platform.from_plan(name, plan)` takes a Plan already built. Either way a configuration problem or
an error finding raises `pulumi.InputPropertiesError` (one entry per property path, naming every
problem there) before any resource is registered.
"""

# No `from __future__ import annotations` here: Pulumi's component analyzer reads these annotations
# at run time to infer the multi-language schema of PlatformArgs.

from collections.abc import Iterable
from enum import Enum
from typing import Any, get_args, get_origin, get_type_hints, is_typeddict

import pulumi

from eks_devices import answers
from eks_devices.claims import ClaimTemplates, ClaimTemplatesArgs
from eks_devices.cluster import Cluster, ClusterArgs, cluster_reads, endpoint_problems
from eks_devices.config_types import PlatformArgs
from eks_devices.core import planner
from eks_devices.core.config.errors import ConfigError, article, did_you_mean
from eks_devices.core.config.keys import camel_case, count_key, property_name, snake_case, stack_key
from eks_devices.core.config.stack import STACK_KEYS as SPEC_KEYS
from eks_devices.core.config.stack import parse
from eks_devices.core.model import Plan
from eks_devices.core.names import PLATFORM_TYPE
from eks_devices.device_software import DeviceSoftware, DeviceSoftwareArgs
from eks_devices.inputs import Problem, check_name, check_plan, config_problems, reject
from eks_devices.network import Network, NetworkArgs, network_reads
from eks_devices.node_pools import NodePools, NodePoolsArgs

# PlatformArgs key (`node_pools`) → the stack configuration key it stands for (`eks-devices:nodePools`).
STACK_KEYS = {snake_case(property_name(key)): key for key in SPEC_KEYS}
# A problem's stack path head (`eks-devices:nodePools`) → the PlatformArgs property it is reported at.
PROPERTY_PATHS = {key: property_name(key) for key in SPEC_KEYS}


# The network's zones: a count or a list under one key in a stack file, two keys in PlatformArgs.
NETWORK = stack_key("network")
ZONE_LIST = camel_case("availability_zones")
ZONE_COUNT = camel_case(count_key("availability_zones"))


def stack_keys(value: Any, hint: Any) -> Any:
    """PlatformArgs content as the stack configuration spells it: keys of typed sections camelCase
    (`instance_types` → `instanceTypes`; a camelCase key stays as it is), free-form maps and the names
    of pools, claims and labels kept, enum members as their values."""
    if isinstance(value, Enum):
        return value.value
    if is_typeddict(hint) and isinstance(value, dict):
        hints = get_type_hints(hint)
        return {camel_case(k): stack_keys(v, hints.get(snake_case(k), Any)) for k, v in value.items()}
    origin, args = get_origin(hint), get_args(hint)
    if origin is list and isinstance(value, list | tuple):
        return [stack_keys(v, args[0]) for v in value]
    if origin is dict and isinstance(value, dict):
        return {k: stack_keys(v, args[1]) for k, v in value.items()}
    return value


def split_zones(config: dict[str, Any]) -> tuple[list[Problem], bool]:
    """`network.availabilityZoneCount` read as the stack file's `availabilityZones: N` (in place);
    the problem when both keys are given, and whether the count was."""
    network = config.get(NETWORK)
    if not (isinstance(network, dict) and ZONE_COUNT in network):
        return [], False
    network = config[NETWORK] = dict(network)
    problems: list[Problem] = []
    if ZONE_LIST in network:
        problems.append((f"network.{ZONE_COUNT}", f"given both {ZONE_COUNT} and {ZONE_LIST}; accepted: one of them"))
    network[ZONE_LIST] = network.pop(ZONE_COUNT)
    return problems, True


def zone_path(path: str, count_given: bool) -> str:
    """A problem's path at the key the zones were given under."""
    zones = f"network.{ZONE_LIST}"
    if count_given and (path == zones or path.startswith(f"{zones}.")):
        return f"network.{ZONE_COUNT}" + path[len(zones):]
    return path


def _outputs(value: Any, path: str) -> list[str]:
    """The property paths of the Outputs in an argument's value (`cluster.name`): the plan needs every
    value known when the program runs."""
    if isinstance(value, pulumi.Output):
        return [path]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _outputs(item, f"{path}.{key}")]
    if isinstance(value, list | tuple):
        return [found for i, item in enumerate(value) for found in _outputs(item, f"{path}.{i}")]
    return []


def argument_problems(args: dict[str, Any]) -> tuple[list[Problem], set[str]]:
    """Arguments PlatformArgs does not have (with the nearest it has: `nodePools` → `node_pools`) and
    Outputs anywhere in an argument, which the plan cannot wait for; with the arguments holding Outputs,
    which are not read further."""
    accepted = sorted(STACK_KEYS)
    problems: list[Problem] = []
    for key in sorted((k for k in args if k not in STACK_KEYS), key=str):
        hint = did_you_mean(snake_case(key) if isinstance(key, str) else "", accepted)
        problems.append((str(key), f"unknown argument; accepted: {hint}the arguments PlatformArgs takes: "
                                   f"{', '.join(accepted)}"))
    holding: set[str] = set()
    for key, value in args.items():
        if key in STACK_KEYS and (paths := _outputs(value, property_name(STACK_KEYS[key]))):
            holding.add(key)
            problems.extend((path, "given an Output; accepted: a plain value, known when the program runs (the "
                                   "plan decides which resources exist)") for path in paths)
    return problems, holding


def plan_args(args: PlatformArgs) -> Plan:
    """Parse and plan PlatformArgs, or raise InputPropertiesError naming every problem."""
    return plan_config("Platform", args)


REGION = STACK_KEYS["region"]  # aws:region, the AWS provider's own setting


def provider_region(config: dict[str, Any]) -> list[Problem]:
    """Agree with the region the AWS provider deploys to, its `aws:region` in the stack's Pulumi config:
    a region left out is taken from it, one given that differs is refused, since the toolkit plans the
    zones, image registries and ARNs for its region and the resources would go to the provider's."""
    namespace, _, key = REGION.partition(":")
    deployed = pulumi.Config(namespace).get(key)
    given = config.get(REGION)
    if deployed is None or given == deployed:
        return []
    if given is None:
        config[REGION] = deployed
        return []
    return [("region", f"given {given!r}; accepted: {deployed!r}, the AWS provider's region ({REGION} in the "
                       "stack's config), where the resources go: zones, registries and ARNs are planned for this one")]


def plan_config(component: str, args: Any, extra: Iterable[Problem] = ()) -> Plan:
    """Parse and plan the stack-configuration sections a component takes (PlatformArgs' keys), or
    raise InputPropertiesError naming every problem (with the caller's `extra` ones, such as its name's)."""
    extra = list(extra)
    if not isinstance(args, dict):
        given = "None" if args is None else article(type(args).__name__)
        reject(component, [*extra, ("args", f"given {given}; accepted: PlatformArgs (a mapping)")])
    problems, holding = argument_problems(args)
    hints = get_type_hints(PlatformArgs)
    # the arguments that can be read are checked too, so that every problem is reported at once
    config = {STACK_KEYS[k]: stack_keys(v, hints.get(k, Any)) for k, v in args.items()
              if k in STACK_KEYS and k not in holding}
    zone_problems, count_given = split_zones(config)
    problems.extend(zone_problems)
    if "region" not in holding:
        problems.extend(provider_region(config))
    try:
        spec = parse(config, source=f"{component}Args")
    except ConfigError as exc:
        refused = {property_name(STACK_KEYS[k]) for k in holding}
        problems.extend((zone_path(path, count_given), reason) for path, reason in config_problems(exc, PROPERTY_PATHS)
                        if path.partition(".")[0] not in refused)  # an Output is not also "missing"
    if problems:
        reject(component, [*extra, *problems])
    plan = planner.build(spec)
    check_plan(component, plan, extra)
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
        check_name("Platform", name)
        self._build(name, plan_args(args), opts)

    @classmethod
    def from_plan(cls, name: str, plan: Plan, opts: pulumi.ResourceOptions | None = None) -> "Platform":
        """A platform from a Plan the caller built (`eks_devices.build(eks_devices.parse(config))`)."""
        check_name("Platform", name)
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
        answers.check_region("Platform", plan.spec.region)
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
