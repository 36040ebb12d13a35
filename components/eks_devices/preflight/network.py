"""Network checks: every subnet the pools use reaches the internet the way its nodes need, and the
pools' zones offer their instance types.

Multi-interface EFA nodes get no public IP, so on a subnet whose default route is an internet
gateway they join the cluster but cannot pull images (EKS User Guide, "Manage hardware devices on Amazon EKS"
and its EFA page). Private subnets need a
default route through a NAT gateway, or the VPC endpoints listed in `REQUIRED_ENDPOINTS` (and then
only images in ECR can be pulled: the device software from other registries needs a mirror).
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from typing import Any

from eks_devices.core.knowledge import charts
from eks_devices.core.manifests.nodes import uses_efa
from eks_devices.core.model import PoolPlan
from eks_devices.core.vocabulary import reserves
from eks_devices.preflight.model import CheckResult, Context

EGRESS = "network.egress"
ZONES = "network.zones"

# The endpoints nodes need when their subnet has no default route (decided here; see docs/preflight.md).
REQUIRED_ENDPOINTS: dict[str, str] = {
    "ec2": "the VPC CNI attaches network and EFA interfaces through the EC2 API",
    "ecr.api": "ECR authentication and image manifests",
    "ecr.dkr": "ECR image pulls",
    "s3": "ECR image layers (a gateway endpoint on the subnet's route table)",
    "sts": "IAM roles for service accounts and EKS Pod Identity",
}
ROUTE_TARGETS = ("TransitGatewayId", "NetworkInterfaceId", "InstanceId", "VpcPeeringConnectionId",
                 "LocalGatewayId", "CarrierGatewayId", "CoreNetworkArn", "GatewayId")


def route_table_for(subnet_id: str, tables: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The subnet's explicitly associated route table, else the VPC's main table."""
    main = None
    for table in tables:
        for assoc in table.get("Associations") or []:
            if assoc.get("SubnetId") == subnet_id:
                return table
            if assoc.get("Main"):
                main = table
    return main


def default_route(table: dict[str, Any] | None) -> tuple[str, str]:
    """(kind, target) of the 0.0.0.0/0 route: nat | igw | blackhole | other | none."""
    for route in (table or {}).get("Routes") or []:
        if route.get("DestinationCidrBlock") != "0.0.0.0/0":
            continue
        if route.get("NatGatewayId"):
            target = route["NatGatewayId"]
            kind = "nat"
        else:
            target = next((str(route[k]) for k in ROUTE_TARGETS if route.get(k)), "unknown")
            kind = "igw" if target.startswith("igw-") else "other"
        return ("blackhole", target) if route.get("State") == "blackhole" else (kind, target)
    return "none", ""


def egress(ctx: Context) -> list[CheckResult]:
    """Each brought subnet exists in the VPC and routes to the internet as its pools need."""
    network = ctx.spec.network
    if not ctx.brings_vpc:
        return [CheckResult(EGRESS, "stack VPC", "not-run",
                            "not applicable: the stack creates its own VPC, whose private subnets route through "
                            f"NAT as network.natGateways ({network.nat_gateways}) says; `eks-devices preview` "
                            "checks that")]
    listed = {sid: "public" for sid in network.public_subnet_ids}
    listed.update({sid: "private" for sid in network.private_subnet_ids})
    found = ctx.aws.subnets(tuple(listed))
    results: list[CheckResult] = []
    usable: dict[str, str] = {}
    for sid, kind in listed.items():
        subnet = found.get(sid)
        if subnet is None:
            results.append(CheckResult(EGRESS, f"subnet {sid}", "fail",
                                       f"network.{kind}SubnetIds names {sid}, which does not exist in {ctx.region}",
                                       "correct the subnet id (aws ec2 describe-subnets)"))
        elif subnet.get("VpcId") != network.vpc_id:
            results.append(CheckResult(EGRESS, f"subnet {sid}", "fail",
                                       f"{sid} is in {subnet.get('VpcId')}, not network.vpcId {network.vpc_id}",
                                       "list only subnets of the VPC named by network.vpcId"))
        else:
            usable[sid] = kind
    users: dict[str, list[PoolPlan]] = defaultdict(list)
    for pool in ctx.plan.pools.values():
        subnets = ctx.pool_subnets(pool)
        if not subnets:
            pinned = pool.config.availability_zone
            kind = pool.config.subnets
            results.append(CheckResult(EGRESS, f"pool {pool.name}", "fail",
                                       f"none of network.{kind}SubnetIds exists in network.vpcId"
                                       + (f" in the pool's zone {pinned}" if pinned else ""),
                                       f"list a {kind} subnet{' in that zone' if pinned else ''} in "
                                       f"network.{kind}SubnetIds, or change the pool's "
                                       + ("availabilityZone" if pinned else "subnets")))
        for subnet in subnets:
            users[subnet["SubnetId"]].append(pool)
    checked = [sid for sid, kind in usable.items() if kind == "private" or users.get(sid)]
    if checked:
        tables = ctx.aws.route_tables(str(network.vpc_id))
        for sid in checked:
            results.append(_subnet(ctx, found[sid], usable[sid], users.get(sid, []), tables))
    return results


