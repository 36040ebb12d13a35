"""Which input changes make `pulumi up` replace a resource, per resource type the toolkit creates.

One entry per type token. `paths` are Pulumi property paths (the program's camelCase inputs) whose
change replaces the resource: for AWS resources the terraform-provider-aws `ForceNew` schema flags
that pulumi-aws bridges as replacements; for Kubernetes objects pulumi-kubernetes' force-new fields.
`immutable` paths are ones the provider does not replace but the API refuses to change, so `pulumi
up` fails on them unless the program marks them `replaceOnChanges`. `stateful` says whether
replacing or deleting the resource loses something that cannot be recreated as it was (data, an
address, running nodes, a cluster) — what `eks-devices diff --fail-on replace` guards.

Sources (read at these revisions; paths are in each repository):
- terraform-provider-aws (hashicorp/terraform-provider-aws): each entry names the file and the commit
  whose resource schema was read, and the schema attributes (`ForceNew: true`, a framework
  `RequiresReplace` plan modifier, or a `CustomizeDiff` that forces new) — pulumi-aws 7.x bridges these
  flags 1:1 as "replace" in its diff. Attributes are cited by schema key rather than line: the key
  locates them in any revision of the file.
- pulumi-eks (pulumi/pulumi-eks v4.3.0 nodejs/eks/cluster/cluster.ts, unchanged up to main 7bf0c1b1 of
  2026-08-12): which inputs reach `aws.eks.Cluster` (:687-764) and which of its properties the
  component ignores (`ignoreChanges`, :751-755).
- pulumi-kubernetes (pulumi/pulumi-kubernetes v4.32.0; unchanged at v4.32.0-27-g94977969d):
  provider/pkg/provider/provider.go:1560 (`.metadata.name`, `.metadata.namespace` force a new object),
  provider/pkg/provider/diff.go:45 (the per-kind list; it has no resource.k8s.io, karpenter, eks or
  NVIDIA kinds), provider/pkg/provider/helm_release.go:907 (a Release's `.name` and `.namespace`),
  provider/pkg/provider/provider.go:454-569 (DiffConfig: a provider pointed at another cluster, or given
  another `clusterIdentifier`, is replaced).
- Kubernetes (kubernetes/kubernetes, pkg/apis/resource/validation/validation.go,
  ValidateResourceClaimUpdate / ValidateResourceClaimTemplateUpdate): a claim's and a claim template's
  `spec` is immutable. CRD rules (`x-kubernetes-validations` with `oldSelf`): Karpenter
  (kubernetes-sigs/karpenter v1.14.1 pkg/apis/v1/nodepool.go:237-238) and the NVIDIA DRA driver's
  ComputeDomain (cited with its chart descriptor, `COMPUTE_DOMAIN_IMMUTABLE`).
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from eks_devices.core.knowledge.charts.nvidia_dra_driver import COMPUTE_DOMAIN_API, COMPUTE_DOMAIN_IMMUTABLE

TF = "hashicorp/terraform-provider-aws"
K8S_PROVIDER = "pulumi/pulumi-kubernetes v4.32.0 provider/pkg/provider/provider.go:1560 (metadata.name/namespace)"
CLAIM_IMMUTABLE = ("kubernetes/kubernetes pkg/apis/resource/validation/validation.go "
                   "(ValidateResourceClaim[Template]Update: spec is immutable)")


@dataclass(frozen=True)
class Replacement:
    """How one resource type is replaced."""

    paths: tuple[str, ...]  # a change here replaces the resource
    source: str  # where upstream says so
    stateful: bool  # replacing or deleting it loses what cannot be recreated as it was
    loses: str = ""  # what, in a few words (stateful entries)
    immutable: tuple[str, ...] = ()  # the API refuses a change here; pulumi up fails unless replaceOnChanges
    kubeconfig: str = ""  # a path in `paths` that replaces only when its kubeconfig's active cluster changes


def _tf(path: str, commit: str, keys: str) -> str:
    """A terraform-provider-aws citation: file, the commit read, and the schema keys that force new."""
    return f"{TF} {path} @{commit} ({keys})"


_METADATA = ("metadata.name", "metadata.namespace")
K8S_NO_FORCE_NEW = "no ForceNew beyond metadata: diff.go:45 lists no fields for the kind"

TABLE: dict[str, Replacement] = {
    # --- network ---------------------------------------------------------------------------------
    "aws:ec2/vpc:Vpc": Replacement(
        ("cidrBlock", "ipv4IpamPoolId", "ipv4NetmaskLength"),
        _tf("internal/service/ec2/vpc_.go", "00081ce4",
            "cidr_block, ipv4_ipam_pool_id, ipv4_netmask_length ForceNew; tenancy and DNS update in place"),
        True, "the VPC and everything in it"),
    "aws:ec2/subnet:Subnet": Replacement(
        ("availabilityZone", "availabilityZoneId", "cidrBlock", "vpcId", "outpostArn", "ipv6Native",
         "ipv4IpamPoolId", "ipv4NetmaskLength", "ipv6IpamPoolId", "ipv6NetmaskLength"),
        _tf("internal/service/ec2/vpc_subnet.go", "00cda125",
            "those keys ForceNew; CustomizeDiff ForceNewIf ipv6_cidr_block only when the subnet assigned "
            "IPv6 on creation"),
        True, "the subnet: its CIDR must be free, so nodes and ENIs in it must go first"),
    "aws:ec2/internetGateway:InternetGateway": Replacement(
        (), _tf("internal/service/ec2/vpc_internet_gateway.go", "eeecacfa",
                "no ForceNew: vpc_id attaches and detaches in place"), False),
    "aws:ec2/eip:Eip": Replacement(
        ("address", "domain", "ipamPoolId", "networkBorderGroup", "publicIpv4Pool"),
        _tf("internal/service/ec2/ec2_eip.go", "01606926",
            "address, domain, ipam_pool_id, network_border_group, public_ipv4_pool ForceNew; "
            "customer_owned_ipv4_pool is not"),
        True, "the public IP address allow-lists may name"),
    "aws:ec2/natGateway:NatGateway": Replacement(
        ("allocationId", "connectivityType", "privateIp", "secondaryPrivateIpAddressCount", "subnetId"),
        _tf("internal/service/ec2/vpc_nat_gateway.go", "04088eaa",
            "allocation_id, connectivity_type, private_ip, secondary_private_ip_address_count, subnet_id "
            "ForceNew; secondary allocations and addresses update in place"),
        True, "egress through its address while it is recreated"),
    "aws:ec2/routeTable:RouteTable": Replacement(
        ("vpcId",), _tf("internal/service/ec2/vpc_route_table.go", "02209241", "vpc_id ForceNew"), False),
    "aws:ec2/route:Route": Replacement(
        ("routeTableId", "destinationCidrBlock", "destinationIpv6CidrBlock", "destinationPrefixListId"),
        _tf("internal/service/ec2/vpc_route.go", "0128541e",
            "route_table_id and the destinations ForceNew; targets are replaced in place (ReplaceRoute)"),
        False),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": Replacement(
        ("subnetId", "gatewayId"),
        _tf("internal/service/ec2/vpc_route_table_association.go", "0be71beb",
            "subnet_id, gateway_id ForceNew; route_table_id updates in place"), False),
    "aws:ec2/securityGroup:SecurityGroup": Replacement(
        ("name", "namePrefix", "vpcId", "description"),
        _tf("internal/service/ec2/vpc_security_group.go", "cc0fff0e",
            "name, name_prefix, description, vpc_id ForceNew"), False),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": Replacement(
        ("securityGroupId",),
        _tf("internal/service/ec2/vpc_security_group_ingress_rule.go", "00a32209",
            "security_group_id RequiresReplace; ModifyPlan also replaces when the source kind changes, "
            "e.g. cidr_ipv4 to referenced_security_group_id"), False),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": Replacement(
        ("securityGroupId",),
        _tf("internal/service/ec2/vpc_security_group_egress_rule.go", "050ac111",
            "shares the ingress rule's schema and ModifyPlan: security_group_id RequiresReplace"), False),
    "aws:ec2/tag:Tag": Replacement(
        ("resourceId", "key"),
        f"{TF} internal/service/ec2/tag.go (resource_id, key ForceNew; value updates in place), read in the "
        "snapshot andresion/terraform-provider-aws@86cf9197; earlier aws/resource_aws_ec2_tag.go @01326786",
        False),
    # --- nodes -----------------------------------------------------------------------------------
    "aws:ec2/launchTemplate:LaunchTemplate": Replacement(
        ("name", "namePrefix"),
        _tf("internal/service/ec2/ec2_launch_template.go", "c49358f8",
            "name, name_prefix ForceNew; other changes create a new template version"), False),
    "aws:ec2/placementGroup:PlacementGroup": Replacement(
        ("name", "strategy", "partitionCount", "spreadLevel"),
        _tf("internal/service/ec2/ec2_placement_group.go", "05e34de7",
            "name, strategy, partition_count, spread_level ForceNew; no name_prefix; tags only update"),
        True, "the instances' placement (they must leave it)"),
    "aws:eks/nodeGroup:NodeGroup": Replacement(
        ("amiType", "capacityType", "clusterName", "diskSize", "instanceTypes", "launchTemplate.id",
         "launchTemplate.name", "nodeGroupName", "nodeGroupNamePrefix", "nodeRoleArn", "remoteAccess", "subnetIds"),
        _tf("internal/service/eks/node_group.go", "012e0a32",
            "those keys ForceNew; launch_template.version, labels, taints, scaling and version update"),
        True, "its nodes and the pods on them"),
    # --- cluster ---------------------------------------------------------------------------------
    # pulumi-eks's Cluster is a component: its inputs reach aws_eks_cluster (cluster.go @00555dc5), whose
    # name, role_arn, kubernetes_network_config.{ip_family,service_ipv4_cidr} are ForceNew, whose
    # encryption_config cannot be removed (CustomizeDiff ForceNewIfChange) and whose
    # compute_config.node_role_arn forces new once set (CustomizeDiff). Adding encryption updates in place
    # and changing the key is refused by EKS; the table reports every encryptionConfigKeyArn change as
    # the removal does (a replacement). bootstrap_self_managed_addons is
    # ForceNew too, but pulumi-eks lists it in the cluster's ignoreChanges (cluster.ts:751-755), so a
    # change is dropped. vpc_config.subnet_ids and security_group_ids, version, logging, access and
    # endpoint settings update in place (deletion_protection is newer than the revision read and is not
    # cited here). vpcId replaces the component's cluster security group, and EKS refuses to move a
    # cluster to another VPC: the update fails.
    "eks:index:Cluster": Replacement(
        ("name", "serviceRole", "encryptionConfigKeyArn", "ipFamily", "kubernetesServiceIpAddressRange",
         "autoMode.computeConfig.nodeRoleArn"),
        f"{TF} internal/service/eks/cluster.go @00555dc5 (name, role_arn, kubernetes_network_config ip_family "
        "and service_ipv4_cidr ForceNew; CustomizeDiff: removing encryption_config and changing a set "
        "compute_config.node_role_arn force new) through pulumi/pulumi-eks v4.3.0 "
        "nodejs/eks/cluster/cluster.ts:687-764 (the inputs it passes to aws.eks.Cluster; ignoreChanges "
        "bootstrapSelfManagedAddons at :751-755)",
        True, "the cluster: its control plane, its API objects and every node", immutable=("vpcId",)),
    "aws:eks/addon:Addon": Replacement(
        ("clusterName", "addonName"),
        _tf("internal/service/eks/addon.go", "00a35305",
            "addon_name, cluster_name ForceNew; version, configuration and roles update in place"), False),
    "aws:eks/accessEntry:AccessEntry": Replacement(
        ("clusterName", "principalArn", "type"),
        _tf("internal/service/eks/access_entry.go", "01f43111", "cluster_name, principal_arn, type ForceNew"),
        False),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": Replacement(
        ("clusterName", "principalArn", "policyArn", "accessScope"),
        _tf("internal/service/eks/access_policy_association.go", "01f43111",
            "access_scope (and its type, namespaces), cluster_name, policy_arn, principal_arn ForceNew; "
            "no update"), False),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": Replacement(
        ("clusterName", "namespace", "serviceAccount"),
        _tf("internal/service/eks/pod_identity_association.go", "00a35305",
            "cluster_name, namespace, service_account RequiresReplace; role_arn updates in place"), False),
    "aws:kms/key:Key": Replacement(
        ("customerMasterKeySpec", "keyUsage", "multiRegion", "customKeyStoreId", "xksKeyId"),
        _tf("internal/service/kms/key.go", "00a35305",
            "custom_key_store_id, customer_master_key_spec, key_usage, multi_region, xks_key_id ForceNew"),
        True, "the key the cluster's secrets are encrypted with (a deleted key is scheduled for deletion)"),
    "aws:kms/alias:Alias": Replacement(
        ("name", "namePrefix"),
        _tf("internal/service/kms/alias.go", "01c08000", "name, name_prefix ForceNew; target_key_id updates"),
        False),
    "aws:cloudwatch/logGroup:LogGroup": Replacement(
        ("name", "namePrefix", "logGroupClass"),
        _tf("internal/service/logs/group.go", "0073593e",
            "name, name_prefix, log_group_class ForceNew; retention and kms_key_id update in place"),
        True, "the control plane's audit and API logs"),
    # --- IAM -------------------------------------------------------------------------------------
    "aws:iam/role:Role": Replacement(
        ("name", "namePrefix", "path"),
        _tf("internal/service/iam/role.go", "0040ea69", "name, name_prefix, path ForceNew"), False),
    "aws:iam/policy:Policy": Replacement(
        ("name", "namePrefix", "path", "description"),
        _tf("internal/service/iam/policy.go", "01ccd9a2", "description, name, name_prefix, path ForceNew"),
        False),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": Replacement(
        ("role", "policyArn"),
        _tf("internal/service/iam/role_policy_attachment.go", "04c79849", "role, policy_arn ForceNew; no update"),
        False),
    # --- Karpenter interruption handling ----------------------------------------------------------
    "aws:sqs/queue:Queue": Replacement(
        ("name", "namePrefix", "fifoQueue"),
        _tf("internal/service/sqs/queue.go", "00a35305", "fifo_queue, name, name_prefix ForceNew"), True,
        "interruption messages not yet handled"),
    "aws:sqs/queuePolicy:QueuePolicy": Replacement(
        ("queueUrl",), _tf("internal/service/sqs/queue_policy.go", "0148137d", "queue_url ForceNew"), False),
    "aws:cloudwatch/eventRule:EventRule": Replacement(
        ("name", "namePrefix", "eventBusName"),
        _tf("internal/service/events/rule.go", "0cdab4ae", "event_bus_name, name, name_prefix ForceNew"),
        False),
    "aws:cloudwatch/eventTarget:EventTarget": Replacement(
        ("rule", "targetId", "eventBusName"),
        _tf("internal/service/events/target.go", "0762c41e", "event_bus_name, rule, target_id ForceNew"),
        False),
    # --- Kubernetes ------------------------------------------------------------------------------
    # DiffConfig replaces the provider when `clusterIdentifier` changes, when `kubeconfig` is unknown, and
    # when the kubeconfig's active cluster (the cluster entry its current context names: server, CA, …)
    # changes; a kubeconfig that changes only its credentials (e.g. the exec profile) updates in place
    # (`active_cluster` reads that entry). A replaced provider replaces every resource it manages
    # (`PROVIDER_REPLACED`).
    "pulumi:providers:kubernetes": Replacement(
        ("kubeconfig", "clusterIdentifier"),
        "pulumi/pulumi-kubernetes v4.32.0 provider/pkg/provider/provider.go:454-569 (DiffConfig: "
        "clusterIdentifier, or a kubeconfig whose active cluster changes)",
        False, kubeconfig="kubeconfig"),
    "kubernetes:helm.sh/v3:Release": Replacement(
        ("name", "namespace"),
        "pulumi/pulumi-kubernetes v4.32.0 provider/pkg/provider/helm_release.go:907 (.name, .namespace; "
        "chart, version and values upgrade in place)", False),
    "kubernetes:core/v1:Namespace": Replacement(_METADATA, K8S_PROVIDER, True, "every object in the namespace"),
    # a patch of an object the toolkit does not own (aws-node's pod template): replacing it re-applies the patch
    "kubernetes:apps/v1:DaemonSetPatch": Replacement(_METADATA, K8S_PROVIDER, False),
    # Karpenter also refuses to move a NodePool between static (spec.replicas set) and dynamic (unset)
    # provisioning (nodepool.go:39): a presence change, not a value change, so no path models it.
    "kubernetes:karpenter.sh/v1:NodePool": Replacement(
        _METADATA, f"{K8S_PROVIDER}; kubernetes-sigs/karpenter v1.14.1 pkg/apis/v1/nodepool.go:237-238 "
        "(nodeClassRef.group and .kind are immutable)", True,
        "its nodes (Karpenter drains them) and the pods on them",
        immutable=("spec.template.spec.nodeClassRef.group", "spec.template.spec.nodeClassRef.kind")),
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": Replacement(
        _METADATA, f"{K8S_PROVIDER}; aws/karpenter-provider-aws v1.14.1 pkg/apis/v1/ec2nodeclass.go "
        "(no oldSelf rule: every spec field updates)", False),
    "kubernetes:eks.amazonaws.com/v1:NodeClass": Replacement(
        _METADATA, f"{K8S_PROVIDER}; {K8S_NO_FORCE_NEW}", False),
    "kubernetes:resource.k8s.io/v1:DeviceClass": Replacement(
        _METADATA, f"{K8S_PROVIDER}; {K8S_NO_FORCE_NEW}", False),
    "kubernetes:resource.k8s.io/v1:ResourceClaim": Replacement(
        _METADATA, f"{K8S_PROVIDER}; {CLAIM_IMMUTABLE}", True, "the allocation of the pods sharing it",
        immutable=("spec",)),
    f"kubernetes:{COMPUTE_DOMAIN_API}:ComputeDomain": Replacement(
        _METADATA, f"{K8S_PROVIDER}; {COMPUTE_DOMAIN_IMMUTABLE} (self == oldSelf: spec is immutable)", True,
        "the IMEX channels of the multi-node job running in the domain", immutable=("spec",)),
    "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate": Replacement(
        _METADATA, f"{K8S_PROVIDER}; {CLAIM_IMMUTABLE}", False, immutable=("spec",)),
}


# When a provider is replaced, the resources it manages get a new provider reference, and the engine asks the new
# provider's DiffConfig whether that needs them replaced: it does, as it replaced the provider.
PROVIDER_REPLACED = ("pulumi/pulumi pkg/resource/deploy/step_generator.go `providerChanged` (a DiffConfig that "
                     "reports a replacement replaces each resource of the provider; explicit providers too since "
                     "pulumi/pulumi#18509, 2025-02)")


# What a replacement does to the resources whose inputs are computed from it. The engine keeps, per input, the
# resources its value was computed from (`propertyDependencies`). In the preview `pulumi up` shows, a replaced
# resource's outputs are unknown (its provider cannot know what the new one returns), so every input computed from
# them is unknown too, and its provider's Diff decides: an unknown value of a replace-forcing input replaces.
UNKNOWN_IN_PREVIEW = ("pulumi/pulumi v3.276.0 sdk/python/lib/pulumi/runtime/rpc.py `resolve_outputs` (in a preview, an "
                      "output the provider's answer leaves out is unknown, and so is every value computed from it)")
UNKNOWN_FORCES_NEW = ("hashicorp/terraform-plugin-sdk v2 helper/schema/schema.go `finalizeDiff` (ForceNew: "
                      "RequiresNew when Old != New or NewComputed) and terraform-plugin-framework "
                      "resource/schema/stringplanmodifier `RequiresReplace` (a planned value unequal to the state's, "
                      "unknown included), reported by pulumi/pulumi-terraform-bridge as replacements; "
                      "pulumi/pulumi-kubernetes provider/pkg/provider/provider.go `DiffConfig` (an unknown kubeconfig, "
                      "context or cluster replaces the provider)")
# A resource replaced delete-first takes with it, deleted before it, every dependent its replacement replaces.
DEPENDENTS_DELETED_FIRST = ("pulumi/pulumi v3.276.0 pkg/resource/deploy/step_generator.go "
                            "`calculateDependentReplacements`: before a delete-first replacement deletes a resource, "
                            "the engine deletes each resource whose provider is replaced with it, or whose provider's "
                            "Diff replaces it once the inputs computed from it are unknown (components are skipped; "
                            "the walk follows the baseline's dependencies)")


def active_cluster(kubeconfig: object) -> object:
    """The cluster entry (server, certificate authority, …) of a kubeconfig's current context, which is all
    pulumi-kubernetes' DiffConfig compares (provider.go `getActiveClusterFromConfig`); None when the kubeconfig
    cannot be read, so that any change of it counts."""
    try:
        config = yaml.safe_load(kubeconfig) if isinstance(kubeconfig, str) else kubeconfig
        context = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
        return next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    except (yaml.YAMLError, KeyError, TypeError, StopIteration):
        return None


def entry(type_: str) -> Replacement | None:
    """The table's entry for a type token, or None when the toolkit does not know the type."""
    return TABLE.get(type_)
