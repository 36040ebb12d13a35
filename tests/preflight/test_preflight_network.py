"""Network checks under moto: NAT routes, internet-gateway routes on EFA subnets, VPC endpoints,
brought subnets that do not exist, and zones that do not offer a pool's instance type."""

from __future__ import annotations

import boto3

from eks_devices.preflight import CheckResult
from eks_devices.preflight.network import EGRESS, REQUIRED_ENDPOINTS, ZONES
from support import aws, stacks

EFA_POOL = {"replicas": 1, "instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}}
GPU_POOL = {"replicas": 1, "instanceTypes": ["g6e.2xlarge"]}


def egress(session: boto3.Session, vpc: aws.Vpc, pools: dict[str, dict[str, object]], mode: str = "managed-node-groups",
           **network: object) -> list[CheckResult]:
    plan = aws.stack(mode=mode, pools=pools, network={**vpc.network(), **network})
    return aws.check(session, plan, EGRESS)


def test_private_subnets_with_nat_routes_pass(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="nat")
    results = egress(session, vpc, {"train": EFA_POOL, "serve": GPU_POOL})
    private = [r for r in results if any(s in r.subject for s in vpc.private.values())]
    assert len(private) == 2
    assert all(r.status == "pass" for r in results), results
    assert all("→ nat-" in r.detail and "available" in r.detail for r in private)
    assert "train, serve" in private[0].subject or "serve, train" in private[0].subject


def test_private_subnets_without_nat_or_endpoints_fail_naming_the_endpoints(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="none")
    results = egress(session, vpc, {"serve": GPU_POOL})
    failed = [r for r in results if r.status == "fail"]
    assert {r.subject.split()[1] for r in failed} == set(vpc.private.values())
    for r in failed:
        assert "no default route" in r.detail
        assert all(f"com.amazonaws.us-west-2.{svc}" in r.fix for svc in REQUIRED_ENDPOINTS)


def test_endpoints_instead_of_nat_pass_for_ecr_only_software(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="none")
    aws.add_endpoints(session, vpc, tuple(REQUIRED_ENDPOINTS))
    # EFA device plugin only (its image is in EKS's ECR): the endpoints are enough.
    results = egress(session, vpc, {"efa": {"replicas": 1, "instanceTypes": ["trn1.32xlarge"],
                                            "devices": {"neuron": "none", "efa": "device-plugin"}}})
    assert [r.status for r in results] == ["pass", "pass"], results


def test_endpoints_instead_of_nat_warn_about_images_outside_aws(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="none")
    aws.add_endpoints(session, vpc, tuple(REQUIRED_ENDPOINTS))
    results = egress(session, vpc, {"train": EFA_POOL})
    private = [r for r in results if "train" in r.subject]
    assert private and all(r.status == "warn" for r in private)
    assert "nvidia-dra-driver from registry.k8s.io" in private[0].detail


def test_missing_endpoint_fails_and_is_named(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="none")
    aws.add_endpoints(session, vpc, ("ecr.api", "ecr.dkr", "s3", "sts"))
    results = egress(session, vpc, {"serve": GPU_POOL})
    failed = [r for r in results if r.status == "fail"]
    assert failed and all("no usable VPC endpoint for ec2:" in r.detail for r in failed)


def test_s3_interface_endpoint_without_private_dns_does_not_serve_image_layers(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="none")
    aws.add_endpoints(session, vpc, ("ec2", "ecr.api", "ecr.dkr", "sts"))
    session.client("ec2").create_vpc_endpoint(VpcId=vpc.id, ServiceName=f"com.amazonaws.{aws.REGION}.s3",
                                              VpcEndpointType="Interface", SubnetIds=list(vpc.private.values()),
                                              PrivateDnsEnabled=False)
    failed = [r for r in egress(session, vpc, {"serve": GPU_POOL}) if r.status == "fail"]
    assert len(failed) == 2 and all("no usable VPC endpoint for s3:" in r.detail for r in failed)


def test_efa_pool_on_subnet_routed_to_internet_gateway_fails(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="igw")
    results = egress(session, vpc, {"train": EFA_POOL})
    failed = [r for r in results if r.status == "fail"]
    assert {r.subject.split()[1] for r in failed} == set(vpc.private.values())
    assert all("EFA pool(s) train" in r.detail and vpc.igw in r.detail for r in failed)


def test_non_efa_pool_on_private_subnet_routed_to_internet_gateway_warns(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="igw")
    results = egress(session, vpc, {"serve": GPU_POOL})
    private = [r for r in results if any(s in r.subject for s in vpc.private.values())]
    assert private and all(r.status == "warn" and "it is a public subnet" in r.detail for r in private)


def test_efa_pool_on_public_subnets_fails_on_the_public_subnet(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="nat")
    pools = {"train": {**EFA_POOL, "subnets": "public", "availabilityZone": "us-west-2a"}}
    results = egress(session, vpc, pools)
    public = [r for r in results if vpc.public["us-west-2a"] in r.subject]
    assert [r.status for r in public] == ["fail"]


def test_nat_gateway_in_a_subnet_without_internet_route_fails(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="nat-in-private")
    results = egress(session, vpc, {"serve": GPU_POOL})
    failed = [r for r in results if r.status == "fail"]
    assert len(failed) == 2 and all("no internet gateway route" in r.detail for r in failed)


def test_subnet_that_does_not_exist_fails(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="nat")
    network = vpc.network()
    network["privateSubnetIds"].append("subnet-0123456789abcdef0")
    plan = aws.stack(pools={"serve": GPU_POOL}, network=network)
    results = aws.check(session, plan, EGRESS)
    missing = [r for r in results if "subnet-0123456789abcdef0" in r.subject]
    assert [r.status for r in missing] == ["fail"] and "does not exist" in missing[0].detail


def test_pool_pinned_to_a_zone_without_subnet_fails(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, egress="nat")
    results = egress(session, vpc, {"serve": {**GPU_POOL, "availabilityZone": "us-west-2c"}})
    pool = [r for r in results if r.subject == "pool serve"]
    assert [r.status for r in pool] == ["fail"] and "us-west-2c" in pool[0].detail


def test_stack_created_vpc_is_not_applicable(session: boto3.Session) -> None:
    plan = aws.stack(pools={"train": EFA_POOL})
    results = aws.check(session, plan, EGRESS)
    assert [r.status for r in results] == ["not-run"]
    assert results[0].detail.startswith("not applicable")


def test_instance_type_not_offered_in_pinned_zone_fails(session: boto3.Session) -> None:
    # moto's offerings (AWS's public data) have trn1.32xlarge in us-west-2b and 2d only.
    plan = aws.stack(pools={"trn": {"replicas": 1, "instanceTypes": ["trn1.32xlarge"],
                                    "availabilityZone": "us-west-2a"},
                            "trn-ok": {"replicas": 1, "instanceTypes": ["trn1.32xlarge"],
                                       "availabilityZone": "us-west-2b"}})
    results = {r.subject: r for r in aws.check(session, plan, ZONES)}
    assert results["pool trn"].status == "fail"
    assert "trn1.32xlarge not offered in us-west-2a" in results["pool trn"].detail
    assert results["pool trn-ok"].status == "pass"


def test_type_offered_in_some_zones_warns_and_zones_follow_the_brought_subnets(session: boto3.Session) -> None:
    vpc = aws.build_vpc(session, zones=("us-west-2a", "us-west-2b"), egress="nat")
    plan = aws.stack(pools={"trn": {"replicas": 1, "instanceTypes": ["trn1.32xlarge"]}}, network=vpc.network())
    [result] = aws.check(session, plan, ZONES)
    assert result.status == "warn"
    assert "trn1.32xlarge not offered in us-west-2a" in result.detail and "private subnets" in result.detail


def test_zone_count_uses_the_regions_first_zones(session: boto3.Session) -> None:
    plan = aws.stack(pools={"trn": {"replicas": 1, "instanceTypes": ["trn1.32xlarge"]}},
                     network={"availabilityZones": 2})
    [result] = aws.check(session, plan, ZONES)
    assert "the region's first 2 availability zones" in result.detail, result.detail


def test_zone_count_takes_pinned_zones_first_as_the_program_does(session: boto3.Session) -> None:
    """A pool pinned to us-west-2c with 2 zones: the VPC spans 2a and 2c, and so does the other pool."""
    plan = aws.stack(pools={"pinned": {"replicas": 1, "instanceTypes": ["g6e.xlarge"], "availabilityZone": "us-west-2c"},
                            "free": {"replicas": 1, "instanceTypes": ["g6e.xlarge"]}},
                     network={"availabilityZones": 2})
    results = {r.subject: r for r in aws.check(session, plan, ZONES)}
    free = next(r for subject, r in results.items() if "free" in subject)
    assert "us-west-2a, us-west-2c" in free.detail and "pinned ones first" in free.detail, free.detail


def test_reserved_pool_not_offered_is_only_a_warning(session: boto3.Session) -> None:
    aws.reservations(session, [aws.reservation("cr-0123456789abcdef0", "trn1.32xlarge", "us-west-2a", 1)])
    plan = aws.stack(pools={"trn": {"replicas": 1, "instanceTypes": ["trn1.32xlarge"], "availabilityZone": "us-west-2a",
                                    "capacity": "reserved", "capacityReservationIds": ["cr-0123456789abcdef0"]}})
    [result] = aws.check(session, plan, ZONES)
    assert result.status == "warn" and "capacity.reservations" in result.detail



def regional_nat(session: boto3.Session, egress_table: str | None = None) -> tuple[aws.Vpc, str]:
    """Private subnets routed to NAT gateways that EC2 describes as regional: no subnet of their own,
    their route table named by RouteTableId (moto 5.2.5 makes only zonal ones, so DescribeNatGateways
    is answered; moto's NAT gateways sit in the private subnets, which have no internet route)."""
    vpc = aws.build_vpc(session, egress="nat-in-private")
    ec2 = session.client("ec2")
    own = egress_table or ec2.create_route_table(VpcId=vpc.id)["RouteTable"]["RouteTableId"]
    aws.fake(session, "ec2", "DescribeNatGateways", lambda _: {"NatGateways": [{
        "NatGatewayId": nat, "VpcId": vpc.id, "State": "available", "ConnectivityType": "public",
        "AvailabilityMode": "regional", "RouteTableId": own} for nat in vpc.nats.values()]})
    return vpc, own


def private_results(session: boto3.Session, vpc: aws.Vpc) -> list[CheckResult]:
    results = egress(session, vpc, {"train": EFA_POOL})
    found = [r for r in results if any(s in r.subject for s in vpc.private.values())]
    assert len(found) == 2
    return found


def test_regional_nat_gateway_passes_through_its_own_route_table(session: boto3.Session) -> None:
    vpc, own = regional_nat(session)
    session.client("ec2").create_route(RouteTableId=own, DestinationCidrBlock="0.0.0.0/0", GatewayId=vpc.igw)
    results = private_results(session, vpc)
    assert all(r.status == "pass" and "regional NAT gateway" in r.detail and vpc.igw in r.detail
               for r in results), results


def test_regional_nat_gateway_whose_route_table_has_no_internet_route_fails(session: boto3.Session) -> None:
    vpc, own = regional_nat(session)
    assert all(r.status == "fail" and f"no internet gateway route in its route table {own}" in r.detail
               for r in private_results(session, vpc))


def test_regional_nat_gateway_with_its_route_table_out_of_sight_passes(session: boto3.Session) -> None:
    vpc, _ = regional_nat(session, egress_table="rtb-0notinthisvpc00000")
    assert all(r.status == "pass" for r in private_results(session, vpc))


def test_nat_addresses_outside_the_public_endpoint_cidrs_fail_when_the_private_endpoint_is_off(
        session: boto3.Session) -> None:
    """privateAccess: false: nodes reach the API server from the NAT gateway's Elastic IP, which
    publicAccessCidrs must include; the fix names the address."""
    vpc = aws.build_vpc(session, egress="nat")
    nat = session.client("ec2").describe_nat_gateways()["NatGateways"]
    ips = {a["PublicIp"] for n in nat for a in n["NatGatewayAddresses"]}

    def run(cidrs: list[str]) -> list[CheckResult]:
        plan = stacks.plan("managed-node-groups", "1.36", {"serve": GPU_POOL}, name="ml", region=aws.REGION,
                           network=vpc.network(),
                           cluster={"endpoint": {"privateAccess": False, "publicAccessCidrs": cidrs}})
        return [r for r in aws.check(session, plan, EGRESS) if any(s in r.subject for s in vpc.private.values())]

    failed = [r for r in run(["203.0.113.0/24"]) if r.status == "fail"]
    assert len(failed) == 2 and all("privateAccess is false" in r.detail for r in failed)
    assert all(any(f"{ip}/32" in r.fix for ip in ips) for r in failed)
    assert all(r.status == "pass" for r in run(sorted(f"{ip}/32" for ip in ips)))
