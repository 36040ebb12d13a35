"""Add eks-devices' node pools, device software and claims to an EKS cluster (managed node groups)
the team already runs.

Nothing here creates a VPC or a cluster: the program states what the cluster runs (its name,
Kubernetes version and mode) and passes what it has (node role, subnets, security groups, a
Kubernetes provider from its kubeconfig), all from the team's stack configuration (`existing:*`).
"""
import pulumi
import pulumi_kubernetes as k8s

from eks_devices import ClusterDevices, ClusterDevicesArgs

existing = pulumi.Config("existing")
cluster_name = existing.require("clusterName")
devices = ClusterDevices(cluster_name, ClusterDevicesArgs(
    region=pulumi.Config("aws").require("region"),
    cluster={"name": cluster_name, "version": existing.require("version"), "mode": "managed-node-groups"},
    node_pools={
        "l40s": {"replicas": 2, "instanceTypes": ["g6e.12xlarge"]},  # auto: the NVIDIA DRA driver
        "a10g": {"replicas": 1, "instanceTypes": ["g5.2xlarge"], "devices": {"nvidia": "device-plugin"}},
    },
    claims={"two-gpus": {"pools": ["l40s"], "namespace": "default", "gpus": {"count": 2}}},
    k8s_provider=k8s.Provider("existing", kubeconfig=existing.require_secret("kubeconfig")),
    node_role_name=existing.require("nodeRoleName"), node_role_arn=existing.require("nodeRoleArn"),
    private_subnet_ids=existing.require_object("privateSubnetIds"),
    private_subnets_by_zone=existing.require_object("privateSubnetsByZone"),
    cluster_security_group_id=existing.require("clusterSecurityGroupId"),
    efa_security_group_id=existing.require("efaSecurityGroupId")))
pulumi.export("nodeGroups", devices.node_pools.physical_names)
pulumi.export("claims", devices.claims.claims)
