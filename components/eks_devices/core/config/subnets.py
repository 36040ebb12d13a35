"""How a created VPC's CIDR is cut into private and public subnets per zone (pure)."""

from __future__ import annotations

import ipaddress
import math

SMALLEST_SUBNET = 28  # AWS refuses subnets smaller than /28


def subnet_layout(cidr: str, zones: int) -> list[tuple[str, str]]:
    """(private, public) CIDR per zone. The VPC is cut in eight: private subnets take one eighth
    each (up to six zones, room for pods); the last quarter is shared out among the public
    subnets, which only hold NAT gateways and load balancers (a sixteenth of the VPC at most)."""
    vpc = ipaddress.ip_network(cidr)
    private = list(vpc.subnets(new_prefix=vpc.prefixlen + 3))[:zones]
    public_range = list(vpc.subnets(new_prefix=vpc.prefixlen + 2))[3]
    public_prefix = max(public_range.prefixlen + math.ceil(math.log2(zones)), vpc.prefixlen + 4)
    if zones > 6 or public_prefix > SMALLEST_SUBNET:
        raise ValueError(f"network.cidr {cidr} is too small for {zones} zones of public and private subnets "
                         f"(use a larger block, e.g. a /{vpc.prefixlen - 1}, or fewer zones)")
    public = list(public_range.subnets(new_prefix=public_prefix))[:zones]
    return [(str(p), str(q)) for p, q in zip(private, public, strict=True)]


def pick_zones(region_zones: list[str], pinned: list[str], count: int) -> list[str]:
    """The zones a VPC created from a zone count spans: the zones pools are pinned to first, then
    the region's others in name order, `count` in all, sorted (the program and preflight agree)."""
    rest = [z for z in sorted(region_zones) if z not in pinned]
    return sorted([*sorted(set(pinned)), *rest][:count])
