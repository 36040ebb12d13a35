"""The Network component under Pulumi's mock engine: subnets, NAT and routes, tags, the EFA
security group, a brought VPC; and the subnet layout on its own."""

from __future__ import annotations

import ipaddress
from typing import Any

import pulumi
import pytest

from eks_devices.core.config.stack import ConfigError
from eks_devices.network import DISCOVERY_TAG, INTERNAL_ELB_TAG, PUBLIC_ELB_TAG, Network, NetworkArgs, subnet_layout
from support import engine, stacks

CLUSTER = "net-test"


def _spec(network: dict[str, Any]) -> Any:
    return stacks.spec("auto-mode", name=CLUSTER, network=network)


def _run(network: dict[str, Any], required_zones: tuple[str, ...] = ()) -> engine.Recording:
    spec = _spec(network)

    def program() -> None:
        net = Network("net", NetworkArgs(cluster_name=CLUSTER, config=spec.network, tags={"team": "ml"},
                                         required_zones=required_zones))
        for key in ("vpc_id", "private_subnet_ids", "public_subnet_ids", "private_subnets_by_zone",
                    "public_subnets_by_zone", "efa_security_group_id", "availability_zones"):
            pulumi.export(key, getattr(net, key))

    return engine.run(program, {"aws:region": "us-west-2"}, stack="net")


def _by_id(rec: engine.Recording, type_: str) -> dict[str, engine.Registered]:
    return {r.outputs["id"]: r for r in rec.of_type(type_)}


def _default_route_target(rec: engine.Recording, subnet_id: str) -> dict[str, Any] | None:
    """The 0.0.0.0/0 route of the route table associated with a subnet (None if it has none)."""
    tables = [a.inputs["routeTableId"] for a in rec.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation")
              if a.inputs["subnetId"] == subnet_id]
    assert len(tables) == 1, f"{subnet_id} has {len(tables)} route tables"
    routes = [r.inputs for r in rec.of_type("aws:ec2/route:Route")
              if r.inputs["routeTableId"] == tables[0] and r.inputs["destinationCidrBlock"] == "0.0.0.0/0"]
    assert len(routes) <= 1
    return routes[0] if routes else None


@pytest.fixture(scope="module")
def per_zone() -> engine.Recording:
    return _run({"cidr": "10.42.0.0/16", "availabilityZones": 3, "natGateways": "one-per-az"})


@pytest.fixture(scope="module")
def single() -> engine.Recording:
    return _run({"cidr": "10.42.0.0/16", "availabilityZones": ["us-west-2b", "us-west-2d"], "natGateways": "single"})


@pytest.fixture(scope="module")
def no_nat() -> engine.Recording:
    return _run({"availabilityZones": 2, "natGateways": "none"})


@pytest.fixture(scope="module")
def brought() -> engine.Recording:
    return _run({"vpcId": "vpc-00000123", "privateSubnetIds": ["subnet-000000a1", "subnet-000000a2", "subnet-000000a3"],
                 "publicSubnetIds": ["subnet-000000b1"]})


def _private_subnets(rec: engine.Recording) -> list[engine.Registered]:
    return [s for s in rec.of_type("aws:ec2/subnet:Subnet") if "-private-" in s.name]


def _public_subnets(rec: engine.Recording) -> list[engine.Registered]:
    return [s for s in rec.of_type("aws:ec2/subnet:Subnet") if "-public-" in s.name]


def test_one_subnet_of_each_kind_per_zone(per_zone: engine.Recording) -> None:
    counts = per_zone.counts()
    assert counts["aws:ec2/vpc:Vpc"] == 1
    assert len(_private_subnets(per_zone)) == len(_public_subnets(per_zone)) == 3
    zones = sorted(s.inputs["availabilityZone"] for s in _private_subnets(per_zone))
    assert zones == ["us-west-2a", "us-west-2b", "us-west-2c"] == per_zone.exports["availability_zones"]
    assert sorted(s.inputs["availabilityZone"] for s in _public_subnets(per_zone)) == zones


