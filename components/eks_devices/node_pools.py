"""The NodePools component: every node pool of a plan, in the plan's mode.

- Auto Mode: one `NodeClass` per distinct node configuration and one `NodePool` per pool.
- Karpenter: one `EC2NodeClass` and one `NodePool` per pool.
- Managed node groups: per pool an `aws.ec2.LaunchTemplate`, an `aws.eks.NodeGroup` and, for EFA
  pools, a cluster `aws.ec2.PlacementGroup`.

Objects come from `node_manifests` / `launch_templates` (pure); this module only wires them to
Pulumi. A pool's device managers are part of its physical name, and changing them replaces its
nodes (`replace_on_changes` on the manager labels); pools on reserved capacity are deleted before
their replacement is created, so the reservation is free for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
from pulumi_kubernetes.apiextensions import CustomResource

from eks_devices import identity
from eks_devices.core.config.stack import FABRIC
from eks_devices.core.manifests import launch_templates
from eks_devices.core.manifests import nodes as manifests
from eks_devices.core.model import Plan, PoolPlan
from eks_devices.core.names import NODE_POOLS_TYPE
from eks_devices.core.vocabulary import reserves
from eks_devices.inputs import Problem, check_plan, name_problems, provider_problems


@dataclass(frozen=True)
class NodePoolsArgs:
    """What the node pools take: the `plan` (its pools, mode and cluster settings) and, from the
    network and the cluster — the toolkit's own or one the team already runs — the cluster name, its
    Kubernetes provider (Auto Mode and Karpenter pools are custom resources), the node role, the
    private subnets (all and by zone), the cluster security group, the EFA security group (needed
    by EFA pools), the discovery tag value the subnets and security groups carry, what the pools must
    wait for (CRDs, cluster readiness), and public subnets by zone for `subnets: public` pools."""

    plan: Plan
    cluster_name: pulumi.Input[str]
    k8s_provider: pulumi.ProviderResource | None  # a pulumi_kubernetes.Provider for the cluster
    node_role_name: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    private_subnet_ids: pulumi.Input[Sequence[str]]
    private_subnets_by_zone: pulumi.Input[dict[str, str]]  # zone → subnet id
    cluster_security_group_id: pulumi.Input[str]
    discovery_tag: str  # value of the karpenter.sh/discovery tag on the private subnets and the SGs
    efa_security_group_id: pulumi.Input[str] | None = None  # required when a pool runs EFA
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)  # CRDs / cluster readiness
    public_subnets_by_zone: pulumi.Input[dict[str, str]] | None = None  # only for `subnets: public` pools
    # the security groups carry their role (names.SECURITY_GROUP_TAG: the cluster's or EFA's) with the discovery
    # tag (the toolkit's Cluster and Network tag theirs): NodeClasses select them by tag instead of by id
    tagged_security_groups: bool = False
    # routes that give the subnets their way out (Network.private_egress / public_egress): managed node
    # groups wait for them, since their nodes pull images and join through them
    private_egress: Sequence[pulumi.Resource] = ()
    public_egress: Sequence[pulumi.Resource] = ()


def input_problems(args: NodePoolsArgs) -> list[Problem]:
    """Inputs that cannot serve the plan, found before any resource is registered."""
    plan = args.plan
    found: list[Problem] = []
    for pool in plan.pools.values():
        if pool.config.subnets == "public" and args.public_subnets_by_zone is None:
            found.append((f"nodePools.{pool.name}.subnets",
                          "public subnets were asked for, but publicSubnetsByZone is not given"))
        if manifests.uses_efa(pool) and args.efa_security_group_id is None:
            found.append((f"nodePools.{pool.name}.{FABRIC}", "an EFA pool needs the EFA security group, "
                                                             "but efaSecurityGroupId is not given"))
    if plan.mode != "managed-node-groups" and plan.pools and args.k8s_provider is None:
        found.append(("k8sProvider", f"{plan.mode} pools are Kubernetes objects: give the cluster's provider"))
    found.extend(provider_problems(args.k8s_provider))
    if plan.mode == "managed-node-groups":
        found.extend(zone_problems(args))
    return found


def zone_problems(args: NodePoolsArgs) -> list[Problem]:
    """A node group pinned to a zone (`availabilityZone`) that has no subnet among the subnets by zone,
    when those are given plainly (an Output's zones are known only once it resolves)."""
    found: list[Problem] = []
    for pool in args.plan.pools.values():
        public = pool.config.subnets == "public"
        by_zone = args.public_subnets_by_zone if public else args.private_subnets_by_zone
        zone = pool.config.availability_zone
        if zone and isinstance(by_zone, Mapping) and zone not in by_zone:
            given = "publicSubnetsByZone" if public else "privateSubnetsByZone"
            found.append((f"nodePools.{pool.name}.availabilityZone",
                          f"given {zone!r}; accepted: a zone of the {given} given "
                          f"({', '.join(sorted(by_zone)) or 'none'}), or add that zone's subnet to them"))
    return found


class NodePools(pulumi.ComponentResource):
    """Node pools carrying exactly the labels, taints, capacity and network layout of the plan."""

    pulumi_type = NODE_POOLS_TYPE  # the type token; Pulumi's component analyzer reads it from the class

    node_classes: dict[str, CustomResource]  # NodeClass / EC2NodeClass by object name
    node_pools: dict[str, CustomResource]  # NodePool by pool name
    launch_templates: dict[str, aws.ec2.LaunchTemplate]
    placement_groups: dict[str, aws.ec2.PlacementGroup]
    node_groups: dict[str, aws.eks.NodeGroup]
    physical_names: dict[str, str]  # pool → NodePool or node group name

    def __init__(self, name: str, args: NodePoolsArgs, opts: pulumi.ResourceOptions | None = None):
        plan = args.plan
        check_plan("NodePools", plan, [*name_problems(name), *(input_problems(args) if isinstance(plan, Plan) else ())])
        super().__init__(NODE_POOLS_TYPE, name, None, opts)
        self._name, self._plan, self._inputs = name, plan, args
        self._tags = dict(plan.spec.cluster.tags)
        self.node_classes, self.node_pools = {}, {}
        self.launch_templates, self.placement_groups, self.node_groups = {}, {}, {}
        self.physical_names = {}
        if plan.mode == "managed-node-groups":
            for pool in plan.pools.values():
                self._node_group(pool)
        else:
            for pool in plan.pools.values():
                if manifests.uses_placement_group(plan.mode, pool):
                    self._placement_group(pool)
            facts = self._facts()
            for pool in plan.pools.values():
                self._kubernetes_pool(pool, facts)
        self.register_outputs({"nodePools": dict(self.physical_names)})

    # --- Auto Mode and Karpenter ----------------------------------------------------------------

    def _placement_group(self, pool: PoolPlan) -> aws.ec2.PlacementGroup:
        """A cluster placement group for an EFA pool. Its name stays the one Pulumi generated: a
        group's name cannot change, and a new one would replace the group under running instances
        (render writes it as known after deploy)."""
        group = aws.ec2.PlacementGroup(f"{self._name}-{pool.name}", strategy="cluster",
                                       tags=manifests.pool_tags(self._tags, pool),
                                       opts=pulumi.ResourceOptions(parent=self, aliases=self._was(pool)))
        self.placement_groups[pool.name] = group
        return group

    def _was(self, pool: PoolPlan, suffix: str = "") -> list[pulumi.Input[str | pulumi.Alias]] | None:
        """An alias from the name the pool's resource had before it was renamed (`renamedFrom`)."""
        old = pool.config.renamed_from
        return identity.aliases(old and f"{self._name}-{old}{suffix}")

    def _facts(self) -> pulumi.Output[manifests.ClusterFacts]:
        i = self._inputs
        public = i.public_subnets_by_zone if i.public_subnets_by_zone is not None else {}
        groups = {name: group.id for name, group in self.placement_groups.items()}  # a group's id is its name
        return pulumi.Output.all(i.cluster_name, i.node_role_name, i.cluster_security_group_id,
                                 i.efa_security_group_id, public, groups).apply(
            lambda v: manifests.ClusterFacts(
                cluster_name=v[0], node_role_name=v[1], discovery_tag=i.discovery_tag,
                cluster_security_group_id=v[2], efa_security_group_id=v[3],
                public_subnet_ids=tuple(v[4][z] for z in sorted(v[4])),
                placement_groups=tuple(sorted(v[5].items())), tags=tuple(sorted(self._tags.items())),
                tagged_security_groups=i.tagged_security_groups))

    def _k8s_options(self, after: list[pulumi.Resource] | None = None, replace_on_changes: list[str] | None = None,
                     delete_before_replace: bool = False,
                     aliases: list[pulumi.Input[str | pulumi.Alias]] | None = None) -> pulumi.ResourceOptions:
        """A child on the cluster's provider, after the CRDs / cluster readiness (and `after`)."""
        return pulumi.ResourceOptions(
            parent=self, provider=self._inputs.k8s_provider,
            depends_on=[*self._inputs.depends_on, *(after or [])],
            replace_on_changes=replace_on_changes, delete_before_replace=delete_before_replace, aliases=aliases)

    def _kubernetes_pool(self, pool: PoolPlan, facts: pulumi.Output[manifests.ClusterFacts]) -> None:
        mode = self._plan.mode
        class_name = manifests.node_class_name(mode, pool)
        node_class = self.node_classes.get(class_name)
        if node_class is None:
            api_version, kind = manifests.NODE_CLASS_KINDS[mode]
            logical = f"{self._name}-{class_name}" if mode == "auto-mode" else f"{self._name}-{pool.name}-class"
            node_class = CustomResource(
                logical, api_version=api_version, kind=kind,
                metadata=manifests.node_class_metadata(mode, pool),
                spec=facts.apply(lambda f, p=pool: manifests.node_class_spec(mode, p, f)),
                opts=self._k8s_options(after=[g for n, g in self.placement_groups.items() if n == pool.name],
                                       aliases=self._was(pool, "-class") if mode != "auto-mode" else None))
            self.node_classes[class_name] = node_class
        obj = manifests.node_pool(mode, pool)
        self.node_pools[pool.name] = CustomResource(
            f"{self._name}-{pool.name}", api_version=obj["apiVersion"], kind=obj["kind"],
            metadata=obj["metadata"], spec=obj["spec"],
            opts=self._k8s_options(
                after=[node_class],
                replace_on_changes=manifests.replacement_paths(pool, "spec.template.metadata.labels"),
                delete_before_replace=reserves(pool.capacity), aliases=self._was(pool)))
        self.physical_names[pool.name] = obj["metadata"]["name"]

    # --- managed node groups --------------------------------------------------------------------

    def _node_group(self, pool: PoolPlan) -> None:
        i = self._inputs
        child = pulumi.ResourceOptions(parent=self)
        placement_group_name = None
        if manifests.uses_placement_group(self._plan.mode, pool):
            placement_group_name = self._placement_group(pool).id
        template = aws.ec2.LaunchTemplate(
            f"{self._name}-{pool.name}", opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(aliases=self._was(pool))),
            **launch_templates.launch_template_args(
                pool, efa_security_group_id=i.efa_security_group_id,
                cluster_security_group_id=i.cluster_security_group_id,
                placement_group_name=placement_group_name, cluster_tags=self._tags))
        self.launch_templates[pool.name] = template
        if pool.config.subnets == "public":
            by_zone = pulumi.Output.from_input(i.public_subnets_by_zone)
            subnet_ids = by_zone.apply(lambda m: [m[z] for z in sorted(m)])
            egress = i.public_egress
        else:
            by_zone = pulumi.Output.from_input(i.private_subnets_by_zone)
            subnet_ids = pulumi.Output.from_input(i.private_subnet_ids)
            egress = i.private_egress
        subnets = pulumi.Output.all(subnet_ids, by_zone).apply(
            lambda v, p=pool: launch_templates.node_group_subnets(p, list(v[0]), dict(v[1])))
        args = launch_templates.node_group_args(pool, self._tags)
        self.node_groups[pool.name] = aws.eks.NodeGroup(
            f"{self._name}-{pool.name}", cluster_name=i.cluster_name, node_role_arn=i.node_role_arn,
            subnet_ids=subnets, version=self._plan.spec.cluster.version,
            launch_template={"id": template.id, "version": template.latest_version.apply(str)},
            **args,
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[*i.depends_on, *egress],
                replace_on_changes=manifests.replacement_paths(pool, "labels"),
                delete_before_replace=reserves(pool.capacity), aliases=self._was(pool)))
        self.physical_names[pool.name] = args["node_group_name"]
