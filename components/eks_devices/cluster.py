"""The EKS cluster, one code path per mode, built on `pulumi_eks.Cluster`.

Secure defaults in every mode: private endpoint on and the public one only for listed CIDRs,
control-plane logs per `cluster.logging`, Kubernetes secrets encrypted with a KMS key (created with
rotation unless `cluster.kmsKeyArn`), access entries only (authentication mode API, no aws-auth
ConfigMap), and IMDSv2 with a hop limit of 1 on the nodes the toolkit launches itself.

- `auto-mode`: compute, block storage and load balancing on together (pulumi-eks sets all three
  from `autoMode.enabled`, pulumi/pulumi-eks v4.3.0), self-managed add-ons off, the built-in `system` pool (and
  `general-purpose` if asked); custom NodeClasses get their own node role with an EC2 access entry.
- `karpenter`: a small system node group, then Karpenter (`eks_devices.karpenter`).
- `managed-node-groups`: a small system node group; the node pools add their own groups.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from eks_devices import answers, iam
from eks_devices.core.config import stack as specs
from eks_devices.core.knowledge.node_labels import architecture_of
from eks_devices.core.model import Plan
from eks_devices.core.names import (
    AWS_NODE_IDENTITY_ANNOTATION,
    CLUSTER_SECURITY_GROUP,
    CLUSTER_TYPE,
    DISCOVERY_TAG,
    KARPENTER_TYPE,
    SECURITY_GROUP_TAG,
    SYSTEM_LABEL,
)
from eks_devices.inputs import Problem, check_plan, name_problems
from eks_devices.karpenter import POD_IDENTITY_AGENT, Karpenter, KarpenterArgs
from eks_devices.network import Network

SYSTEM_LABELS = {SYSTEM_LABEL: "true"}
# EKS cannot change the key of a cluster whose secrets are encrypted (EKS User Guide, "Encrypt
# Kubernetes secrets with KMS on existing clusters": once enabled it cannot be disabled or changed).
KMS_KEY_FIXED = ("cluster.kmsKeyArn: a cluster created with the key eks-devices generated keeps it: EKS cannot "
                 "re-key a cluster, so on such a stack `pulumi up` stops at the protected cluster and key "
                 "instead of replacing the cluster; set kmsKeyArn only when the cluster is created")


def system_ami_type(instance_type: str) -> str:
    """The EKS AL2023 AMI type for the system node group's instance type (Arm for Graviton)."""
    return "AL2023_ARM_64_STANDARD" if architecture_of(instance_type) == "arm64" else "AL2023_x86_64_STANDARD"


def kubeconfig_with_profile(kubeconfig: str | dict[str, Any], profile: str) -> str:
    """A kubeconfig whose `aws eks get-token` exec runs with AWS_PROFILE set to `profile` (what
    pulumi-eks's getKubeconfig(profileName) generates), as JSON text."""
    config = json.loads(kubeconfig) if isinstance(kubeconfig, str) else copy.deepcopy(kubeconfig)
    for user in config.get("users") or []:
        command = (user.get("user") or {}).get("exec")
        if isinstance(command, dict):
            env = [e for e in command.get("env") or [] if e.get("name") != "AWS_PROFILE"]
            command["env"] = [*env, {"name": "AWS_PROFILE", "value": profile}]
    return json.dumps(config)


def auto_mode_node_pools(cluster: specs.Cluster) -> list[str]:
    """Auto Mode's built-in pools: `system` always, `general-purpose` only when asked for."""
    return ["system", "general-purpose"] if cluster.auto_mode.general_purpose_pool else ["system"]


def endpoint_problems(endpoint: specs.Endpoint) -> list[Problem]:
    """An API server nothing could reach is refused before anything is created."""
    if not endpoint.private_access and not endpoint.public_access_cidrs:
        return [("cluster.endpoint", "the private endpoint is off and no publicAccessCidrs are listed, so nothing "
                                     "could reach the API server; keep privateAccess: true or list CIDRs")]
    return []


