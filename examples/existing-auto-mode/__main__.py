"""Add eks-devices' NodePools, DeviceClasses and claims to an EKS Auto Mode cluster the team already
runs: Auto Mode brings its own drivers and plugins, so no device software is installed."""
import pulumi
import pulumi_kubernetes as k8s

from eks_devices import ClusterDevices, ClusterDevicesArgs

existing = pulumi.Config("existing")
cluster_name = existing.require("clusterName")
devices = ClusterDevices(cluster_name, ClusterDevicesArgs(
    region=pulumi.Config("aws").require("region"),
    cluster={"name": cluster_name, "version": existing.require("version"), "mode": "auto-mode"},
    node_pools={
        "l40s": {"instanceTypes": ["g6e.12xlarge"]},  # auto: Auto Mode's NVIDIA DRA driver on 1.36
        "inf2": {"instanceTypes": ["inf2.xlarge"]},  # Neuron: Auto Mode's device plugin
    },
    claims={"one-gpu": {"pools": ["l40s"], "namespace": "default", "gpus": {"count": 1}}},
    k8s_provider=k8s.Provider("existing", kubeconfig=existing.require_secret("kubeconfig")),
    node_role_name=existing.require("nodeRoleName"), node_role_arn=existing.require("nodeRoleArn"),
    private_subnet_ids=existing.require_object("privateSubnetIds"),
    private_subnets_by_zone=existing.require_object("privateSubnetsByZone"),
    cluster_security_group_id=existing.require("clusterSecurityGroupId"),
    efa_security_group_id=existing.require("efaSecurityGroupId")))
pulumi.export("nodePools", devices.node_pools.physical_names)
pulumi.export("claims", devices.claims.claims)
