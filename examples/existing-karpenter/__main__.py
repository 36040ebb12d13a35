"""Add eks-devices' NodePools, device software and claims to an EKS cluster that runs its own
Karpenter: the program states the release's version and settings, and the rules check the pools
against them (a dynamic DRA pool needs Karpenter 1.15 with the DRA gate of each driver it runs)."""
import pulumi
import pulumi_kubernetes as k8s

from eks_devices import ClusterDevices, ClusterDevicesArgs

existing = pulumi.Config("existing")
cluster_name = existing.require("clusterName")
devices = ClusterDevices(cluster_name, ClusterDevicesArgs(
    region=pulumi.Config("aws").require("region"),
    cluster={"name": cluster_name, "version": existing.require("version"), "mode": "karpenter",
             "karpenter": {"version": existing.require("karpenterVersion"),
                           "settings": existing.require_object("karpenterSettings")}},
    node_pools={
        "h100": {"instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}},  # NVIDIA and EFA DRA
        "l4": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}},
    },
    claims={"gpu-and-efa": {"pools": ["h100"], "namespace": "training", "gpus": {"count": 1},
                            "efa": {"count": 1}}},
    k8s_provider=k8s.Provider("existing", kubeconfig=existing.require_secret("kubeconfig")),
    node_role_name=existing.require("nodeRoleName"), node_role_arn=existing.require("nodeRoleArn"),
    private_subnet_ids=existing.require_object("privateSubnetIds"),
    private_subnets_by_zone=existing.require_object("privateSubnetsByZone"),
    cluster_security_group_id=existing.require("clusterSecurityGroupId"),
    efa_security_group_id=existing.require("efaSecurityGroupId")))
pulumi.export("nodePools", devices.node_pools.physical_names)
pulumi.export("claims", devices.claims.claims)
