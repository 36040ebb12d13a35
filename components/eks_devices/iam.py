"""IAM for the cluster: node and controller roles with AWS managed policies, and the policy
documents the toolkit writes itself (the Karpenter controller's six policies).

The documents are pure functions of plain strings so they are unit-tested without Pulumi; the
role helper wires them into `aws.iam` resources. Policy sets follow Karpenter v1.14.1 `cloudformation.yaml` and
the EKS User Guide Auto Mode IAM pages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

# AWS managed policies per node role (Karpenter v1.14.1 `cloudformation.yaml`; EKS User Guide, Auto Mode);
# pulumi-eks makes the control-plane role.
AUTO_MODE_NODE_POLICIES = ("AmazonEKSWorkerNodeMinimalPolicy", "AmazonEC2ContainerRegistryPullOnly")
# The node role of the karpenter and managed-node-groups modes. Not the CNI policy: the VPC CNI (`aws-node`)
# gets its own role through Pod Identity (`VPC_CNI_POLICY`), so pods on the node cannot borrow its EC2
# network permissions (EKS Best Practices Guide, Security, "Identity and Access Management": update the
# aws-node daemonset to use IRSA or Pod Identity). SSM only when the stack asks (`cluster.ssmAccess`).
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly")
SSM_POLICY = "AmazonSSMManagedInstanceCore"
VPC_CNI_POLICY = "AmazonEKS_CNI_Policy"
VPC_CNI_SERVICE_ACCOUNT = ("kube-system", "aws-node")  # the VPC CNI add-on's DaemonSet and service account
AUTO_NODE_ACCESS_POLICY = "AmazonEKSAutoNodePolicy"
CLUSTER_ADMIN_ACCESS_POLICY = "AmazonEKSClusterAdminPolicy"


def node_policies(ssm_access: bool) -> tuple[str, ...]:
    """The managed policies of a self-managed mode's node role: SSM sessions only when asked for."""
    return (*NODE_POLICIES, SSM_POLICY) if ssm_access else NODE_POLICIES


