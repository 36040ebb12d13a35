"""Which input changes make `pulumi up` replace a resource, per resource type the toolkit creates.

One entry per type token. `paths` are Pulumi property paths (the program's camelCase inputs) whose
change replaces the resource: for AWS resources the terraform-provider-aws `ForceNew` schema flags
that pulumi-aws bridges as replacements; for Kubernetes objects pulumi-kubernetes' force-new fields.
`immutable` paths are ones the provider does not replace but the API refuses to change, so `pulumi
up` fails on them unless the program marks them `replaceOnChanges`. `stateful` says whether
replacing or deleting the resource loses something that cannot be recreated as it was (data, an
address, running nodes, a cluster) — what `eks-devices diff --fail-on replace` guards.

Sources (read at these revisions; paths are in each repository):
- terraform-provider-aws (hashicorp/terraform-provider-aws, main as of 2026; the schema maps of the
  files named per entry) — pulumi-aws 7.x bridges these flags as "replace" in its diff.
- pulumi-kubernetes (pulumi/pulumi-kubernetes v4.32.0-27-g94977969d):
  provider/pkg/provider/provider.go:1560 (`.metadata.name`, `.metadata.namespace` force a new object),
  provider/pkg/provider/diff.go:45 (the per-kind list; it has no resource.k8s.io, karpenter or eks kinds),
  provider/pkg/provider/helm_release.go:907 (a Release's `.name` and `.namespace`),
  provider/pkg/provider/provider.go:454 (DiffConfig: a provider pointed at another cluster is replaced).
- Kubernetes (kubernetes/kubernetes, pkg/apis/resource/validation/validation.go,
  ValidateResourceClaimUpdate / ValidateResourceClaimTemplateUpdate): a claim's and a claim template's
  `spec` is immutable.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _tf(path: str) -> str:
    return f"{TF} {path} (ForceNew in the schema)"


_METADATA = ("metadata.name", "metadata.namespace")

TABLE: dict[str, Replacement] = {
    # --- network ---------------------------------------------------------------------------------
    "aws:ec2/vpc:Vpc": Replacement(
        ("cidrBlock", "ipv4IpamPoolId", "ipv4NetmaskLength"), _tf("internal/service/ec2/vpc_.go"),
        True, "the VPC and everything in it"),
    "aws:ec2/subnet:Subnet": Replacement(
        ("availabilityZone", "availabilityZoneId", "cidrBlock", "vpcId", "outpostArn", "ipv6Native",
         "ipv4IpamPoolId", "ipv4NetmaskLength", "ipv6IpamPoolId", "ipv6NetmaskLength"),
        _tf("internal/service/ec2/vpc_subnet.go (commit 00cda125)"), True,
        "the subnet: its CIDR must be free, so nodes and ENIs in it must go first"),
    "aws:ec2/internetGateway:InternetGateway": Replacement(
        (), _tf("internal/service/ec2/vpc_internet_gateway.go (vpc_id attaches in place)"), False),
    "aws:ec2/eip:Eip": Replacement(
        ("domain", "address", "publicIpv4Pool", "networkBorderGroup", "customerOwnedIpv4Pool", "ipamPoolId"),
        _tf("internal/service/ec2/vpc_eip.go"), True, "the public IP address allow-lists may name"),
    "aws:ec2/natGateway:NatGateway": Replacement(
        ("allocationId", "subnetId", "connectivityType", "privateIp"),
        _tf("internal/service/ec2/vpc_nat_gateway.go"), True, "egress through its address while it is recreated"),
    "aws:ec2/routeTable:RouteTable": Replacement(("vpcId",), _tf("internal/service/ec2/vpc_route_table.go"), False),
    "aws:ec2/route:Route": Replacement(
        ("routeTableId", "destinationCidrBlock", "destinationIpv6CidrBlock", "destinationPrefixListId"),
        _tf("internal/service/ec2/vpc_route.go"), False),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": Replacement(
        ("subnetId", "gatewayId"), _tf("internal/service/ec2/vpc_route_table_association.go"), False),
    "aws:ec2/securityGroup:SecurityGroup": Replacement(
        ("name", "namePrefix", "vpcId", "description"), _tf("internal/service/ec2/vpc_security_group.go"), False),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": Replacement(
        ("securityGroupId",), f"{TF} internal/service/ec2/vpc_security_group_ingress_rule.go "
                              "(RequiresReplace plan modifier)", False),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": Replacement(
        ("securityGroupId",), f"{TF} internal/service/ec2/vpc_security_group_egress_rule.go "
                              "(RequiresReplace plan modifier)", False),
    "aws:ec2/tag:Tag": Replacement(("resourceId", "key"), _tf("internal/service/ec2/tag.go"), False),
    # --- nodes -----------------------------------------------------------------------------------
    "aws:ec2/launchTemplate:LaunchTemplate": Replacement(
        ("name", "namePrefix"),
        _tf("internal/service/ec2/ec2_launch_template.go (other changes create a new template version)"), False),
    "aws:ec2/placementGroup:PlacementGroup": Replacement(
        ("name", "namePrefix", "strategy", "partitionCount", "spreadLevel"),
        _tf("internal/service/ec2/ec2_placement_group.go"), True, "the instances' placement (they must leave it)"),
    "aws:eks/nodeGroup:NodeGroup": Replacement(
        ("amiType", "capacityType", "clusterName", "diskSize", "instanceTypes", "launchTemplate.id",
         "launchTemplate.name", "nodeGroupName", "nodeGroupNamePrefix", "nodeRoleArn", "remoteAccess", "subnetIds"),
        _tf("internal/service/eks/node_group.go (commit 012e0a32)"), True, "its nodes and the pods on them"),
    # --- cluster ---------------------------------------------------------------------------------
    # pulumi-eks's Cluster is a component: its inputs reach aws_eks_cluster, whose name, role_arn,
    # bootstrap_self_managed_addons, kubernetes_network_config.{ip_family,service_ipv4_cidr} are ForceNew and
    # whose encryption_config cannot be removed (CustomizeDiff ForceNewIfChange); vpc_config.subnet_ids,
    # version, logging, access and compute config update in place. vpcId reaches its security groups (vpc_id).
    "eks:index:Cluster": Replacement(
        ("name", "bootstrapSelfManagedAddons", "encryptionConfigKeyArn", "ipFamily", "kubernetesServiceIpAddressRange",
         "serviceRole", "vpcId"),
        f"{TF} internal/service/eks/cluster.go (commit 00555dc5; ForceNew and CustomizeDiff) through "
        "pulumi/pulumi-eks v4.3.0 nodejs/eks/cluster/cluster.ts:593-698 (the inputs it passes to aws.eks.Cluster)",
        True, "the cluster: its control plane, its API objects and every node"),
    "aws:eks/addon:Addon": Replacement(("clusterName", "addonName"), _tf("internal/service/eks/addon.go"), False),
    "aws:eks/accessEntry:AccessEntry": Replacement(
        ("clusterName", "principalArn", "type"), _tf("internal/service/eks/access_entry.go"), False),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": Replacement(
        ("clusterName", "principalArn", "policyArn", "accessScope"),
        _tf("internal/service/eks/access_policy_association.go"), False),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": Replacement(
        ("clusterName", "namespace", "serviceAccount"),
        f"{TF} internal/service/eks/pod_identity_association.go (RequiresReplace plan modifier)", False),
    "aws:kms/key:Key": Replacement(
        ("customerMasterKeySpec", "keyUsage", "multiRegion", "customKeyStoreId", "xksKeyId"),
        _tf("internal/service/kms/key.go"), True,
        "the key the cluster's secrets are encrypted with (a deleted key is scheduled for deletion)"),
    "aws:kms/alias:Alias": Replacement(("name", "namePrefix"), _tf("internal/service/kms/alias.go"), False),
    "aws:cloudwatch/logGroup:LogGroup": Replacement(
        ("name", "namePrefix", "logGroupClass"), _tf("internal/service/logs/group.go"), True,
        "the control plane's audit and API logs"),
    # --- IAM -------------------------------------------------------------------------------------
    "aws:iam/role:Role": Replacement(("name", "namePrefix", "path"), _tf("internal/service/iam/role.go"), False),
    "aws:iam/policy:Policy": Replacement(
        ("name", "namePrefix", "path", "description"), _tf("internal/service/iam/policy.go"), False),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": Replacement(
        ("role", "policyArn"), _tf("internal/service/iam/role_policy_attachment.go"), False),
    # --- Karpenter interruption handling ----------------------------------------------------------
    "aws:sqs/queue:Queue": Replacement(
        ("name", "namePrefix", "fifoQueue"), _tf("internal/service/sqs/queue.go"), True,
        "interruption messages not yet handled"),
    "aws:sqs/queuePolicy:QueuePolicy": Replacement(("queueUrl",), _tf("internal/service/sqs/queue_policy.go"), False),
    "aws:cloudwatch/eventRule:EventRule": Replacement(
        ("name", "namePrefix", "eventBusName"), _tf("internal/service/events/rule.go"), False),
    "aws:cloudwatch/eventTarget:EventTarget": Replacement(
        ("rule", "targetId", "eventBusName"), _tf("internal/service/events/target.go"), False),
    # --- Kubernetes ------------------------------------------------------------------------------
    "pulumi:providers:kubernetes": Replacement(
        ("kubeconfig", "clusterIdentifier"),
        "pulumi/pulumi-kubernetes v4.32.0 provider/pkg/provider/provider.go:454 (DiffConfig: another cluster)",
        False),
    "kubernetes:helm.sh/v3:Release": Replacement(
        ("name", "namespace"), "pulumi/pulumi-kubernetes v4.32.0 provider/pkg/provider/helm_release.go:907", False),
    "kubernetes:core/v1:Namespace": Replacement(_METADATA, K8S_PROVIDER, True, "every object in the namespace"),
    "kubernetes:karpenter.sh/v1:NodePool": Replacement(
        _METADATA, K8S_PROVIDER, True, "its nodes (Karpenter drains them) and the pods on them"),
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": Replacement(_METADATA, K8S_PROVIDER, False),
    "kubernetes:eks.amazonaws.com/v1:NodeClass": Replacement(_METADATA, K8S_PROVIDER, False),
    "kubernetes:resource.k8s.io/v1:DeviceClass": Replacement(_METADATA, K8S_PROVIDER, False),
    "kubernetes:resource.k8s.io/v1:ResourceClaim": Replacement(
        _METADATA, f"{K8S_PROVIDER}; {CLAIM_IMMUTABLE}", True, "the allocation of the pods sharing it",
        immutable=("spec",)),
    "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain": Replacement(
        _METADATA, K8S_PROVIDER, True, "the IMEX channels of the multi-node job running in the domain"),
    "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate": Replacement(
        _METADATA, f"{K8S_PROVIDER}; {CLAIM_IMMUTABLE}", False, immutable=("spec",)),
}


def entry(type_: str) -> Replacement | None:
    """The table's entry for a type token, or None when the toolkit does not know the type."""
    return TABLE.get(type_)
