"""Security defaults a reviewer expects (EKS Best Practices Guide, "Cluster access management",
"Auditing and logging", "Network security"): warnings where a stack opts out of them."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, at, error, rule, warning


@rule("public-endpoint-open", "a public API endpoint open to the whole internet (warning)")
def _public_endpoint_open(plan: Plan) -> Iterator[Verdict]:
    for cidr in plan.spec.cluster.endpoint.public_access_cidrs:
        if open_to_all([cidr]):
            yield warning("cluster.endpoint.publicAccessCidrs",
                          f"the public API endpoint accepts connections from {cidr}, the whole internet",
                          "list the CIDRs of your offices, VPN or CI runners in cluster.endpoint.publicAccessCidrs, "
                          "or keep only the private endpoint")


def open_to_all(cidrs: list[str]) -> bool:
    """Whether the public endpoint's CIDRs admit every address (a /0)."""
    return any(ipaddress.ip_network(c, strict=False).prefixlen == 0 for c in cidrs)


@rule("endpoint-reachable-from-nodes", "nodes reach the API server: a private endpoint, or a public one their "
      "NAT gateways' addresses may use")
def _endpoint_reachable(plan: Plan) -> Iterator[Verdict]:
    """With `privateAccess: false` nodes (kubelet, the VPC CNI, Karpenter) reach the API server only
    through the public endpoint, leaving the VPC from the NAT gateways' public addresses, which
    publicAccessCidrs must then include (EKS API Reference, `VpcConfigRequest.endpointPrivateAccess`).
    The stack's own NAT gateways get
    Elastic IPs when they are created, which no CIDR in the stack file can name beforehand; a brought
    VPC's NAT addresses are for `eks-devices preflight` to check."""
    endpoint = plan.spec.cluster.endpoint
    if endpoint.private_access or not endpoint.public_access_cidrs or open_to_all(endpoint.public_access_cidrs):
        return
    cidrs = ", ".join(endpoint.public_access_cidrs)
    if plan.spec.network.vpc_id is None:
        yield error("cluster.endpoint.privateAccess",
                    f"the private endpoint is off and the public one admits only {cidrs}: the nodes leave the VPC "
                    "from the Elastic IPs of the NAT gateways this stack creates, which those CIDRs cannot "
                    "include, so every node (and Karpenter) loses the API server",
                    "set cluster.endpoint.privateAccess: true (publicAccessCidrs still limits the public endpoint)")
    else:
        yield warning("cluster.endpoint.privateAccess",
                      f"the private endpoint is off and the public one admits only {cidrs}: the nodes reach the API "
                      f"server only if the NAT gateways of {plan.spec.network.vpc_id} leave from those addresses",
                      "set cluster.endpoint.privateAccess: true, or run `eks-devices preflight` (network.egress "
                      "checks the NAT gateways' addresses against publicAccessCidrs)")


@rule("control-plane-logging-off", "control-plane logs switched off (warning)")
def _control_plane_logging_off(plan: Plan) -> Iterator[Verdict]:
    if not plan.spec.cluster.logging:
        yield warning("cluster.logging", "no control-plane log type is enabled: API and audit activity go unrecorded",
                      "set cluster.logging to at least api, audit and authenticator (the default enables all five)")


@rule("pool-public-ips", "accelerator nodes on public subnets get public IPs (warning)")
def _pool_public_ips(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if pool.config.subnets == "public":
            yield warning(at(pool, "subnets"), "the pool's nodes run on public subnets with public IP addresses",
                          "use subnets: private (NAT for egress) and expose workloads through a load balancer")