def endpoint_args(endpoint: specs.Endpoint) -> dict[str, Any]:
    """API endpoint access: the public endpoint exists only for the listed CIDRs."""
    cidrs = list(endpoint.public_access_cidrs)
    return {"endpoint_private_access": endpoint.private_access, "endpoint_public_access": bool(cidrs),
            "public_access_cidrs": cidrs or None}


def cluster_reads(plan: Plan) -> list[tuple[answers.Read, dict[str, Any]]]:
    """What the cluster reads from the engine (answered by mocks in unit tests): pulumi-eks's outputs,
    the caller (its account for the generated KMS key's and Karpenter's policies, its identity for the
    deployer's admin entry) and the IAM principal behind it."""
    spec = plan.spec.cluster
    return [(answers.EKS_CLUSTER, {"name": spec.name, "version": spec.version}), (answers.CALLER_IDENTITY, {}),
            (answers.SESSION_CONTEXT, {"arn": f"arn:aws:iam::000000000000:user/{spec.name}"})]


def without_creator_bootstrap(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
    """pulumi-eks's EKS cluster, created without the creator's bootstrap admin access entry: EKS would
    give the principal that creates the cluster admin access outside the stack's state, for good
    (EKS API Reference, CreateCluster `accessConfig.bootstrapClusterCreatorAdminPermissions`). The
    toolkit declares that access instead (`Cluster._admins`). pulumi-eks sets the field itself with no
    input for it, so this transform on its child sets it; pulumi-eks also ignores later changes to it
    (pulumi/pulumi-eks v4.3.0 nodejs/eks/cluster/cluster.ts:733-752), so a cluster created with it on
    keeps it and is not replaced (the field is fixed at creation)."""
    if args.type_ != answers.EKS_CLUSTER_CHILD:
        return None
    access = {**(args.props.get("accessConfig") or {}), "bootstrapClusterCreatorAdminPermissions": False}
    return pulumi.ResourceTransformResult(props={**args.props, "accessConfig": access}, opts=args.opts)


def deployer_arn() -> str:
    """The IAM role or user running the program: the caller, or the role behind an assumed-role
    session (an access entry names the role, not the session: EKS API Reference, CreateAccessEntry)."""
    caller = answers.answered(answers.CALLER_IDENTITY, "arn", aws.get_caller_identity().arn)
    issuer = aws.iam.get_session_context(arn=caller).issuer_arn
    return str(answers.answered(answers.SESSION_CONTEXT, "issuerArn", issuer))


def entry_exists(cluster: str, principal: str) -> bool:
    """Whether EKS already has an access entry for `principal` on the cluster named `cluster`. The
    provider reports a cluster or entry that does not exist as a failed call, which is the answer."""
    try:
        found = aws.eks.get_access_entry(cluster_name=cluster, principal_arn=principal)
    except Exception:  # a failed read: no cluster yet, or no entry
        return False
    return bool(found.access_entry_arn)


def _eks_cluster_name(cluster: Any) -> pulumi.Output[str]:
    """The name of the `aws:eks/cluster:Cluster` pulumi-eks returns as `eksCluster` (a resource reference)."""
    if not isinstance(cluster, pulumi.CustomResource):
        answers.answered(answers.EKS_CLUSTER, "eksCluster", None)
    return cluster.name


@dataclass(frozen=True)
class ClusterArgs:
    """What the cluster takes: the `plan` (its mode, cluster settings and, in Karpenter mode, the
    controller's settings) and the `network` it stands on."""

    plan: Plan
    network: Network


class Cluster(pulumi.ComponentResource):
    """An EKS cluster in the stack's mode, with a Kubernetes provider for the components on top."""

    pulumi_type = CLUSTER_TYPE  # the type token; Pulumi's component analyzer reads it from the class

    name: pulumi.Output[str]
    eks: eks.Cluster
    k8s_provider: k8s.Provider
    node_role_name: pulumi.Output[str]
    node_role_arn: pulumi.Output[str]
    cluster_security_group_id: pulumi.Output[str]
    kms_key_arn: pulumi.Output[str]
    ready: list[pulumi.Resource]  # the cluster able to run workloads: its nodes (and Karpenter) up
    # what node pools wait for: Auto Mode the cluster and the custom NodeClass role's access, Karpenter
    # its CRDs and controller, managed node groups the node role (not the system nodes: they need nothing of them)
    node_pool_prerequisites: list[pulumi.Resource]
    # nodes a Deployment of the device software can run on, for releases that wait on one (none in Auto Mode)
    workload_nodes: list[pulumi.Resource]
    interruption_queue_name: pulumi.Output[str] | None = None
    controller_role_arn: pulumi.Output[str] | None = None
    karpenter: Karpenter | None = None

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None):
        plan, network = args.plan, args.network
        endpoint = endpoint_problems(plan.spec.cluster.endpoint) if isinstance(plan, Plan) else []
        check_plan("Cluster", plan, [*name_problems(name), *endpoint])
        answers.check_region("Cluster", plan.spec.region)
        answers.check_mocks("Cluster", cluster_reads(plan))
        super().__init__(CLUSTER_TYPE, name, None, opts)
        self._base = name
        self._plan = plan
        self._spec = plan.spec.cluster
        self._region = plan.spec.region
        self._network = network
        self._tags = dict(self._spec.tags)
        self._child = pulumi.ResourceOptions(parent=self)
        # the secrets key and the audit logs cannot be got back: protected unless `cluster.protect:
        # false`, and never deleted with the stack or on replacement (Pulumi drops them from the state)
        self._kept = pulumi.ResourceOptions(parent=self, protect=self._spec.protect, retain_on_delete=True)
        modes: dict[str, tuple[Callable[[], tuple[dict[str, Any], list[pulumi.Resource]]], Callable[[], None]]] = {
            "auto-mode": (self._auto_mode_args, self._auto_mode_nodes),
            "karpenter": (self._self_managed_args, self._karpenter_nodes),
            "managed-node-groups": (self._self_managed_args, self._managed_node_groups_nodes),
        }
        mode_args, mode_prerequisites = modes[plan.mode][0]()
        self.eks = self._cluster(mode_args, mode_prerequisites)
        self.name = self.eks.eks_cluster.apply(_eks_cluster_name)
        self.cluster_security_group_id = self.eks.cluster_security_group_id.apply(
            lambda sg: answers.answered(answers.EKS_CLUSTER, "clusterSecurityGroupId", sg))
        # the discovery tag and the toolkit's security-group tag, which NodeClasses select the group by
        aws.ec2.Tag(f"{name}-cluster-sg-discovery", resource_id=self.cluster_security_group_id, key=DISCOVERY_TAG,
                    value=self._spec.name, opts=self._child)
        aws.ec2.Tag(f"{name}-cluster-sg-role", resource_id=self.cluster_security_group_id, key=SECURITY_GROUP_TAG,
                    value=CLUSTER_SECURITY_GROUP, opts=self._child)
        # nothing talks to the API server before the deployer's access exists: a new cluster has no bootstrap admin
        self.k8s_provider = k8s.Provider(f"{name}-k8s", kubeconfig=self._kubeconfig(),
                                         opts=pulumi.ResourceOptions(parent=self, depends_on=self._admins()))
        modes[plan.mode][1]()
        outputs: dict[str, Any] = {"name": self.name, "nodeRoleArn": self.node_role_arn,
                                   "clusterSecurityGroupId": self.cluster_security_group_id}
        if self.karpenter is not None:
            outputs.update(interruptionQueueName=self.interruption_queue_name,
                           controllerRoleArn=self.controller_role_arn)
        self.register_outputs(outputs)

    # --- the cluster itself -------------------------------------------------------------------------

    def _cluster(self, mode_args: dict[str, Any], prerequisites: list[pulumi.Resource]) -> eks.Cluster:
        """pulumi-eks creates the control-plane role itself: AmazonEKSClusterPolicy, plus the Compute,
        BlockStorage, LoadBalancing and Networking policies and `sts:TagSession` in Auto Mode
        (EKS User Guide, Auto Mode IAM roles).

        Every mode says `skipDefaultNodeGroup` and `createInstanceRole: false` outright: pulumi-eks
        decides whether to make its default-node-group instance role (with an instance profile and an
        EC2_LINUX access entry) from the *given* `skipDefaultNodeGroup`, not from Auto Mode, so an
        Auto Mode cluster that leaves it unset gets a node role no node ever uses. Its CoreDNS add-on
        is off too: outside Auto Mode it would clash with the one the toolkit installs after the
        system nodes, and in Auto Mode (where pulumi-eks makes it by default, its issue #1726) EKS
        serves DNS on the nodes itself and the add-on is not for Auto Mode clusters."""
        spec = self._spec
        self.kms_key_arn, generated = self._encryption_key()
        prerequisites = [*prerequisites, self._log_group(generated)]
        profile = self._plan.spec.aws_profile  # the kubeconfig asks for tokens with the stack's own profile
        if profile:
            mode_args = {**mode_args, "provider_credential_opts": eks.KubeconfigOptionsArgs(profile_name=profile)}
        return eks.Cluster(
            f"{self._base}-eks", name=spec.name, version=spec.version, vpc_id=self._network.vpc_id,
            subnet_ids=self._network.private_subnet_ids, authentication_mode=eks.AuthenticationMode.API,
            bootstrap_self_managed_addons=False, skip_default_node_group=True, create_instance_role=False,
            coredns_addon_options=eks.CoreDnsAddonOptionsArgs(enabled=False),
            enabled_cluster_log_types=list(spec.logging),
            encryption_config_key_arn=self.kms_key_arn, tags=self._tags, **endpoint_args(spec.endpoint),
            deletion_protection=spec.protect, **mode_args,
            opts=pulumi.ResourceOptions(parent=self, depends_on=prerequisites, protect=spec.protect,
                                        transforms=[without_creator_bootstrap]))

    def _kubeconfig(self) -> pulumi.Output[str]:
        """The kubeconfig the toolkit's Kubernetes provider uses: with the stack's `aws:profile` it
        asks for tokens with that profile (pulumi-eks's `kubeconfigJson` leaves the profile out:
        v4.3.0 generates it without credential options), else the default credential chain."""
        profile = self._plan.spec.aws_profile
        kubeconfig = self.eks.kubeconfig_json.apply(
            lambda text: answers.answered(answers.EKS_CLUSTER, "kubeconfigJson", text))
        if profile:
            return kubeconfig.apply(lambda text: kubeconfig_with_profile(text, profile))
        return kubeconfig

    def _log_group(self, key_arn: pulumi.Output[str] | None) -> aws.cloudwatch.LogGroup:
        """The control-plane log group, made before the cluster so that it has a retention (EKS
        would otherwise create it with logs kept forever), encrypted with the generated key (a
        brought `kmsKeyArn` encrypts the secrets only: its policy is not the toolkit's to change)."""
        return aws.cloudwatch.LogGroup(
            f"{self._base}-control-plane-logs", name=self._log_group_name,
            retention_in_days=self._spec.log_retention_days, kms_key_id=key_arn, tags=self._tags,
            opts=self._kept)

    @property
    def _log_group_name(self) -> str:
        return f"/aws/eks/{self._spec.name}/cluster"

    def _encryption_key(self) -> tuple[pulumi.Output[str], pulumi.Output[str] | None]:
        """The secrets-encryption key's ARN, and that of the key the toolkit generated (None for a
        configured key): a new key with yearly rotation whose policy also lets CloudWatch Logs
        encrypt the control-plane log group."""
        if self._spec.kms_key_arn:
            pulumi.log.warn(KMS_KEY_FIXED, resource=self)
            return pulumi.Output.from_input(self._spec.kms_key_arn), None
        account = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self)).account_id
        policy = account.apply(lambda a: json.dumps(iam.secrets_key_policy(
            self._region, answers.answered(answers.CALLER_IDENTITY, "accountId", a), self._log_group_name)))
        key = aws.kms.Key(f"{self._base}-secrets", description=f"EKS secrets encryption for {self._spec.name}",
                          enable_key_rotation=True, deletion_window_in_days=30, policy=policy, tags=self._tags,
                          opts=self._kept)
        aws.kms.Alias(f"{self._base}-secrets-alias", name=f"alias/eks/{self._spec.name}", target_key_id=key.key_id,
                      opts=self._child)
        return key.arn, key.arn

    def _node_role(self, suffix: str, policies: tuple[str, ...], what: str) -> iam.ServiceRole:
        return iam.service_role(f"{self._base}-{suffix}", "ec2.amazonaws.com", policies, region=self._region,
                                description=f"{what} of {self._spec.name}", tags=self._tags, opts=self._child)

    def _expose_node_role(self, role: aws.iam.Role) -> None:
        self.node_role_name = role.name
        self.node_role_arn = role.arn

    # --- auto-mode ------------------------------------------------------------------------------------

    def _auto_mode_args(self) -> tuple[dict[str, Any], list[pulumi.Resource]]:
        builtin = self._node_role("auto-node", iam.AUTO_MODE_NODE_POLICIES, "Auto Mode built-in pool nodes")
        compute = eks.ClusterComputeConfigArgs(node_pools=auto_mode_node_pools(self._spec),
                                               node_role_arn=builtin.role.arn)
        auto = eks.AutoModeOptionsArgs(enabled=True, create_node_role=False, compute_config=compute)
        return {"auto_mode": auto}, builtin.ready

    def _auto_mode_nodes(self) -> None:
        """The role custom NodeClasses name; EKS creates access only for the built-in pools' role, so
        this one gets an EC2 access entry with AmazonEKSAutoNodePolicy (EKS User Guide, Auto Mode)."""
        role = self._node_role("nodeclass", iam.AUTO_MODE_NODE_POLICIES, "Auto Mode custom NodeClass nodes")
        entry = aws.eks.AccessEntry(f"{self._base}-nodeclass-access", cluster_name=self.name,
                                    principal_arn=role.role.arn, type="EC2", tags=self._tags, opts=self._child)
        association = aws.eks.AccessPolicyAssociation(
            f"{self._base}-nodeclass-auto-node-policy", cluster_name=self.name, principal_arn=role.role.arn,
            policy_arn=iam.access_policy_arn(iam.partition(self._region), iam.AUTO_NODE_ACCESS_POLICY),
            access_scope={"type": "cluster"}, opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]))
        self._expose_node_role(role.role)
        self.ready = [self.eks, *role.ready, entry, association]
        self.node_pool_prerequisites, self.workload_nodes = list(self.ready), []

    # --- karpenter and managed-node-groups --------------------------------------------------------------

    def _self_managed_args(self) -> tuple[dict[str, Any], list[pulumi.Resource]]:
        """No extra security groups: nodes use the EKS cluster security group (Auto Mode skips them itself)."""
        return {"skip_default_security_groups": True}, []

    def _vpc_cni_identity(self) -> tuple[aws.eks.Addon, list[pulumi.Resource]]:
        """The VPC CNI's own role, given to `kube-system/aws-node` through EKS Pod Identity (with the
        Pod Identity Agent add-on), so that the node role carries no CNI permissions. Nodes wait for
        it: Pod Identity reaches only pods created after the association. Stacks deployed with the
        CNI policy on the node role get `aws-node` restarted onto the new identity (`_restart_aws_node`)
        before `pulumi up` detaches the old policy. In karpenter mode the agent add-on was Karpenter's:
        an alias keeps it."""
        base, part = self._base, iam.partition(self._region)
        was: list[pulumi.Input[str | pulumi.Alias]] | None = None
        if self._plan.mode == "karpenter":
            # the add-on Karpenter made, under its component: named after this component, or (stacks
            # deployed before stable identities) after the cluster's name
            was = []
            for stem in dict.fromkeys((base, self._spec.name)):
                parent = self.urn.apply(lambda u, s=stem: f"{u.rsplit('::', 1)[0]}${KARPENTER_TYPE}::{s}-karpenter")
                was.append(pulumi.Alias(name=f"{stem}-karpenter-pod-identity-agent", parent=parent))
        agent = aws.eks.Addon(f"{base}-pod-identity-agent", cluster_name=self.name, addon_name=POD_IDENTITY_AGENT,
                              tags=self._tags, opts=pulumi.ResourceOptions(parent=self, aliases=was))
        namespace, account = iam.VPC_CNI_SERVICE_ACCOUNT
        role = aws.iam.Role(f"{base}-vpc-cni", assume_role_policy=json.dumps(
            iam.pod_identity_trust(self._spec.name, namespace, account)),
            description=f"VPC CNI (aws-node) of {self._spec.name} (EKS Pod Identity)", tags=self._tags,
            opts=self._child)
        policy = aws.iam.RolePolicyAttachment(f"{base}-vpc-cni-{iam.VPC_CNI_POLICY}", role=role.name,
                                              policy_arn=iam.managed_policy_arn(part, iam.VPC_CNI_POLICY),
                                              opts=self._child)
        association = aws.eks.PodIdentityAssociation(
            f"{base}-vpc-cni-identity", cluster_name=self.name, namespace=namespace, service_account=account,
            role_arn=role.arn, tags=self._tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[agent, role, policy]))
        return agent, [agent, role, policy, association]

    def _restart_aws_node(self, identity: list[pulumi.Resource]) -> None:
        """Roll `aws-node` once its Pod Identity association exists (a pod-template annotation naming
        it): pods created before it read the node role's credentials, which no longer carry the CNI
        policy. Deletes come last in `pulumi up`, so the node role keeps the policy until the roll."""
        namespace, account = iam.VPC_CNI_SERVICE_ACCOUNT
        k8s.apps.v1.DaemonSetPatch(
            f"{self._base}-aws-node-identity",
            metadata={"name": account, "namespace": namespace},
            spec={"template": {"metadata": {"annotations": {AWS_NODE_IDENTITY_ANNOTATION: "pod-identity"}}}},
            opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=[self.eks, *identity]))

    def _admins(self) -> list[pulumi.Resource]:
        """Cluster admins as EKS access entries with AmazonEKSClusterAdminPolicy (cluster scope), in the
        stack's state: each of `cluster.admins`, and the principal running the program (unless listed),
        which the toolkit's own Kubernetes provider needs. Returns the deployer's entry and association.

        A cluster created with the bootstrap admin on (every cluster before this release) already has an
        entry for its creator; when that is the deployer, its entry and association are adopted into the
        state (`import`, with the inputs EKS gave them: no tags), instead of a second entry EKS refuses.
        Once in the state, the import id is the resource's id and nothing is imported again (ids as the
        AWS provider forms them: `cluster:principal`, `cluster#principal#policy`; terraform-provider-aws
        internal/service/eks/access_entry.go, access_policy_association.go)."""
        part = iam.partition(self._region)
        policy = iam.access_policy_arn(part, iam.CLUSTER_ADMIN_ACCESS_POLICY)
        deployer = deployer_arn()
        access: list[pulumi.Resource] = []
        for i, arn in enumerate(self._spec.admins):
            entry = aws.eks.AccessEntry(f"{self._base}-admin-{i}", cluster_name=self.name, principal_arn=arn,
                                        type="STANDARD", tags=self._tags, opts=self._child)
            association = aws.eks.AccessPolicyAssociation(
                f"{self._base}-admin-{i}-policy", cluster_name=self.name, principal_arn=arn, policy_arn=policy,
                access_scope={"type": "cluster"}, opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]))
            if arn == deployer:
                access = [entry, association]
        if access:
            return access
        adopt = entry_exists(self._spec.name, deployer)
        entry = aws.eks.AccessEntry(
            f"{self._base}-deployer", cluster_name=self.name, principal_arn=deployer, type="STANDARD",
            opts=pulumi.ResourceOptions(parent=self, import_=f"{self._spec.name}:{deployer}" if adopt else None))
        association = aws.eks.AccessPolicyAssociation(
            f"{self._base}-deployer-policy", cluster_name=self.name, principal_arn=deployer, policy_arn=policy,
            access_scope={"type": "cluster"},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[entry],
                                        import_=f"{self._spec.name}#{deployer}#{policy}" if adopt else None))
        return [entry, association]

    def _system_nodes(self, role: iam.ServiceRole, identity: list[pulumi.Resource]) -> list[pulumi.Resource]:
        """The small managed node group for system pods (IMDSv2, hop limit 1, encrypted root volume),
        after the VPC CNI's identity (`identity`), and CoreDNS once it has somewhere to run."""
        name, system = self._base, self._spec.system_node_group
        template = aws.ec2.LaunchTemplate(
            f"{name}-system-template", description=f"System nodes of {self._spec.name}", update_default_version=True,
            metadata_options={"http_endpoint": "enabled", "http_tokens": "required", "http_put_response_hop_limit": 1},
            block_device_mappings=[{"device_name": "/dev/xvda",
                                    "ebs": {"volume_size": 50, "volume_type": "gp3", "encrypted": "true"}}],
            tag_specifications=[{"resource_type": "instance",
                                 "tags": {**self._tags, "Name": f"{self._spec.name}-system"}}],
            tags=self._tags, opts=self._child)
        group = aws.eks.NodeGroup(
            f"{name}-system", cluster_name=self.name, node_role_arn=role.role.arn,
            subnet_ids=self._network.private_subnet_ids, instance_types=[system.instance_type],
            version=self._spec.version,
            ami_type=system_ami_type(system.instance_type), capacity_type="ON_DEMAND",
            scaling_config={"desired_size": system.size, "min_size": system.size, "max_size": system.size},
            update_config={"max_unavailable": 1}, labels=SYSTEM_LABELS,
            launch_template={"id": template.id, "version": template.latest_version.apply(str)}, tags=self._tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*role.ready, *identity,
                                                                 *self._network.private_egress]))
        self.workload_nodes = [group]
        coredns = aws.eks.Addon(f"{name}-coredns", cluster_name=self.name, addon_name="coredns",
                                resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
                                tags=self._tags, opts=pulumi.ResourceOptions(parent=self, depends_on=[group]))
        return [group, coredns]

    def _karpenter_nodes(self) -> None:
        system = self._node_role("system-node", iam.node_policies(self._spec.ssm_access), "System node group")
        agent, identity = self._vpc_cni_identity()
        system_nodes = self._system_nodes(system, identity)
        self._restart_aws_node(identity)
        assert self._plan.karpenter is not None  # the plan has Karpenter settings in karpenter mode
        self.karpenter = Karpenter(f"{self._base}-karpenter", KarpenterArgs(
            plan=self._plan.karpenter, cluster_name=self.name, physical_cluster_name=self._spec.name,
            region=self._region, k8s_provider=self.k8s_provider, controller_depends_on=system_nodes,
            tags=self._tags, pod_identity_agent=agent, ssm_access=self._spec.ssm_access), opts=self._child)
        self._expose_node_role(self.karpenter.node_role)
        self.interruption_queue_name = self.karpenter.queue.name
        self.controller_role_arn = self.karpenter.controller_role.arn
        self.ready = [self.karpenter.crd_release, self.karpenter.release]
        # NodePools / EC2NodeClasses need the CRDs to be created, and the controller to be deleted: the
        # finalizers on EC2NodeClasses and NodeClaims are the controller's to remove, so it must outlive them
        self.node_pool_prerequisites = [self.karpenter.crd_release, self.karpenter.release]

    def _managed_node_groups_nodes(self) -> None:
        """One node role for the system group and every node pool's group (EKS creates their access entries)."""
        role = self._node_role("node", iam.node_policies(self._spec.ssm_access), "Managed node group nodes")
        _, identity = self._vpc_cni_identity()
        system_nodes = self._system_nodes(role, identity)
        self._restart_aws_node(identity)
        self._expose_node_role(role.role)
        self.ready = [*role.ready, *system_nodes]
        self.node_pool_prerequisites = [*role.ready, *identity]
