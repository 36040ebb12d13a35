"""The preflight's test helpers: small stacks, moto-built VPCs and clusters, and botocore event
hooks that answer (or deny) single operations.

moto 5.2.5 does not implement `DescribeCapacityReservations`, `ListAddons` or `DescribeAddon`.
`fake()` answers exactly one operation from a Python function through botocore's `before-call`
event, the mechanism `botocore.stub.Stubber` uses; Stubber itself answers every call of a client,
so it cannot stub one operation while moto serves the rest of the run.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import boto3
import botocore.loaders
from botocore.awsrequest import AWSResponse
from moto import mock_aws

from eks_devices.core import planner as planning
from eks_devices.preflight import CHECKS, AwsReader, Context, run_check
from support import stacks

REGION = "us-west-2"
ROLE = "arn:aws:iam::123456789012:role/test"


def stack(mode: str = "managed-node-groups", version: str = "1.36", pools: dict[str, Any] | None = None,
          network: dict[str, Any] | None = None, name: str = "ml") -> planning.Plan:
    """The plan of a small stack in us-west-2 (the preflight's defaults: managed node groups, cluster `ml`)."""
    sections = {"network": network} if network is not None else {}
    return stacks.plan(mode, version, pools, name=name, region=REGION, **sections)


# One botocore data loader for every session made under `mocked()` (ours, and the ones moto makes
# for each EKS role-ARN check): each service model and endpoints.json is then parsed once per run.
_LOADER = botocore.loaders.create_loader()


@contextmanager
def mocked() -> Iterator[None]:
    """moto with fake credentials; no profile or config file of the machine leaks in. Tests in one
    module share the mocked account (each builds its own VPC or cluster), which keeps them fast."""
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION,
           "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
           "AWS_EC2_METADATA_DISABLED": "true"}
    with mock.patch.dict(os.environ, env), mock.patch("botocore.session.create_loader", return_value=_LOADER), \
            mock_aws():
        os.environ.pop("AWS_PROFILE", None)
        os.environ.pop("AWS_SESSION_TOKEN", None)
        yield


def new_session() -> boto3.Session:
    """A fresh session: its own event hooks, so one test's fakes never reach another's calls."""
    return boto3.Session(region_name=REGION)


# ---- VPCs -------------------------------------------------------------------------------------

@dataclass
class Vpc:
    id: str
    public: dict[str, str] = field(default_factory=dict)  # zone → subnet id
    private: dict[str, str] = field(default_factory=dict)
    private_tables: dict[str, str] = field(default_factory=dict)  # zone → route table id
    igw: str = ""
    nats: dict[str, str] = field(default_factory=dict)

    def network(self, private: list[str] | None = None, public: bool = True) -> dict[str, Any]:
        """The stack's `eks-devices:network` for this VPC (all subnets unless `private` names zones)."""
        zones = private if private is not None else list(self.private)
        return {"vpcId": self.id, "privateSubnetIds": [self.private[z] for z in zones],
                "publicSubnetIds": list(self.public.values()) if public else []}


def build_vpc(session: boto3.Session, zones: tuple[str, ...] = ("us-west-2a", "us-west-2b"),
              egress: str | dict[str, str] = "nat") -> Vpc:
    """Public subnets routed to an internet gateway, and private subnets whose default route is
    `egress` (or `egress[zone]`): "nat" (a NAT gateway per zone, in the public subnet), "igw",
    "none", or "nat-in-private" (the NAT gateway sits in a subnet without an internet route)."""
    ec2 = session.client("ec2")
    vpc = Vpc(ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"])
    vpc.igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=vpc.igw, VpcId=vpc.id)
    public_table = ec2.create_route_table(VpcId=vpc.id)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=public_table, DestinationCidrBlock="0.0.0.0/0", GatewayId=vpc.igw)
    for i, zone in enumerate(zones):
        pub = ec2.create_subnet(VpcId=vpc.id, CidrBlock=f"10.0.{i}.0/24", AvailabilityZone=zone)["Subnet"]["SubnetId"]
        ec2.modify_subnet_attribute(SubnetId=pub, MapPublicIpOnLaunch={"Value": True})
        ec2.associate_route_table(RouteTableId=public_table, SubnetId=pub)
        prv = ec2.create_subnet(VpcId=vpc.id, CidrBlock=f"10.0.{100 + i}.0/24",
                                AvailabilityZone=zone)["Subnet"]["SubnetId"]
        table = ec2.create_route_table(VpcId=vpc.id)["RouteTable"]["RouteTableId"]
        ec2.associate_route_table(RouteTableId=table, SubnetId=prv)
        vpc.public[zone], vpc.private[zone], vpc.private_tables[zone] = pub, prv, table
        kind = egress if isinstance(egress, str) else egress[zone]
        if kind in ("nat", "nat-in-private"):
            home = pub if kind == "nat" else prv
            eip = ec2.allocate_address(Domain="vpc")["AllocationId"]
            nat = ec2.create_nat_gateway(SubnetId=home, AllocationId=eip)["NatGateway"]["NatGatewayId"]
            ec2.create_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=nat)
            vpc.nats[zone] = nat
        elif kind == "igw":
            ec2.create_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", GatewayId=vpc.igw)
    return vpc