def test_private_subnets_route_to_their_zones_nat_and_map_no_public_ip(per_zone: engine.Recording) -> None:
    nats = _by_id(per_zone, "aws:ec2/natGateway:NatGateway")
    subnets = _by_id(per_zone, "aws:ec2/subnet:Subnet")
    assert len(nats) == 3
    for subnet in _private_subnets(per_zone):
        assert subnet.inputs["mapPublicIpOnLaunch"] is False
        route = _default_route_target(per_zone, subnet.outputs["id"])
        assert route is not None and "gatewayId" not in route
        nat = nats[route["natGatewayId"]]
        nat_subnet = subnets[nat.inputs["subnetId"]]
        assert "-public-" in nat_subnet.name
        assert nat_subnet.inputs["availabilityZone"] == subnet.inputs["availabilityZone"]


def test_public_subnets_route_to_the_internet_gateway(per_zone: engine.Recording) -> None:
    (igw,) = per_zone.of_type("aws:ec2/internetGateway:InternetGateway")
    for subnet in _public_subnets(per_zone):
        route = _default_route_target(per_zone, subnet.outputs["id"])
        assert route is not None and route.get("gatewayId") == igw.outputs["id"]


def test_subnet_tags_for_load_balancers_and_node_discovery(per_zone: engine.Recording) -> None:
    for subnet in _private_subnets(per_zone):
        tags = subnet.inputs["tags"]
        assert tags[INTERNAL_ELB_TAG] == "1" and tags[DISCOVERY_TAG] == CLUSTER and tags["team"] == "ml"
        assert PUBLIC_ELB_TAG not in tags
    for subnet in _public_subnets(per_zone):
        tags = subnet.inputs["tags"]
        assert tags[PUBLIC_ELB_TAG] == "1" and DISCOVERY_TAG not in tags and INTERNAL_ELB_TAG not in tags


def test_subnet_cidrs_follow_the_layout(per_zone: engine.Recording) -> None:
    private = sorted((s.name, s.inputs["cidrBlock"]) for s in _private_subnets(per_zone))
    public = sorted((s.name, s.inputs["cidrBlock"]) for s in _public_subnets(per_zone))
    assert [(p[1], q[1]) for p, q in zip(private, public, strict=True)] == subnet_layout("10.42.0.0/16", 3)


def test_efa_security_group_allows_all_traffic_to_and_from_itself(per_zone: engine.Recording) -> None:
    (sg,) = per_zone.of_type("aws:ec2/securityGroup:SecurityGroup")
    sg_id = sg.outputs["id"]
    assert per_zone.exports["efa_security_group_id"] == sg_id
    assert sg.inputs["tags"][DISCOVERY_TAG] == CLUSTER
    for kind in ("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
                 "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"):
        (rule,) = per_zone.of_type(kind)
        assert rule.inputs["securityGroupId"] == sg_id
        assert rule.inputs["referencedSecurityGroupId"] == sg_id
        assert rule.inputs["ipProtocol"] == "-1"
        assert "cidrIpv4" not in rule.inputs


def test_outputs_name_subnets_by_zone(per_zone: engine.Recording) -> None:
    by_zone = per_zone.exports["private_subnets_by_zone"]
    for subnet in _private_subnets(per_zone):
        assert by_zone[subnet.inputs["availabilityZone"]] == subnet.outputs["id"]
    public_by_zone = per_zone.exports["public_subnets_by_zone"]
    for subnet in _public_subnets(per_zone):
        assert public_by_zone[subnet.inputs["availabilityZone"]] == subnet.outputs["id"]
    assert sorted(public_by_zone) == sorted(by_zone)
    assert sorted(per_zone.exports["private_subnet_ids"]) == sorted(by_zone.values())
    assert per_zone.exports["vpc_id"] == per_zone.of_type("aws:ec2/vpc:Vpc")[0].outputs["id"]


def test_single_nat_serves_every_zone_and_listed_zones_are_used(single: engine.Recording) -> None:
    (nat,) = single.of_type("aws:ec2/natGateway:NatGateway")
    assert len(single.of_type("aws:ec2/eip:Eip")) == 1
    private = _private_subnets(single)
    assert sorted(s.inputs["availabilityZone"] for s in private) == ["us-west-2b", "us-west-2d"]
    for subnet in private:
        route = _default_route_target(single, subnet.outputs["id"])
        assert route is not None and route["natGatewayId"] == nat.outputs["id"]


