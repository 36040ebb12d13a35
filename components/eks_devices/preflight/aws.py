"""Every AWS call the preflight makes, in one table, and the reader that makes only those calls.

The table (`API_CALLS`) is the single source for `policies/preflight-readonly.json` and for the
IAM section of `docs/preflight.md`; the reader refuses any call that is not in it, and tests record
the operations a full run sends to prove the policy covers them. Every call is a read.

AWS errors become one of three outcomes: `Denied` (the caller lacks one IAM action: the check is
reported as not run, naming the action), `PreflightAborted` (no usable credentials, an unknown
profile, no endpoint: nothing can run, the CLI prints one line), or a `ClientError` the check
handles or the runner reports as not run.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import boto3
from botocore import xform_name
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    ProfileNotFound,
)


@dataclass(frozen=True)
class ApiCall:
    """One read-only AWS API operation, the IAM action that allows it and why the preflight needs it."""

    service: str
    operation: str
    action: str
    purpose: str


API_CALLS: tuple[ApiCall, ...] = (
    ApiCall("sts", "GetCallerIdentity", "sts:GetCallerIdentity",
            "confirm the credentials work and name the account"),
    ApiCall("ec2", "DescribeAvailabilityZones", "ec2:DescribeAvailabilityZones",
            "the zones a stack-created VPC spans when network.availabilityZones is a count"),
    ApiCall("ec2", "DescribeSubnets", "ec2:DescribeSubnets",
            "the zone and VPC of each brought subnet"),
    ApiCall("ec2", "DescribeRouteTables", "ec2:DescribeRouteTables",
            "each subnet's default route (NAT gateway, internet gateway or none)"),
    ApiCall("ec2", "DescribeNatGateways", "ec2:DescribeNatGateways",
            "the NAT gateway a default route uses is available, public, and in a subnet with an internet route"),
    ApiCall("ec2", "DescribeVpcEndpoints", "ec2:DescribeVpcEndpoints",
            "the VPC endpoints that replace NAT on subnets without a default route"),
    ApiCall("ec2", "DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypeOfferings",
            "which zones offer the pools' instance types"),
    ApiCall("ec2", "DescribeInstanceTypes", "ec2:DescribeInstanceTypes",
            "the instance types exist and agree with the catalogue"),
    ApiCall("ec2", "DescribeCapacityReservations", "ec2:DescribeCapacityReservations",
            "the capacity reservations and capacity blocks reserved pools name"),
    ApiCall("ec2", "DescribeLaunchTemplateVersions", "ec2:DescribeLaunchTemplateVersions",
            "the Bottlerocket settings of existing NVIDIA node groups"),
    ApiCall("eks", "DescribeCluster", "eks:DescribeCluster",
            "whether the cluster exists and its Kubernetes version"),
    ApiCall("eks", "ListNodegroups", "eks:ListNodegroups", "the cluster's managed node groups"),
    ApiCall("eks", "DescribeNodegroup", "eks:DescribeNodegroup",
            "each node group's labels, AMI type and launch template"),
    ApiCall("eks", "ListAddons", "eks:ListAddons", "the cluster's EKS add-ons"),
    ApiCall("eks", "DescribeAddon", "eks:DescribeAddon", "each add-on's status and configuration values"),
)
CALLS: dict[tuple[str, str], ApiCall] = {(c.service, c.operation): c for c in API_CALLS}

DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})
CREDENTIAL_CODES = frozenset({
    "ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId", "UnrecognizedClientException",
    "AuthFailure", "SignatureDoesNotMatch", "RequestExpired", "InvalidAccessKeyId",
})


# Retries: botocore's adaptive mode (client-side rate limiting on throttling), this many attempts per
# call in all (botocore "Retries" guide: max_attempts counts the first call); AWS_RETRY_MODE and
# AWS_MAX_ATTEMPTS, when set, win as they do for the AWS CLI.
RETRY_MODE = "adaptive"
RETRY_ATTEMPTS = 6


def client_config() -> Config:
    attempts = os.environ.get("AWS_MAX_ATTEMPTS", "")
    mode = os.environ.get("AWS_RETRY_MODE", "")
    retries: dict[str, Any] = {"mode": mode if mode in ("legacy", "standard", "adaptive") else RETRY_MODE,
                               "max_attempts": int(attempts) if attempts.isdigit() else RETRY_ATTEMPTS}
    return Config(retries=retries, connect_timeout=10, read_timeout=30)  # type: ignore[arg-type]
# Regions an account must enable before use (AWS Account Management Reference Guide, "Enable or
# disable AWS Regions in your account"); their STS endpoint refuses an account that has not.
OPT_IN_REGIONS = frozenset({
    "af-south-1", "ap-east-1", "ap-east-2", "ap-south-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5",
    "ap-southeast-6", "ap-southeast-7", "ca-west-1", "eu-central-2", "eu-south-1", "eu-south-2", "il-central-1",
    "me-central-1", "me-south-1", "mx-central-1",
})


class Unavailable(Exception):
    """A call failed for a reason that may pass (timeout, connection, throttling past the retries,
    credentials that expired mid-run): the check it belongs to is not run; the others go on."""

    def __init__(self, call: ApiCall, reason: str):
        super().__init__(reason)
        self.call, self.reason = call, reason


class PreflightAborted(Exception):
    """Nothing can be checked (credentials, profile, endpoint); the message is one line for the user."""


class Denied(Exception):
    """The caller may not make one call; the check that needed it is reported as not run."""

    def __init__(self, call: ApiCall, code: str):
        self.call = call
        self.code = code
        super().__init__(f"{call.action} was denied ({code})")


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _no_profile(exc: ProfileNotFound) -> PreflightAborted:
    """The profile named by --profile or AWS_PROFILE is in no AWS config file."""
    return PreflightAborted(f"AWS profile {exc.kwargs.get('profile')!r} is not configured "
                            "(see `aws configure list-profiles`)")


def open_session(profile: str | None = None, region: str | None = None) -> boto3.Session:
    """A boto3 session for a named profile (or the default credential chain)."""
    try:
        return boto3.Session(profile_name=profile, region_name=region)
    except ProfileNotFound as exc:
        raise _no_profile(exc) from None
    except BotoCoreError as exc:
        raise PreflightAborted(f"cannot load the AWS configuration: {exc}") from None


T = TypeVar("T")


class AwsReader:
    """Read-only access to one account and region through the calls of `API_CALLS`, memoised so
    several checks share one answer (and one denial)."""

    def __init__(self, session: boto3.Session, region: str):
        self.session = session
        self.region = region
        self._clients: dict[str, Any] = {}
        self._memo: dict[tuple[Any, ...], Any] = {}
        self.identified = False  # set once GetCallerIdentity answered: later failures stay per check

    def client(self, service: str) -> Any:
        if service not in self._clients:
            self._clients[service] = self.session.client(service, region_name=self.region, config=client_config())
        return self._clients[service]

    def call(self, service: str, operation: str, **params: Any) -> dict[str, Any]:
        """One request; refuses operations missing from the table."""
        api = CALLS[(service, operation)]
        return self._guard(api, lambda: getattr(self.client(service), xform_name(operation))(**params))

    def items(self, service: str, operation: str, key: str, **params: Any) -> list[Any]:
        """Every item under `key` across all pages of a listing."""
        api = CALLS[(service, operation)]
        name = xform_name(operation)

        def collect() -> list[Any]:
            client = self.client(service)
            if not client.can_paginate(name):
                return list(getattr(client, name)(**params).get(key) or [])
            return [item for page in client.get_paginator(name).paginate(**params) for item in page.get(key) or []]
        return self._guard(api, collect)

    def _guard(self, api: ApiCall, fn: Callable[[], T]) -> T:
        """Denials name the IAM action; before the identity is known, anything else means nothing
        can run (PreflightAborted); after it, a failing call makes its own check not run."""
        try:
            return fn()
        except ClientError as exc:
            code = error_code(exc)
            if code in DENIED_CODES:
                raise Denied(api, code) from None
            if code in CREDENTIAL_CODES:
                if self.identified:
                    raise Unavailable(api, f"AWS rejected the credentials mid-run ({code})") from None
                if self.region in OPT_IN_REGIONS and code in ("InvalidClientTokenId", "UnrecognizedClientException"):
                    raise PreflightAborted(f"{self.region} refused the credentials ({code}): it is an opt-in region; "
                                           "enable it for the account (AWS account settings, AWS Regions) or pick "
                                           "another region") from None
                raise PreflightAborted(f"AWS rejected the credentials ({code}): refresh them or pick another "
                                       "profile") from None
            raise
        except NoCredentialsError:
            if self.identified:
                raise Unavailable(api, "the credentials are no longer available") from None
            raise PreflightAborted("no AWS credentials found: pass --profile, set AWS_PROFILE, or export "
                                   "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") from None
        except BotoCoreError as exc:  # timeouts, connection errors, retries exhausted
            if self.identified:
                raise Unavailable(api, f"{type(exc).__name__}: {exc}") from None
            if isinstance(exc, EndpointConnectionError):
                raise PreflightAborted(f"cannot reach AWS in {self.region}: {exc}") from None
            raise PreflightAborted(f"AWS client error: {exc}") from None

    def _memoised(self, key: tuple[Any, ...], fn: Callable[[], T]) -> T:
        if key not in self._memo:
            try:
                self._memo[key] = (True, fn())
            except (Denied, ClientError, Unavailable) as exc:
                self._memo[key] = (False, exc)
        ok, value = self._memo[key]
        if not ok:
            raise value
        return value

    # ---- the questions the checks ask -------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        return self._memoised(("identity",), lambda: self.call("sts", "GetCallerIdentity"))

    def zones(self) -> list[str]:
        """The region's available availability zones (no Local or Wavelength Zones), by name."""
        def fetch() -> list[str]:
            found = self.call("ec2", "DescribeAvailabilityZones", Filters=[
                {"Name": "state", "Values": ["available"]},
                {"Name": "zone-type", "Values": ["availability-zone"]}])["AvailabilityZones"]
            return sorted(z["ZoneName"] for z in found)
        return self._memoised(("zones",), fetch)

    def subnets(self, ids: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """The subnets that exist among `ids` (a filter, so a missing id is absent, not an error)."""
        def fetch() -> dict[str, dict[str, Any]]:
            found = self.items("ec2", "DescribeSubnets", "Subnets",
                               Filters=[{"Name": "subnet-id", "Values": list(ids)}])
            return {s["SubnetId"]: s for s in found}
        return self._memoised(("subnets", ids), fetch) if ids else {}

    def route_tables(self, vpc_id: str) -> list[dict[str, Any]]:
        return self._memoised(("route-tables", vpc_id), lambda: self.items(
            "ec2", "DescribeRouteTables", "RouteTables", Filters=[{"Name": "vpc-id", "Values": [vpc_id]}]))

    def nat_gateways(self, ids: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        def fetch() -> dict[str, dict[str, Any]]:
            found = self.items("ec2", "DescribeNatGateways", "NatGateways",
                               Filters=[{"Name": "nat-gateway-id", "Values": list(ids)}])
            return {n["NatGatewayId"]: n for n in found}
        return self._memoised(("nat", ids), fetch) if ids else {}

    def vpc_endpoints(self, vpc_id: str) -> list[dict[str, Any]]:
        return self._memoised(("endpoints", vpc_id), lambda: self.items(
            "ec2", "DescribeVpcEndpoints", "VpcEndpoints", Filters=[{"Name": "vpc-id", "Values": [vpc_id]}]))

    def offerings(self, types: tuple[str, ...]) -> dict[str, set[str]]:
        """Instance type → the availability zones that offer it."""
        def fetch() -> dict[str, set[str]]:
            out: dict[str, set[str]] = {t: set() for t in types}
            for offer in self.items("ec2", "DescribeInstanceTypeOfferings", "InstanceTypeOfferings",
                                    LocationType="availability-zone",
                                    Filters=[{"Name": "instance-type", "Values": list(types)}]):
                out.setdefault(offer["InstanceType"], set()).add(offer["Location"])
            return out
        return self._memoised(("offerings", types), fetch)

    def instance_types(self, types: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """The `DescribeInstanceTypes` records of the types the region has (a filter: missing ones are absent)."""
        def fetch() -> dict[str, dict[str, Any]]:
            found = self.items("ec2", "DescribeInstanceTypes", "InstanceTypes",
                               Filters=[{"Name": "instance-type", "Values": list(types)}])
            return {t["InstanceType"]: t for t in found}
        return self._memoised(("instance-types", types), fetch)

    def capacity_reservation(self, reservation_id: str) -> dict[str, Any] | None:
        """One reservation, or None when the account cannot see it."""
        def fetch() -> dict[str, Any] | None:
            try:
                found = self.call("ec2", "DescribeCapacityReservations", CapacityReservationIds=[reservation_id])
            except ClientError as exc:
                if "NotFound" in error_code(exc):
                    return None
                raise
            reservations = found.get("CapacityReservations") or []
            return reservations[0] if reservations else None
        return self._memoised(("reservation", reservation_id), fetch)

    def cluster(self, name: str) -> dict[str, Any] | None:
        """The EKS cluster, or None when it does not exist yet."""
        def fetch() -> dict[str, Any] | None:
            try:
                return self.call("eks", "DescribeCluster", name=name)["cluster"]
            except ClientError as exc:
                if error_code(exc) == "ResourceNotFoundException":
                    return None
                raise
        return self._memoised(("cluster", name), fetch)

    def nodegroups(self, cluster: str) -> list[dict[str, Any]]:
        def fetch() -> list[dict[str, Any]]:
            names = self.items("eks", "ListNodegroups", "nodegroups", clusterName=cluster)
            return [self.call("eks", "DescribeNodegroup", clusterName=cluster, nodegroupName=n)["nodegroup"]
                    for n in sorted(names)]
        return self._memoised(("nodegroups", cluster), fetch)

    def addons(self, cluster: str) -> list[dict[str, Any]]:
        def fetch() -> list[dict[str, Any]]:
            names = self.items("eks", "ListAddons", "addons", clusterName=cluster)
            return [self.call("eks", "DescribeAddon", clusterName=cluster, addonName=n)["addon"]
                    for n in sorted(names)]
        return self._memoised(("addons", cluster), fetch)

    def launch_template_user_data(self, template_id: str, version: str) -> str | None:
        """The decoded user data of one launch template version (None if it has none or is gone)."""
        def fetch() -> str | None:
            try:
                found = self.call("ec2", "DescribeLaunchTemplateVersions", LaunchTemplateId=template_id,
                                  Versions=[version])["LaunchTemplateVersions"]
            except ClientError as exc:
                if "NotFound" in error_code(exc):
                    return None
                raise
            encoded = (found[0].get("LaunchTemplateData") or {}).get("UserData") if found else None
            if not encoded:
                return None
            try:
                return base64.b64decode(encoded, validate=True).decode("utf-8", errors="replace")
            except (binascii.Error, ValueError):  # not base64: return it as it is, for the check to judge
                return str(encoded)
        return self._memoised(("launch-template", template_id, version), fetch)