def _subject(subnet: dict[str, Any], pools: list[PoolPlan]) -> str:
    on = ", ".join(p.name for p in pools) if pools else "cluster and system nodes"
    return f"subnet {subnet['SubnetId']} ({subnet.get('AvailabilityZone')}; {on})"


def _subnet(ctx: Context, subnet: dict[str, Any], kind: str, pools: list[PoolPlan],
            tables: list[dict[str, Any]]) -> CheckResult:
    sid = subnet["SubnetId"]
    subject = _subject(subnet, pools)
    table = route_table_for(sid, tables)
    route, target = default_route(table)
    efa_pools = [p.name for p in pools if uses_efa(p)]
    if route == "igw":
        if efa_pools:
            return CheckResult(EGRESS, subject, "fail",
                               f"EFA pool(s) {', '.join(efa_pools)} would land on {sid}, whose default route goes to "
                               f"internet gateway {target}: multi-interface EFA nodes get no public IP, so they "
                               "join but cannot pull images",
                               "put EFA pools on private subnets whose 0.0.0.0/0 route is a NAT gateway")
        if kind == "private":
            return CheckResult(EGRESS, subject, "warn",
                               f"listed in network.privateSubnetIds but routes 0.0.0.0/0 to internet gateway "
                               f"{target}: it is a public subnet",
                               "list it under publicSubnetIds and give the private subnets a NAT route")
        if not subnet.get("MapPublicIpOnLaunch"):
            return CheckResult(EGRESS, subject, "warn",
                               f"routes to internet gateway {target} but gives instances no public IP, so nodes "
                               "cannot reach the internet", "enable auto-assign public IPv4 on the subnet, or use "
                               "private subnets with a NAT route")
        return CheckResult(EGRESS, subject, "pass", f"public subnet: 0.0.0.0/0 → {target}, public IPs on launch")
    if route == "nat":
        return _through_nat(ctx, subject, target, tables)
    if route == "blackhole":
        return CheckResult(EGRESS, subject, "fail",
                           f"the default route to {target} is a blackhole (its target was deleted)",
                           "replace the 0.0.0.0/0 route with one through a NAT gateway")
    if route == "other":
        return CheckResult(EGRESS, subject, "warn",
                           f"0.0.0.0/0 goes to {target}; whether that reaches the internet cannot be seen from here",
                           "make sure the egress path reaches ECR, S3 and the image registries, or route "
                           "through a NAT gateway")
    return _through_endpoints(ctx, subject, subnet, pools, table)