def test_without_nat_private_subnets_have_no_default_route(no_nat: engine.Recording) -> None:
    assert not no_nat.of_type("aws:ec2/natGateway:NatGateway")
    for subnet in _private_subnets(no_nat):
        assert _default_route_target(no_nat, subnet.outputs["id"]) is None


def test_a_counted_vpc_takes_the_zones_pools_are_pinned_to() -> None:
    """Pools pinned to us-west-2d: the VPC's three zones are that one and the region's first others."""
    rec = _run({"availabilityZones": 3}, required_zones=("us-west-2d",))
    assert rec.exports["availability_zones"] == ["us-west-2a", "us-west-2b", "us-west-2d"]
    assert sorted({r.inputs["availabilityZone"] for r in rec.of_type("aws:ec2/subnet:Subnet")}) == [
        "us-west-2a", "us-west-2b", "us-west-2d"]
    with pytest.raises(Exception, match="pinned to us-west-2z, which the region does not offer"):
        _run({"availabilityZones": 3}, required_zones=("us-west-2z",))


def test_brought_vpc_creates_no_network_and_tags_its_private_subnets(brought: engine.Recording) -> None:
    created = {"aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/natGateway:NatGateway", "aws:ec2/route:Route",
               "aws:ec2/internetGateway:InternetGateway"}
    assert not created & set(brought.counts())
    tags = brought.of_type("aws:ec2/tag:Tag")
    assert sorted(t.inputs["resourceId"] for t in tags) == ["subnet-000000a1", "subnet-000000a2", "subnet-000000a3"]
    assert {(t.inputs["key"], t.inputs["value"]) for t in tags} == {(DISCOVERY_TAG, CLUSTER)}
    (sg,) = brought.of_type("aws:ec2/securityGroup:SecurityGroup")
    assert sg.inputs["vpcId"] == "vpc-00000123"
    assert brought.exports["vpc_id"] == "vpc-00000123"
    assert brought.exports["public_subnet_ids"] == ["subnet-000000b1"]


def test_brought_subnets_are_mapped_to_the_zones_ec2_reports(brought: engine.Recording) -> None:
    mocks = engine.OfflineMocks("us-west-2")
    expected: dict[str, str] = {}
    for sid in ("subnet-000000a1", "subnet-000000a2", "subnet-000000a3"):
        expected.setdefault(mocks.subnet(sid)["availabilityZone"], sid)
    assert brought.exports["private_subnets_by_zone"] == expected
    assert brought.exports["availability_zones"] == sorted(expected)
    assert brought.exports["public_subnets_by_zone"] == {mocks.subnet("subnet-000000b1")["availabilityZone"]: "subnet-000000b1"}


@pytest.mark.parametrize("prefix", range(16, 25))
@pytest.mark.parametrize("zones", range(1, 7))  # the layout itself also serves one zone
def test_layout_subnets_are_disjoint_inside_the_vpc_and_large_enough(prefix: int, zones: int) -> None:
    cidr = f"10.0.0.0/{prefix}"
    try:
        layout = subnet_layout(cidr, zones)
    except ValueError as exc:
        assert prefix == 24 and zones > 4, exc  # the only combinations too small for /28 public subnets
        return
    vpc = ipaddress.ip_network(cidr)
    nets = [ipaddress.ip_network(c) for pair in layout for c in pair]
    assert len(layout) == zones
    assert all(n.subnet_of(vpc) and n.prefixlen <= 28 for n in nets)
    assert all(not a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1:])
    assert all(ipaddress.ip_network(p).num_addresses >= ipaddress.ip_network(q).num_addresses for p, q in layout)


def test_too_small_a_vpc_is_a_config_problem() -> None:
    with pytest.raises(ConfigError) as info:
        _spec({"cidr": "10.42.0.0/24", "availabilityZones": 5})
    [problem] = info.value.problems
    assert problem.path == "network.cidr" and "too small for 5 zones" in problem.accepted


def test_one_zone_is_a_config_problem() -> None:
    with pytest.raises(ConfigError) as info:
        _spec({"availabilityZones": 1})
    assert [p.path for p in info.value.problems] == ["network.availabilityZones"]