def add_endpoints(session: boto3.Session, vpc: Vpc, services: tuple[str, ...]) -> None:
    """VPC endpoints: S3 as a gateway on the private route tables, the rest as interfaces with private DNS."""
    ec2 = session.client("ec2")
    for service in services:
        name = f"com.amazonaws.{REGION}.{service}"
        if service == "s3":
            ec2.create_vpc_endpoint(VpcId=vpc.id, ServiceName=name, VpcEndpointType="Gateway",
                                    RouteTableIds=list(vpc.private_tables.values()))
        else:
            ec2.create_vpc_endpoint(VpcId=vpc.id, ServiceName=name, VpcEndpointType="Interface",
                                    SubnetIds=list(vpc.private.values()), PrivateDnsEnabled=True)


# ---- EKS --------------------------------------------------------------------------------------

def create_cluster(session: boto3.Session, name: str = "ml", version: str = "1.36") -> None:
    session.client("eks").create_cluster(name=name, version=version, roleArn=ROLE,
                                         resourcesVpcConfig={"subnetIds": []})


def create_nodegroup(session: boto3.Session, name: str, labels: dict[str, str], cluster: str = "ml",
                     ami: str = "AL2023_x86_64_NVIDIA", user_data: str | None = None, **extra: Any) -> None:
    """A managed node group; with `user_data`, a launch template carrying it; `extra`: more
    CreateNodegroup parameters (capacityType, version, scalingConfig)."""
    if user_data is not None:
        ec2 = session.client("ec2")
        template = ec2.create_launch_template(
            LaunchTemplateName=f"{cluster}-{name}",
            LaunchTemplateData={"UserData": base64.b64encode(user_data.encode()).decode()})["LaunchTemplate"]
        extra["launchTemplate"] = {"id": template["LaunchTemplateId"], "version": "1"}
    session.client("eks").create_nodegroup(clusterName=cluster, nodegroupName=name, subnets=["subnet-00000001"],
                                           nodeRole=ROLE, labels=labels, amiType=ami, **extra)


# ---- answering single operations --------------------------------------------------------------

class FakeError(Exception):
    def __init__(self, code: str, message: str = "", status: int = 400):
        super().__init__(code)
        self.code, self.message, self.status = code, message or code, status


def fake(session: boto3.Session, service: str, operation: str, respond: Callable[[dict[str, Any]], dict[str, Any]]) \
        -> None:
    """Answer `service.operation` with `respond(api_params)` (a parsed response, or FakeError) for
    clients the session creates from now on; every other call still goes to moto."""
    seen: dict[str, Any] = {}

    def capture(params: dict[str, Any], **_: Any) -> None:
        seen["params"] = dict(params)

    def answer(**_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        try:
            body, status = respond(seen.pop("params", {})), 200
        except FakeError as exc:
            body, status = {"Error": {"Code": exc.code, "Message": exc.message}}, exc.status
        return AWSResponse("https://fake.invalid", status, {}, None), body

    session.events.register(f"before-parameter-build.{service}.{operation}", capture)
    session.events.register(f"before-call.{service}.{operation}", answer)


def deny(session: boto3.Session, service: str, operation: str, code: str = "AccessDenied") -> None:
    """Make one operation fail the way IAM refuses it."""
    def refuse(_: dict[str, Any]) -> dict[str, Any]:
        raise FakeError(code, f"not authorized to perform {service}:{operation}", 403)
    fake(session, service, operation, refuse)


def reservation(rid: str, itype: str, zone: str, count: int, state: str = "active",
                kind: str = "default") -> dict[str, Any]:
    return {"CapacityReservationId": rid, "InstanceType": itype, "AvailabilityZone": zone,
            "TotalInstanceCount": count, "AvailableInstanceCount": count, "State": state,
            "ReservationType": kind, "InstancePlatform": "Linux/UNIX"}


def reservations(session: boto3.Session, items: list[dict[str, Any]]) -> None:
    """DescribeCapacityReservations over `items`; an unknown id fails as EC2 does."""
    by_id = {r["CapacityReservationId"]: r for r in items}

    def respond(params: dict[str, Any]) -> dict[str, Any]:
        ids = params.get("CapacityReservationIds") or list(by_id)
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise FakeError("InvalidCapacityReservationId.NotFound", f"{unknown[0]} does not exist")
        return {"CapacityReservations": [by_id[i] for i in ids]}
    fake(session, "ec2", "DescribeCapacityReservations", respond)


def addons(session: boto3.Session, items: dict[str, dict[str, Any]]) -> None:
    """ListAddons / DescribeAddon over `items` (add-on name → extra fields)."""
    fake(session, "eks", "ListAddons", lambda _: {"addons": sorted(items)})
    fake(session, "eks", "DescribeAddon", lambda p: {"addon": {
        "addonName": p["addonName"], "clusterName": p["clusterName"], "status": "ACTIVE", **items[p["addonName"]]}})


def record_calls(session: boto3.Session) -> list[tuple[str, str]]:
    """(service, operation) of every call clients of the session make from now on."""
    calls: list[tuple[str, str]] = []

    def note(model: Any, **_: Any) -> None:
        calls.append((model.service_model.service_name, model.name))
    session.events.register("before-parameter-build", note)
    return calls


def by_check(results: list[Any], check: str) -> list[Any]:
    return [r for r in results if r.check == check]


def check(session: boto3.Session, plan: planning.Plan, name: str) -> list[Any]:
    """The results of one check (guarded like the runner guards it), without running the others."""
    [chosen] = [c for c in CHECKS if c.name == name]
    return run_check(chosen, Context(plan, AwsReader(session, REGION)))