def _through_nat(ctx: Context, subject: str, nat_id: str, tables: list[dict[str, Any]]) -> CheckResult:
    nat = ctx.aws.nat_gateways((nat_id,)).get(nat_id)
    if nat is None or nat.get("State") != "available":
        state = nat.get("State") if nat else "missing"
        return CheckResult(EGRESS, subject, "fail", f"the default route uses NAT gateway {nat_id}, which is {state}",
                           "point 0.0.0.0/0 at an available NAT gateway")
    if nat.get("ConnectivityType") == "private":
        return CheckResult(EGRESS, subject, "fail",
                           f"the default route uses private NAT gateway {nat_id}, which gives no internet access",
                           "route 0.0.0.0/0 through a public NAT gateway")
    shut_out = _endpoint_refuses(ctx, subject, nat_id, nat)
    if shut_out is not None:
        return shut_out
    if nat.get("AvailabilityMode") == "regional":
        return _regional_nat(subject, nat_id, nat, tables)
    nat_route, nat_target = default_route(route_table_for(str(nat.get("SubnetId")), tables))
    if nat_route != "igw":
        return CheckResult(EGRESS, subject, "fail",
                           f"NAT gateway {nat_id} sits in subnet {nat.get('SubnetId')}, which has no internet "
                           "gateway route, so traffic through it cannot leave the VPC",
                           "place the NAT gateway in a public subnet (0.0.0.0/0 → internet gateway)")
    return CheckResult(EGRESS, subject, "pass",
                       f"0.0.0.0/0 → {nat_id} (available, in public subnet {nat.get('SubnetId')} → {nat_target})")


def _endpoint_refuses(ctx: Context, subject: str, nat_id: str, nat: dict[str, Any]) -> CheckResult | None:
    """With the private endpoint off, nodes reach the API server from the NAT gateway's public
    addresses: a fail when publicAccessCidrs leaves one out (rule endpoint-reachable-from-nodes)."""
    endpoint = ctx.plan.spec.cluster.endpoint
    if endpoint.private_access:
        return None
    cidrs = [ipaddress.ip_network(c, strict=False) for c in endpoint.public_access_cidrs]
    addresses = [a["PublicIp"] for a in nat.get("NatGatewayAddresses") or [] if a.get("PublicIp")]
    outside = [a for a in addresses
               if not any(ipaddress.ip_address(a) in c for c in cidrs if c.version == ipaddress.ip_address(a).version)]
    if not outside:
        return None
    return CheckResult(EGRESS, subject, "fail",
                       f"cluster.endpoint.privateAccess is false and NAT gateway {nat_id} leaves from "
                       f"{', '.join(outside)}, which publicAccessCidrs does not include: its nodes lose the API server",
                       "set cluster.endpoint.privateAccess: true, or add "
                       + ", ".join(f"{a}/32" for a in outside) + " to cluster.endpoint.publicAccessCidrs")


def _regional_nat(subject: str, nat_id: str, nat: dict[str, Any], tables: list[dict[str, Any]]) -> CheckResult:
    """A regional NAT gateway sits in no subnet: EC2 gives it a route table of its own whose default
    route is the VPC's internet gateway. Judge that table when the VPC's listing shows it."""
    own = next((t for t in tables if t.get("RouteTableId") == nat.get("RouteTableId")), None)
    if own is None:
        return CheckResult(EGRESS, subject, "pass",
                           f"0.0.0.0/0 → {nat_id} (regional NAT gateway, available; it leaves through the VPC's "
                           "internet gateway)")
    nat_route, nat_target = default_route(own)
    if nat_route != "igw":
        return CheckResult(EGRESS, subject, "fail",
                           f"regional NAT gateway {nat_id} has no internet gateway route in its route table "
                           f"{own.get('RouteTableId')}, so traffic through it cannot leave the VPC",
                           "give the NAT gateway's route table a 0.0.0.0/0 route to the VPC's internet gateway")
    return CheckResult(EGRESS, subject, "pass",
                       f"0.0.0.0/0 → {nat_id} (regional NAT gateway, available; its route table "
                       f"{own.get('RouteTableId')} → {nat_target})")


def _has_endpoint(endpoints: list[dict[str, Any]], name: str, table_id: str | None) -> bool:
    """An available endpoint for `name` that this subnet's traffic reaches: a gateway endpoint on its
    route table, or an interface endpoint with private DNS (without it the service's public name,
    which nodes use, still resolves to public addresses; S3 interface endpoints included)."""
    for ep in endpoints:
        if ep.get("ServiceName") != name or str(ep.get("State", "")).lower() != "available":
            continue
        if ep.get("VpcEndpointType") == "Gateway":
            if table_id in (ep.get("RouteTableIds") or []):
                return True
        elif ep.get("PrivateDnsEnabled"):
            return True
    return False