def partition(region: str) -> str:
    """The AWS partition a region belongs to (ARNs differ per partition)."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def secrets_key_policy(region: str, account: str, log_group: str) -> dict[str, Any]:
    """The generated KMS key's policy: the account administers it (the key policy AWS gives by
    default), and CloudWatch Logs may use it for the control-plane log group only (CloudWatch Logs
    User Guide, "Encrypt log data in CloudWatch Logs using AWS KMS")."""
    part = partition(region)
    suffix = "amazonaws.com.cn" if part == "aws-cn" else "amazonaws.com"
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "AccountAdministers", "Effect": "Allow", "Principal": {"AWS": f"arn:{part}:iam::{account}:root"},
         "Action": "kms:*", "Resource": "*"},
        {"Sid": "ControlPlaneLogs", "Effect": "Allow", "Principal": {"Service": f"logs.{region}.{suffix}"},
         "Action": ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
         "Resource": "*", "Condition": {"ArnEquals": {
             "kms:EncryptionContext:aws:logs:arn": f"arn:{part}:logs:{region}:{account}:log-group:{log_group}"}}},
    ]}


def managed_policy_arn(part: str, policy: str) -> str:
    return f"arn:{part}:iam::aws:policy/{policy}"


def access_policy_arn(part: str, policy: str) -> str:
    """An EKS access policy (for access entries), e.g. AmazonEKSAutoNodePolicy."""
    return f"arn:{part}:eks::aws:cluster-access-policy/{policy}"


def trust_policy(service: str, tag_session: bool = False,
                 request_tags: dict[str, str] | None = None) -> dict[str, Any]:
    """Who may assume a role: one AWS service (`sts:TagSession` too for EKS and Pod Identity),
    only with the given session tags when `request_tags` names them."""
    actions = ["sts:AssumeRole", "sts:TagSession"] if tag_session else ["sts:AssumeRole"]
    statement: dict[str, Any] = {"Effect": "Allow", "Principal": {"Service": service}, "Action": actions}
    if request_tags:
        statement["Condition"] = {"StringEquals": {f"aws:RequestTag/{k}": v for k, v in sorted(request_tags.items())}}
    return {"Version": "2012-10-17", "Statement": [statement]}


def pod_identity_trust(cluster_name: str, namespace: str, service_account: str) -> dict[str, Any]:
    """A Pod Identity role only one service account of one cluster can assume: EKS Pod Identity
    sets the session tags eks-cluster-name, kubernetes-namespace and kubernetes-service-account
    (EKS User Guide, "Create IAM role with trust policy required by EKS Pod Identity" and
    "Grant Pods access to AWS resources based on tags")."""
    return trust_policy("pods.eks.amazonaws.com", tag_session=True, request_tags={
        "eks-cluster-name": cluster_name, "kubernetes-namespace": namespace,
        "kubernetes-service-account": service_account})


@dataclass
class ServiceRole:
    """An IAM role and its policy attachments (depend on both before using the role)."""

    role: aws.iam.Role
    attachments: list[pulumi.Resource]

    @property
    def ready(self) -> list[pulumi.Resource]:
        return [self.role, *self.attachments]


def service_role(name: str, service: str, policies: Sequence[str], *, region: str, description: str,
                 tags: dict[str, str], opts: pulumi.ResourceOptions, tag_session: bool = False) -> ServiceRole:
    """A role `service` assumes, with AWS managed `policies` attached (physical name generated)."""
    part = partition(region)
    role = aws.iam.Role(name, assume_role_policy=json.dumps(trust_policy(service, tag_session)),
                        description=description, tags=tags, opts=opts)
    attachments: list[pulumi.Resource] = [
        aws.iam.RolePolicyAttachment(f"{name}-{policy}", role=role.name,
                                     policy_arn=managed_policy_arn(part, policy), opts=opts)
        for policy in policies
    ]
    return ServiceRole(role, attachments)


# --- Karpenter controller (v1.14.1 `cloudformation.yaml`): six policies, tag-scoped to this cluster ---

KARPENTER_POLICY_NAMES = ("NodeLifecycle", "IAMIntegration", "EKSIntegration", "Interruption", "ZonalShift",
                          "ResourceDiscovery")


def karpenter_controller_policies(cluster: str, region: str, account: str, node_role_arn: str,
                                  queue_arn: str) -> dict[str, dict[str, Any]]:
    """The Karpenter controller's policy documents by short name (`KarpenterController<X>Policy`)."""
    part = partition(region)
    ec2 = f"arn:{part}:ec2:{region}"
    owned = f"kubernetes.io/cluster/{cluster}"
    cluster_arn = f"arn:{part}:eks:{region}:{account}:cluster/{cluster}"
    profiles = f"arn:{part}:iam::{account}:instance-profile/*"
    launched = [f"{ec2}:*:{kind}/*" for kind in ("fleet", "instance", "volume", "network-interface",
                                                   "launch-template", "spot-instances-request")]
    request_tags = {f"aws:RequestTag/{owned}": "owned", "aws:RequestTag/eks:eks-cluster-name": cluster}
    nodepool_resource = {"aws:ResourceTag/karpenter.sh/nodepool": "*"}
    regional_profile = {f"aws:ResourceTag/{owned}": "owned",
                        "aws:ResourceTag/topology.kubernetes.io/region": region}

    def doc(*statements: dict[str, Any]) -> dict[str, Any]:
        return {"Version": "2012-10-17", "Statement": list(statements)}

    def allow(sid: str, actions: list[str] | str, resources: list[str] | str,
              when: dict[str, Any] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"Sid": sid, "Effect": "Allow", "Action": actions, "Resource": resources}
        if when:
            out["Condition"] = when
        return out

    owned_nodepool = {"StringEquals": {f"aws:ResourceTag/{owned}": "owned"}, "StringLike": nodepool_resource}
    new_nodepool = {"aws:RequestTag/karpenter.sh/nodepool": "*"}
    nodeclass_request = {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}
    nodeclass_resource = {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"}
    return {
        "NodeLifecycle": doc(
            allow("LaunchFromSharedResources", ["ec2:RunInstances", "ec2:CreateFleet"],
                  [f"{ec2}::image/*", f"{ec2}::snapshot/*", f"{ec2}:*:security-group/*", f"{ec2}:*:subnet/*",
                   f"{ec2}:*:capacity-reservation/*", f"{ec2}:*:placement-group/*"]),
            allow("LaunchFromOwnedLaunchTemplates", ["ec2:RunInstances", "ec2:CreateFleet"],
                  f"{ec2}:*:launch-template/*", owned_nodepool),
            allow("CreateTaggedNodes", ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"], launched,
                  {"StringEquals": request_tags, "StringLike": new_nodepool}),
            allow("TagOnCreate", "ec2:CreateTags", launched,
                  {"StringEquals": {**request_tags,
                                    "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"]},
                   "StringLike": new_nodepool}),
            allow("TagOwnedNodes", "ec2:CreateTags", f"{ec2}:*:instance/*",
                  {**owned_nodepool,
                   "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": cluster},
                   "ForAllValues:StringEquals": {"aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim",
                                                                 "Name"]}}),
            allow("DeleteOwnedNodes", ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
                  [f"{ec2}:*:instance/*", f"{ec2}:*:launch-template/*"], owned_nodepool),
        ),
        "IAMIntegration": doc(
            allow("PassNodeRole", "iam:PassRole", node_role_arn,
                  {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}}),
            allow("CreateInstanceProfiles", "iam:CreateInstanceProfile", profiles,
                  {"StringEquals": {**request_tags, "aws:RequestTag/topology.kubernetes.io/region": region},
                   "StringLike": nodeclass_request}),
            allow("TagInstanceProfiles", "iam:TagInstanceProfile", profiles,
                  {"StringEquals": {**regional_profile, **request_tags,
                                    "aws:RequestTag/topology.kubernetes.io/region": region},
                   "StringLike": {**nodeclass_resource, **nodeclass_request}}),
            allow("ManageInstanceProfiles", ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile",
                                             "iam:DeleteInstanceProfile"], profiles,
                  {"StringEquals": regional_profile, "StringLike": nodeclass_resource}),
        ),
        "EKSIntegration": doc(allow("DiscoverApiServer", "eks:DescribeCluster", cluster_arn)),
        "Interruption": doc(allow("ReadInterruptionQueue", ["sqs:DeleteMessage", "sqs:GetQueueUrl",
                                                             "sqs:ReceiveMessage"], queue_arn)),
        "ZonalShift": doc(allow("ReadZonalShift", "arc-zonal-shift:GetManagedResource", "*",
                                {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": cluster_arn}})),
        "ResourceDiscovery": doc(
            allow("DescribeRegionalResources", [f"ec2:Describe{kind}" for kind in (
                "CapacityReservations", "Images", "Instances", "InstanceStatus", "InstanceTypeOfferings",
                "InstanceTypes", "LaunchTemplates", "PlacementGroups", "SecurityGroups", "SpotPriceHistory",
                "Subnets")], "*", {"StringEquals": {"aws:RequestedRegion": region}}),
            allow("ReadAmiParameters", "ssm:GetParameter", f"arn:{part}:ssm:{region}::parameter/aws/service/*"),
            allow("ReadPrices", "pricing:GetProducts", "*"),
            allow("ListInstanceProfiles", "iam:ListInstanceProfiles", "*"),
            allow("ReadInstanceProfiles", "iam:GetInstanceProfile", profiles),
        ),
    }
