"""Karpenter on a cluster (aws/karpenter-provider-aws charts and docs): what pulumi-eks does not provide
(its issue #1114).

The node role and its access entry, the controller role with its six policies and a Pod Identity
association, the SQS interruption queue with its five EventBridge rules, and the two Helm releases:
`karpenter-crd` first, then `karpenter` with CRDs skipped. The controller's values are exactly the
plan's (DRA settings, StaticCapacity gate, the stack's overrides) plus the cluster and queue names;
upgrades reset values and apply the declared ones, so no stale `ignoreDRARequests: true` survives.

The controller reads its region from `AWS_REGION`, which EKS's Pod Identity webhook injects; it
does not need IMDS, so the system nodes keep a hop limit of 1.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from eks_devices import answers, iam
from eks_devices.core.knowledge.charts import CHARTS
from eks_devices.core.model import KarpenterPlan
from eks_devices.core.names import KARPENTER_SERVICE_ACCOUNT, KARPENTER_TYPE
from eks_devices.inputs import name_problems, reject

NAMESPACE = CHARTS["karpenter"].namespace
SERVICE_ACCOUNT = KARPENTER_SERVICE_ACCOUNT

# EventBridge rules that feed the interruption queue: (short name, source, detail-type), as in
# aws/karpenter-provider-aws v1.14.1 getting-started `cloudformation.yaml`.
INTERRUPTION_EVENTS: tuple[tuple[str, str, str], ...] = (
    ("health", "aws.health", "AWS Health Event"),
    ("spot-interruption", "aws.ec2", "EC2 Spot Instance Interruption Warning"),
    ("rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"),
    ("state-change", "aws.ec2", "EC2 Instance State-change Notification"),
    ("capacity-reservation-interruption", "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
)


def controller_values(plan_values: dict[str, Any], cluster_name: str, queue_name: str) -> dict[str, Any]:
    """The controller release's values: the plan's, with `settings.clusterName` and
    `settings.interruptionQueue` set (nothing else is added)."""
    settings = {**(plan_values.get("settings") or {}), "clusterName": cluster_name, "interruptionQueue": queue_name}
    return {**plan_values, "settings": settings}


def queue_policy(queue_arn: str) -> dict[str, Any]:
    """EventBridge and SQS may send; nobody may use the queue without TLS."""
    return {"Version": "2012-10-17", "Id": "KarpenterInterruptionQueue", "Statement": [
        {"Sid": "EventsSend", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": queue_arn,
         "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}},
        {"Sid": "DenyHTTP", "Effect": "Deny", "Action": "sqs:*", "Resource": queue_arn, "Principal": "*",
         "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
    ]}


POD_IDENTITY_AGENT = "eks-pod-identity-agent"  # the EKS add-on that serves Pod Identity credentials


@dataclass(frozen=True)
class KarpenterArgs:
    """What Karpenter takes: the plan's Karpenter settings (`plan.karpenter`: chart version, values
    with the DRA settings), the cluster (`cluster_name` as an output to order on, its
    `physical_cluster_name` for the queue and role descriptions), the region, the cluster's
    Kubernetes provider, what the controller must wait for (system nodes), and AWS tags."""

    plan: KarpenterPlan
    cluster_name: pulumi.Input[str]
    physical_cluster_name: str
    region: str
    k8s_provider: pulumi.ProviderResource
    controller_depends_on: Sequence[pulumi.Resource] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    # the cluster's EKS Pod Identity Agent add-on when the caller made it (the toolkit's Cluster does, for
    # the VPC CNI as well); None: Karpenter installs it
    pod_identity_agent: pulumi.Resource | None = None
    ssm_access: bool = False  # AmazonSSMManagedInstanceCore on the node role (cluster.ssmAccess)


class Karpenter(pulumi.ComponentResource):
    """Karpenter's AWS side and its Helm releases for one cluster."""

    pulumi_type = KARPENTER_TYPE  # the type token; Pulumi's component analyzer reads it from the class

    node_role: aws.iam.Role
    controller_role: aws.iam.Role
    queue: aws.sqs.Queue
    crd_release: k8s.helm.v3.Release
    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: KarpenterArgs, opts: pulumi.ResourceOptions | None = None):
        problems = name_problems(name)
        if not isinstance(args.plan, KarpenterPlan):
            problems.append(("plan", f"given {type(args.plan).__name__}; accepted: the Plan's karpenter "
                                     "settings (plan.karpenter, present in karpenter mode)"))
        if problems:
            reject("Karpenter", problems)
        answers.check_mocks("Karpenter", [(answers.CALLER_IDENTITY, {})])
        super().__init__(KARPENTER_TYPE, name, None, opts)
        plan, cluster_name, region, tags = args.plan, args.cluster_name, args.region, dict(args.tags)
        spec_cluster_name, k8s_provider = args.physical_cluster_name, args.k8s_provider
        controller_depends_on = list(args.controller_depends_on)
        child = pulumi.ResourceOptions(parent=self)
        nodes = iam.service_role(f"{name}-node", "ec2.amazonaws.com", iam.node_policies(args.ssm_access), region=region,
                                 description=f"Nodes Karpenter launches for {spec_cluster_name}", tags=tags, opts=child)
        self.node_role = nodes.role
        node_access = aws.eks.AccessEntry(f"{name}-node-access", cluster_name=cluster_name,
                                          principal_arn=nodes.role.arn, type="EC2_LINUX", tags=tags, opts=child)
        # SQS queue names stop at 80 characters; longer cluster names get a generated name.
        self.queue = aws.sqs.Queue(f"{name}-interruption",
                                   name=spec_cluster_name if len(spec_cluster_name) <= 80 else None,
                                   message_retention_seconds=300, sqs_managed_sse_enabled=True, tags=tags, opts=child)
        aws.sqs.QueuePolicy(f"{name}-interruption-policy", queue_url=self.queue.url,
                            policy=self.queue.arn.apply(lambda arn: json.dumps(queue_policy(arn))), opts=child)
        for short, source, detail in INTERRUPTION_EVENTS:
            rule = aws.cloudwatch.EventRule(f"{name}-{short}", description=f"Karpenter interruption: {detail}",
                                            event_pattern=json.dumps({"source": [source], "detail-type": [detail]}),
                                            tags=tags, opts=child)
            aws.cloudwatch.EventTarget(f"{name}-{short}-target", rule=rule.name, arn=self.queue.arn,
                                       target_id="KarpenterInterruptionQueueTarget", opts=child)
        controller = self._controller_role(name, cluster_name, spec_cluster_name, region, nodes.role, tags, child)
        self.controller_role = controller.role
        agent = args.pod_identity_agent or aws.eks.Addon(
            f"{name}-pod-identity-agent", cluster_name=cluster_name, addon_name=POD_IDENTITY_AGENT, tags=tags,
            opts=child)
        association = aws.eks.PodIdentityAssociation(
            f"{name}-controller-identity", cluster_name=cluster_name, namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT, role_arn=controller.role.arn, tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=controller.ready))
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=k8s_provider)
        self.crd_release = self._release(f"{name}-crd-release", plan, "karpenter-crd", None, k8s_opts)
        values = pulumi.Output.all(cluster_name, self.queue.name).apply(
            lambda args: controller_values(plan.values, args[0], args[1]))
        self.release = self._release(f"{name}-release", plan, "karpenter", values, pulumi.ResourceOptions.merge(
            k8s_opts, pulumi.ResourceOptions(depends_on=[self.crd_release, association, agent, node_access,
                                                         *nodes.ready, *controller_depends_on])))
        self.register_outputs({"nodeRoleArn": self.node_role.arn, "controllerRoleArn": self.controller_role.arn,
                               "interruptionQueueName": self.queue.name})

    def _controller_role(self, name: str, cluster_name: pulumi.Input[str], physical_cluster_name: str, region: str,
                         node_role: aws.iam.Role, tags: dict[str, str],
                         child: pulumi.ResourceOptions) -> iam.ServiceRole:
        """The controller's role (assumed through Pod Identity) with its six managed policies."""
        role = aws.iam.Role(f"{name}-controller",
                            assume_role_policy=json.dumps(iam.pod_identity_trust(
                                physical_cluster_name, NAMESPACE, SERVICE_ACCOUNT)),
                            description="Karpenter controller (EKS Pod Identity)", tags=tags, opts=child)
        account = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self)).account_id
        documents = pulumi.Output.all(cluster_name, account, node_role.arn, self.queue.arn).apply(
            lambda args: iam.karpenter_controller_policies(
                args[0], region, answers.answered(answers.CALLER_IDENTITY, "accountId", args[1]), args[2], args[3]))
        attachments: list[pulumi.Resource] = []
        for short in iam.KARPENTER_POLICY_NAMES:
            policy = aws.iam.Policy(f"{name}-{short}", description=f"Karpenter controller: {short}",
                                    policy=documents.apply(lambda docs, short=short: json.dumps(docs[short])),
                                    tags=tags, opts=child)
            attachments.append(aws.iam.RolePolicyAttachment(f"{name}-{short}-attachment", role=role.name,
                                                            policy_arn=policy.arn, opts=child))
        return iam.ServiceRole(role, attachments)

    @staticmethod
    def _release(resource_name: str, plan: KarpenterPlan, chart_key: str, values: pulumi.Input[dict[str, Any]] | None,
                 opts: pulumi.ResourceOptions) -> k8s.helm.v3.Release:
        """A Helm release with reset-then-apply upgrades: the chart's defaults plus exactly `values`."""
        chart = CHARTS[chart_key]
        return k8s.helm.v3.Release(
            resource_name, name=chart_key, chart=plan.charts.get(chart_key, chart.reference), version=plan.version,
            namespace=chart.namespace, values=values or {}, reset_values=True, reuse_values=False,
            skip_crds=chart_key == "karpenter", opts=opts)
