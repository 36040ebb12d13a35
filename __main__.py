"""The Pulumi program: stack config → Spec → Plan → Platform → exports."""

import pulumi

from eks_devices import Platform
from eks_devices.cli.report import plan_data
from eks_devices.identity import renamed
from eks_devices.platform import PROGRAM_NAME
from eks_devices.program import device_plan_output, plan_for_stack

plan = plan_for_stack()
# stacks deployed before names stopped following the cluster's know every resource by the cluster's
# name: the aliases make the first `pulumi up` after upgrading a rename in the state, nothing in AWS
platform = Platform.from_plan(PROGRAM_NAME, plan, opts=renamed(plan.spec.cluster.name, PROGRAM_NAME))
network, cluster = platform.network, platform.cluster

pulumi.export("clusterName", cluster.name)
pulumi.export("kubeconfig", pulumi.Output.secret(cluster.eks.kubeconfig_json))
pulumi.export("vpcId", network.vpc_id)
pulumi.export("privateSubnetIds", network.private_subnet_ids)
pulumi.export("publicSubnetIds", network.public_subnet_ids)
pulumi.export("privateSubnetsByZone", network.private_subnets_by_zone)
pulumi.export("efaSecurityGroupId", network.efa_security_group_id)
pulumi.export("nodeRoleName", cluster.node_role_name)
pulumi.export("nodeRoleArn", cluster.node_role_arn)
if cluster.karpenter is not None:
    pulumi.export("interruptionQueueName", cluster.interruption_queue_name)
    pulumi.export("karpenterControllerRoleArn", cluster.controller_role_arn)
    pulumi.export("karpenterNodeRoleArn", cluster.node_role_arn)
# the plan, and the stack config it came from: `eks-devices diff STACK --against <this output as JSON>`
pulumi.export("devicePlan", device_plan_output(plan_data(plan)))
