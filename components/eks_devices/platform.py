"""One stack's platform: the network, the cluster on it, then the node pools, the device software
and the declared claims — every piece read from the plan, none of them re-deciding it."""

from __future__ import annotations

import pulumi

from eks_devices.claims import ClaimTemplates
from eks_devices.cluster import Cluster, endpoint_args
from eks_devices.core.model import Plan
from eks_devices.device_software import DeviceSoftware
from eks_devices.network import Network
from eks_devices.node_pools import NodePoolInputs, NodePools


class Platform(pulumi.ComponentResource):
    """Everything `pulumi up` builds for a stack. Its children are named after the cluster."""

    network: Network
    cluster: Cluster
    node_pools: NodePools
    device_software: DeviceSoftware
    claims: ClaimTemplates

    def __init__(self, name: str, plan: Plan, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-devices:index:Platform", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        spec = plan.spec
        self.plan = plan
        endpoint_args(spec.cluster.endpoint)  # an unreachable API server is refused before anything is created
        self.network = Network(name, spec.network, cluster_name=spec.cluster.name, tags=spec.cluster.tags, opts=child,
                               required_zones=spec.pinned_zones)
        self.cluster = cluster = Cluster(name, plan, self.network, opts=child)
        self.node_pools = NodePools(name, plan, NodePoolInputs(
            cluster_name=cluster.name, k8s_provider=cluster.k8s_provider,
            node_role_name=cluster.node_role_name, node_role_arn=cluster.node_role_arn,
            private_subnet_ids=self.network.private_subnet_ids,
            private_subnets_by_zone=self.network.private_subnets_by_zone,
            public_subnets_by_zone=self.network.public_subnets_by_zone,
            efa_security_group_id=self.network.efa_security_group_id,
            cluster_security_group_id=cluster.cluster_security_group_id,
            discovery_tag=spec.cluster.name, depends_on=list(cluster.ready)), opts=child)
        self.device_software = DeviceSoftware(name, plan, cluster.k8s_provider, list(cluster.ready), opts=child)
        # claims name DeviceClasses that the device software (charts or the toolkit) creates
        self.claims = ClaimTemplates(name, plan, cluster.k8s_provider, [self.device_software], opts=child)
        self.register_outputs({"clusterName": cluster.name, "vpcId": self.network.vpc_id})
