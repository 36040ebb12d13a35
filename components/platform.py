"""One stack's platform: the network, then the cluster on it, both read from the plan."""

from __future__ import annotations

import pulumi

from .cluster import Cluster, endpoint_args
from .network import Network
from .plan import Plan


class Platform(pulumi.ComponentResource):
    """Everything `pulumi up` builds for a stack. Its children are named after the cluster."""

    network: Network
    cluster: Cluster

    def __init__(self, name: str, plan: Plan, opts: pulumi.ResourceOptions | None = None):
        super().__init__("eks-devices:index:Platform", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        spec = plan.spec
        self.plan = plan
        endpoint_args(spec.cluster.endpoint)  # an unreachable API server is refused before anything is created
        self.network = Network(name, spec.network, cluster_name=spec.cluster.name, tags=spec.cluster.tags, opts=child)
        self.cluster = Cluster(name, plan, self.network, opts=child)
        self.register_outputs({"clusterName": self.cluster.name, "vpcId": self.network.vpc_id})