def _registries(ctx: Context, pools: list[PoolPlan], private: bool) -> dict[str, str]:
    """Release → registry for the images outside ECR that nodes on this subnet would pull."""
    keys = {key for p in pools for key in p.releases.values()}
    if private and ctx.plan.karpenter is not None:
        keys.add("karpenter")
    return {k: registry for k in sorted(keys) if (registry := charts.CHARTS[k].registry)}


def _through_endpoints(ctx: Context, subject: str, subnet: dict[str, Any], pools: list[PoolPlan],
                       table: dict[str, Any] | None) -> CheckResult:
    endpoints = ctx.aws.vpc_endpoints(str(subnet.get("VpcId")))
    table_id = (table or {}).get("RouteTableId")
    missing = [svc for svc in REQUIRED_ENDPOINTS
               if not _has_endpoint(endpoints, f"com.amazonaws.{ctx.region}.{svc}", table_id)]
    if missing:
        names = ", ".join(f"com.amazonaws.{ctx.region}.{svc}" for svc in missing)
        return CheckResult(EGRESS, subject, "fail",
                           f"no default route and no usable VPC endpoint for {', '.join(missing)}: nodes here cannot "
                           "pull images or attach interfaces",
                           f"add a 0.0.0.0/0 route through a NAT gateway, or create the endpoints {names} "
                           "(interface endpoints with private DNS; S3 as a gateway on this route table)")
    outside = _registries(ctx, pools, subnet["SubnetId"] in ctx.spec.network.private_subnet_ids)
    if outside:
        listing = ", ".join(f"{key} from {registry}" for key, registry in outside.items())
        return CheckResult(EGRESS, subject, "warn",
                           f"no default route; the VPC endpoints serve ECR, but these images come from outside "
                           f"AWS: {listing}",
                           "add a NAT route, or mirror those images into ECR and point the releases at the "
                           "mirror with eks-devices:helmValues")
    return CheckResult(EGRESS, subject, "pass",
                       f"no default route, but the VPC endpoints for {', '.join(REQUIRED_ENDPOINTS)} exist and the "
                       "pools here pull only from ECR")


def zones(ctx: Context) -> list[CheckResult]:
    """Each pool's zones offer its instance types."""
    types = tuple(sorted({t for p in ctx.plan.pools.values() for t in p.instance_types}))
    if not types:
        return [CheckResult(ZONES, "node pools", "pass", "the stack has no node pools")]
    offered = ctx.aws.offerings(types)
    results = []
    for pool in ctx.plan.pools.values():
        where = ctx.pool_zones(pool)
        subject = f"pool {pool.name}"
        if not where.zones:
            results.append(CheckResult(ZONES, subject, "fail", f"the pool has no zone to land in ({where.source})",
                                       "list subnets in the pool's zone, or fix its availabilityZone"))
            continue
        reserved = reserves(pool.capacity)
        gaps = {t: [z for z in where.zones if z not in offered.get(t, set())] for t in pool.instance_types}
        usable = [z for z in where.zones if any(z not in gaps[t] for t in pool.instance_types)]
        zone_text = f"{', '.join(where.zones)} ({where.source})"
        if not usable:
            results.append(CheckResult(
                ZONES, subject, "warn" if reserved else "fail",
                f"{', '.join(pool.instance_types)} not offered in {zone_text}"
                + ("; the pool draws on reserved capacity, checked under capacity.reservations" if reserved else ""),
                "pick zones that offer the types (aws ec2 describe-instance-type-offerings --location-type "
                "availability-zone) or other instance types"))
            continue
        partial = {t: z for t, z in gaps.items() if z}
        if partial:
            text = "; ".join(f"{t} not offered in {', '.join(z)}" for t, z in sorted(partial.items()))
            results.append(CheckResult(ZONES, subject, "warn", f"{text}; the pool's zones: {zone_text}",
                                       "those types launch only in the other zones; drop them or pin the pool "
                                       "to a zone that offers them"))
        else:
            results.append(CheckResult(ZONES, subject, "pass",
                                       f"{', '.join(pool.instance_types)} offered in {zone_text}"))
    return results
