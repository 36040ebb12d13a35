"""Security defaults a reviewer expects (EKS Best Practices Guide, "Cluster access management",
"Auditing and logging", "Network security"): warnings where a stack opts out of them."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, at, rule, warning


@rule("public-endpoint-open", "a public API endpoint open to the whole internet (warning)")
def _public_endpoint_open(plan: Plan) -> Iterator[Verdict]:
    for cidr in plan.spec.cluster.endpoint.public_access_cidrs:
        if ipaddress.ip_network(cidr, strict=False).prefixlen == 0:
            yield warning("cluster.endpoint.publicAccessCidrs",
                          f"the public API endpoint accepts connections from {cidr}, the whole internet",
                          "list the CIDRs of your offices, VPN or CI runners in cluster.endpoint.publicAccessCidrs, "
                          "or keep only the private endpoint")


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
