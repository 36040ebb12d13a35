"""The cluster-wide part of the stack configuration: the VPC (`eks-devices:network`) and the EKS
cluster (`eks-devices:cluster`) with its endpoint, logging, tags, system nodes, Auto Mode and
Karpenter settings. Node pools, claims and the whole Spec are in `spec`.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, Field, field_validator

from eks_devices.core.config.aws_inputs import (
    INSTANCE_TYPE,
    SUBNET_ID,
    TAG_KEY_MAX,
    TAG_VALUE_MAX,
    VPC_ID,
    public_cidr_problems,
    tag_text_ok,
)
from eks_devices.core.config.base import Model, empty_list
from eks_devices.core.config.errors import worded
from eks_devices.core.knowledge import versions
from eks_devices.core.knowledge.charts.karpenter import KARPENTER
from eks_devices.core.vocabulary import LogType, Mode, NatGateways

LOG_TYPES: tuple[LogType, ...] = get_args(LogType)



# Entries of lists, each refused at its own index (`network.privateSubnetIds.1`): the entry to edit.
def _subnet_id(value: str) -> str:
    if not SUBNET_ID.fullmatch(value):
        raise ValueError("a subnet id such as subnet-0123456789abcdef0 (subnet- and 8 or 17 hex digits)")
    return value


def _public_cidr(value: str) -> str:
    for _, _, accepted in public_cidr_problems([value]):
        raise ValueError(accepted)
    return value


SubnetId = Annotated[str, AfterValidator(_subnet_id)]
PublicCidr = Annotated[str, AfterValidator(_public_cidr)]

class Network(Model):
    """The VPC: created across N zones with public and private subnets, or brought by the user."""

    cidr: str = "10.42.0.0/16"
    """The VPC's IPv4 CIDR, /16 to /24 (10.42.0.0/16 when absent)."""
    availability_zones: int | list[str] = Field(default=3)
    """The zones to spread subnets over: how many (2-6; 3 when absent) or their names."""
    nat_gateways: NatGateways = "one-per-az"
    """NAT for private subnets: one-per-az (default), single or none."""
    vpc_id: str | None = None
    """A VPC to bring instead of creating one."""
    private_subnet_ids: list[SubnetId] = Field(default_factory=empty_list)
    """The brought VPC's private subnets."""
    public_subnet_ids: list[SubnetId] = Field(default_factory=empty_list)
    """The brought VPC's public subnets."""

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        try:
            net = ipaddress.ip_network(value)
        except ValueError:
            raise ValueError("an IPv4 CIDR block such as 10.42.0.0/16") from None
        if net.version != 4 or not 16 <= net.prefixlen <= 24:
            raise ValueError("an IPv4 CIDR block with a prefix between /16 and /24")
        return value

    @field_validator("vpc_id")
    @classmethod
    def _vpc(cls, value: str | None) -> str | None:
        if value is not None and not VPC_ID.fullmatch(value):
            raise ValueError(f"a VPC id such as vpc-0123456789abcdef0 (got {value!r})")
        return value

    @field_validator("private_subnet_ids", "public_subnet_ids")
    @classmethod
    def _subnets(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("each subnet once")
        return value

    @field_validator("availability_zones")
    @classmethod
    def _zones(cls, value: int | list[str]) -> int | list[str]:
        count = value if isinstance(value, int) else len(value)
        if not 2 <= count <= 6:
            raise ValueError("between 2 and 6 availability zones (a count or a list of zone names); "
                             "EKS needs subnets in at least two")
        return value

    @property
    def zone_count(self) -> int:
        return self.availability_zones if isinstance(self.availability_zones, int) else len(self.availability_zones)

    @property
    def has_nat(self) -> bool:
        """Whether private subnets get a default route through NAT (unknown for a brought VPC: True,
        checked by `eks-devices preflight`)."""
        return self.vpc_id is not None or self.nat_gateways != "none"


class Endpoint(Model):
    """API server endpoint access. The public endpoint is off unless CIDRs are listed."""

    private_access: bool = True
    public_access_cidrs: list[PublicCidr] = Field(default_factory=empty_list)

    @field_validator("public_access_cidrs")
    @classmethod
    def _cidrs(cls, value: list[str]) -> list[str]:
        refused = [(given, accepted) for i, given, accepted in public_cidr_problems(value) if i is None]
        if refused:  # the list's own limits (each entry is checked at its index)
            raise ValueError("; ".join(f"{given} ({accepted})" for given, accepted in refused))
        return value


class SystemNodeGroup(Model):
    """The small managed node group for system pods (and the Karpenter controller), created in
    the karpenter and managed-node-groups modes; Auto Mode runs system pods on its `system` pool."""

    instance_type: str = "m7i.large"
    size: int = Field(default=2, ge=1, le=10)

    @field_validator("instance_type")
    @classmethod
    def _instance_type(cls, value: str) -> str:
        if not INSTANCE_TYPE.fullmatch(value):
            raise ValueError(f"an EC2 instance type such as m7i.large (got {value!r})")
        return value


class Karpenter(Model):
    """The Karpenter release: the one the toolkit installs (its version; the settings are derived from
    the pools), or, on a cluster that runs its own (`cluster.existing`), the version and `settings`
    that release runs with, which the rules check the pools against."""

    version: str = KARPENTER.version  # the pinned chart's
    reuse_values: bool = False
    settings: dict[str, Any] | None = None
    """The `settings` of the team's own release's Helm values (enableDRA, awsFeatureGates.draNVIDIAGPU /
    draEFA, ignoreDRARequests, featureGates.staticCapacity); only with `cluster.existing`."""

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        try:
            versions.semver(value)
        except ValueError:
            raise ValueError("a semantic version such as 1.15.0") from None
        return value


class AutoMode(Model):
    """Auto Mode settings."""

    general_purpose_pool: bool = False
    create_device_classes: bool = True


# Tag keys AWS reserves (`aws:`) or EKS, Karpenter (its EC2NodeClass rejects some of these) and this
# toolkit set on what they create; EC2 allows 50 tags per resource, ten are left for those.
RESERVED_TAG_PREFIXES = ("aws:", "eks:", "kubernetes.io/cluster/", "karpenter.sh/", "karpenter.k8s.aws/",
                         "eks-devices.io/")
MAX_CLUSTER_TAGS = 40
# an access entry's principal: an IAM role or user (EKS API Reference, CreateAccessEntry principalArn)
PRINCIPAL_ARN = re.compile(r"arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:(role|user)"
                           r"(/[A-Za-z0-9_+=,.@-]+)*/[A-Za-z0-9_+=,.@-]{1,128}")


def _principal(value: str) -> str:
    if not PRINCIPAL_ARN.fullmatch(value):
        raise ValueError("an IAM role or user ARN such as arn:aws:iam::123456789012:role/platform-admins (an "
                         "assumed-role session ARN is not a principal EKS accepts)")
    return value


PrincipalArn = Annotated[str, AfterValidator(_principal)]


class Cluster(Model):
    """The EKS cluster."""

    name: str = Field(pattern=worded(r"^[A-Za-z][A-Za-z0-9_-]{0,99}$", "an EKS cluster name: a letter, then up to 99 "
                                      "letters, digits, '-' and '_'"))
    """The cluster's name."""
    version: str
    """The Kubernetes minor version, e.g. "1.36"."""
    mode: Mode
    """auto-mode, karpenter or managed-node-groups."""
    endpoint: Endpoint = Endpoint()
    logging: list[LogType] = Field(default_factory=lambda: list(LOG_TYPES))
    """Control-plane log types (all five when absent)."""
    log_retention_days: Literal[1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 3653] = 90
    kms_key_arn: str | None = None
    system_node_group: SystemNodeGroup = SystemNodeGroup()
    auto_mode: AutoMode = AutoMode()
    karpenter: Karpenter = Karpenter()
    tags: dict[str, str] = Field(default_factory=dict)
    ami_version: str = "latest"
    """The AMI release every pool runs unless it sets its own: `latest` (default), a Karpenter alias version
    (v20251117) or a node group releaseVersion (1.36.0-20251117); not in auto-mode (`knowledge/amis.py`)."""
    ssm_access: bool = False
    """AmazonSSMManagedInstanceCore on the node role (karpenter, managed-node-groups; default false): SSM
    sessions on every node."""
    admins: list[PrincipalArn] = Field(default_factory=empty_list)
    """IAM role or user ARNs given cluster-admin through EKS access entries (AmazonEKSClusterAdminPolicy),
    besides the principal running `pulumi up`, which always is."""
    # KEP-5004 (DRAExtendedResource; beta and on from Kubernetes 1.36): whether the GPU family's DeviceClass
    # names its plugin's extended resource as `extendedResourceName`, so a Pod asking for that resource can be
    # served through DRA on DRA nodes. Unset means on (what the driver's chart renders, and what stacks
    # have deployed so far) and the rule dra-extended-resources asks for the choice where it matters.
    dra_extended_resources: bool | None = None
    """Whether DRA serves extended-resource requests (a GPU count) on DRA pools (KEP-5004; unset: on)."""
    protect: bool = True
    """Protect the EKS cluster (and EKS deletion protection), VPC, subnets, KMS key and log group (default true)."""
    existing: bool = False
    """The cluster exists and the team runs it (its Karpenter too): `ClusterDevices` adds pools, device
    software and claims; the toolkit creates no VPC, cluster or Karpenter (`Platform` refuses it)."""

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError('a quoted Kubernetes minor version such as "1.36" (unquoted 1.30 reads as 1.3)')
        try:
            minor = versions.kubernetes(value)
        except ValueError:
            raise ValueError('a Kubernetes minor version such as "1.36"') from None
        low, high = versions.EKS_KUBERNETES
        if not low <= minor <= high:
            raise ValueError(f"a Kubernetes minor version EKS offers: {versions.show(low)} to {versions.show(high)}")
        return value

    @field_validator("admins")
    @classmethod
    def _admins(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("each principal once (an access entry per principal)")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: dict[str, str]) -> dict[str, str]:
        reserved = sorted(k for k in tags if k.lower().startswith(RESERVED_TAG_PREFIXES))
        refused = sorted({repr(t) for k, v in tags.items() for t in (k, v) if not tag_text_ok(t)})
        if (len(tags) > MAX_CLUSTER_TAGS or reserved or refused or any(not 1 <= len(k) <= TAG_KEY_MAX for k in tags)
                or any(len(v) > TAG_VALUE_MAX for v in tags.values())):
            raise ValueError(
                f"at most {MAX_CLUSTER_TAGS} tags, keys of 1-{TAG_KEY_MAX} and values of up to {TAG_VALUE_MAX} "
                "characters of letters, digits, spaces and _.:/=+-@, no key starting "
                f"with {', '.join(RESERVED_TAG_PREFIXES)} (AWS, EKS, Karpenter and this toolkit set those)"
                + (f"; reserved: {', '.join(reserved)}" if reserved else "")
                + (f"; characters AWS refuses in: {', '.join(refused)}" if refused else ""))
        return tags

    @property
    def serves_extended_resources(self) -> bool:
        """The KEP-5004 choice in effect (unset: on)."""
        return self.dra_extended_resources is not False

    @property
    def kubernetes(self) -> tuple[int, int]:
        return versions.kubernetes(self.version)

    @property
    def karpenter_version(self) -> tuple[int, int, int]:
        return versions.semver(self.karpenter.version)
