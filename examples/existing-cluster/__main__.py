"""Add eks-devices' node pools, device software and claims to an EKS cluster the team already runs.

Nothing here creates a VPC or a cluster: the cluster's name, version and mode, its node role,
subnets, security groups and kubeconfig come from the team's stack configuration (`existing:*`).
"""
import pulumi
import pulumi_kubernetes as k8s

from eks_devices import (
    ClaimTemplates,
    ClaimTemplatesArgs,
    DeviceSoftware,
    DeviceSoftwareArgs,
    NodePools,
    NodePoolsArgs,
    build,
    parse,
)

existing = pulumi.Config("existing")
cluster_name = existing.require("clusterName")
plan = build(parse({
    "aws:region": pulumi.Config("aws").require("region"),
    "eks-devices:cluster": {"name": cluster_name, "version": existing.require("version"),
                            "mode": "managed-node-groups"},
    "eks-devices:nodePools": {
        "l40s": {"replicas": 2, "instanceTypes": ["g6e.12xlarge"]},  # auto: the NVIDIA DRA driver
        "a10g": {"replicas": 1, "instanceTypes": ["g5.2xlarge"], "devices": {"nvidia": "device-plugin"}},
    },
    "eks-devices:claims": {"two-gpus": {"pools": ["l40s"], "namespace": "default", "gpus": {"count": 2}}},
}))
provider = k8s.Provider("existing", kubeconfig=existing.require_secret("kubeconfig"))
pools = NodePools(cluster_name, NodePoolsArgs(
    plan=plan, cluster_name=cluster_name, k8s_provider=provider,
    node_role_name=existing.require("nodeRoleName"), node_role_arn=existing.require("nodeRoleArn"),
    private_subnet_ids=existing.require_object("privateSubnetIds"),
    private_subnets_by_zone=existing.require_object("privateSubnetsByZone"),
    cluster_security_group_id=existing.require("clusterSecurityGroupId"),
    efa_security_group_id=existing.require("efaSecurityGroupId"), discovery_tag=cluster_name))
# DaemonSet-only releases wait for nothing (their pods follow the nodes); a release that runs a Deployment
# would wait for `workload_nodes`, which this cluster's running nodes already are
software = DeviceSoftware(cluster_name, DeviceSoftwareArgs(plan=plan, k8s_provider=provider))
# each claim waits for what it names: its namespace, the toolkit's DeviceClass, the release installing its CRD
claims = ClaimTemplates(cluster_name, ClaimTemplatesArgs(
    plan=plan, k8s_provider=provider, namespaces=software.namespaces, device_classes=software.device_classes,
    releases=software.releases))
pulumi.export("nodeGroups", pools.physical_names)
pulumi.export("claims", claims.claims)
