"""The package's argument and output types, shaped for Pulumi's component analyzer (pulumi 3.272,
`pulumi/provider/experimental/analyzer.py`): `Enum`s instead of `Literal`s, no unions but
`X | None`, `NotRequired` for optional keys, `str` dict keys, and no type named `…Args` (Python
codegen appends `Args` to input types).

Each input type mirrors one model of the stack configuration (`core/spec/`), key for key in
camelCase on the wire, so a problem's stack path is also its property path. Two differences:
`network.availabilityZones` is a list of zone names and `network.availabilityZoneCount` a count
(the stack file takes either under one key), and free-form sections (`helmValues`,
`bottlerocketSettings`, `claims`) are maps of any value. A test keeps the keys and enum values
equal to the models'.
"""

# No `from __future__ import annotations`: the analyzer reads these annotations at run time.

from enum import StrEnum
from typing import Any, NotRequired, TypedDict


class Mode(StrEnum):
    """How the cluster gets compute."""

    AUTO_MODE = "auto-mode"
    """EKS Auto Mode: EKS runs the nodes and their device drivers and plugins."""
    KARPENTER = "karpenter"
    """Karpenter NodePools (dynamic or static) and a small system node group."""
    MANAGED_NODE_GROUPS = "managed-node-groups"
    """EKS managed node groups."""


class DeviceManager(StrEnum):
    """Which software manages a device family on a pool's nodes."""

    DRA = "dra"
    """A Kubernetes DRA driver."""
    DEVICE_PLUGIN = "device-plugin"
    """A device plugin (extended resources such as nvidia.com/gpu)."""
    NONE = "none"
    """Neither: the devices are not advertised."""
    AUTO = "auto"
    """Let the toolkit decide, with a stated reason in the device plan."""
    INFERRED = "inferred"
    """Dynamic Auto Mode pools only (nvidia, efa): Auto Mode picks per node from the Pods it launches it for."""


class Provisioning(StrEnum):
    """How a pool gets nodes."""

    DYNAMIC = "dynamic"
    """Scales on pending pods."""
    STATIC = "static"
    """A fixed number of nodes (`replicas`)."""


class Capacity(StrEnum):
    """The EC2 capacity a pool launches on."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED = "reserved"
    CAPACITY_BLOCK = "capacity-block"


class AmiFamily(StrEnum):
    """The node operating system."""

    AL2023 = "al2023"
    BOTTLEROCKET = "bottlerocket"


class NatGateways(StrEnum):
    """NAT for the private subnets of a created VPC."""

    ONE_PER_AZ = "one-per-az"
    SINGLE = "single"
    NONE = "none"


class SubnetKind(StrEnum):
    """The subnets a pool's nodes launch in."""

    PRIVATE = "private"
    PUBLIC = "public"


class EfaAlignment(StrEnum):
    """The devices a pool's EFA claims align with on one PCIe root or device group."""

    GPU = "gpu"
    NEURON = "neuron"
    NONE = "none"


class InterfaceType(StrEnum):
    """An EC2NodeClass network interface's type."""

    INTERFACE = "interface"
    EFA = "efa"
    EFA_ONLY = "efa-only"


class GpuSharingStrategy(StrEnum):
    """How a pool's GPUs are shared."""

    NONE = "none"
    TIME_SLICING = "time-slicing"
    MIG = "mig"
    SHARED_CLAIM = "shared-claim"


class TaintEffect(StrEnum):
    """A Kubernetes taint effect."""

    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


class LogType(StrEnum):
    """An EKS control-plane log type."""

    API = "api"
    AUDIT = "audit"
    AUTHENTICATOR = "authenticator"
    CONTROLLER_MANAGER = "controllerManager"
    SCHEDULER = "scheduler"


class NetworkConfig(TypedDict):
    """The VPC to create, or the one to bring (`vpcId` and subnet ids)."""

    cidr: NotRequired[str]
    """The VPC's IPv4 CIDR, /16 to /24 (10.42.0.0/16 when absent)."""
    availability_zone_count: NotRequired[int]
    """How many zones to spread subnets over, 2-6 (3 when neither this nor availabilityZones is set)."""
    availability_zones: NotRequired[list[str]]
    """The zones by name, instead of availabilityZoneCount."""
    nat_gateways: NotRequired[NatGateways]
    """NAT for private subnets: one-per-az (default), single or none."""
    vpc_id: NotRequired[str]
    """A VPC to bring instead of creating one."""
    private_subnet_ids: NotRequired[list[str]]
    """The brought VPC's private subnets."""
    public_subnet_ids: NotRequired[list[str]]
    """The brought VPC's public subnets."""


class EndpointConfig(TypedDict):
    """API server endpoint access: private, and public only for the listed CIDRs."""

    private_access: NotRequired[bool]
    public_access_cidrs: NotRequired[list[str]]


class SystemNodeGroupConfig(TypedDict):
    """The small node group for system pods (karpenter and managed-node-groups modes)."""

    instance_type: NotRequired[str]
    size: NotRequired[int]


class AutoModeConfig(TypedDict):
    """Auto Mode settings."""

    general_purpose_pool: NotRequired[bool]
    create_device_classes: NotRequired[bool]


class KarpenterConfig(TypedDict):
    """Karpenter's chart version and upgrade behaviour."""

    version: NotRequired[str]
    reuse_values: NotRequired[bool]
    settings: NotRequired[dict[str, Any]]
    """On an existing cluster only: the settings its own Karpenter release runs with (e.g. enableDRA)."""


class ClusterConfig(TypedDict):
    """The EKS cluster."""

    name: str
    """The cluster's name."""
    version: str
    """The Kubernetes minor version, e.g. "1.36"."""
    mode: Mode
    """auto-mode, karpenter or managed-node-groups."""
    endpoint: NotRequired[EndpointConfig]
    logging: NotRequired[list[LogType]]
    """Control-plane log types (all five when absent)."""
    log_retention_days: NotRequired[int]
    kms_key_arn: NotRequired[str]
    system_node_group: NotRequired[SystemNodeGroupConfig]
    auto_mode: NotRequired[AutoModeConfig]
    karpenter: NotRequired[KarpenterConfig]
    tags: NotRequired[dict[str, str]]
    ssm_access: NotRequired[bool]
    """AmazonSSMManagedInstanceCore on the node role (karpenter, managed-node-groups; default false)."""
    admins: NotRequired[list[str]]
    """IAM role or user ARNs given cluster-admin through EKS access entries."""
    ami_version: NotRequired[str]
    """The AMI release every pool runs unless it sets its own: `latest` (default), a Karpenter alias version
    (v20251117) or a node group releaseVersion (1.36.0-20251117); not in auto-mode."""
    dra_extended_resources: NotRequired[bool]
    """Whether DRA serves extended-resource requests (nvidia.com/gpu) on DRA pools (KEP-5004; unset: on)."""
    protect: NotRequired[bool]
    """Protect the EKS cluster (and EKS deletion protection), VPC, subnets, KMS key and log group (default true)."""
    existing: NotRequired[bool]
    """The cluster exists and the team runs it: refused by Platform (Python's ClusterDevices takes it)."""


class DeviceManagers(TypedDict):
    """The device manager per family (auto when absent)."""

    nvidia: NotRequired[DeviceManager]
    efa: NotRequired[DeviceManager]
    neuron: NotRequired[DeviceManager]


class NetworkInterfaceConfig(TypedDict):
    """One network interface of an EC2NodeClass."""

    network_card_index: int
    device_index: int
    interface_type: InterfaceType


class EfaConfig(TypedDict):
    """EFA alignment and interface layout."""

    align_with: NotRequired[EfaAlignment]
    network_interfaces: NotRequired[list[NetworkInterfaceConfig]]


class GpuSharingConfig(TypedDict):
    """GPU sharing: time-slicing (replicas), MIG (profile) or one shared claim."""

    strategy: NotRequired[GpuSharingStrategy]
    replicas: NotRequired[int]
    profile: NotRequired[str]
    claim_name: NotRequired[str]
    claim_namespace: NotRequired[str]


class TaintConfig(TypedDict):
    """A node taint."""

    key: str
    value: NotRequired[str]
    effect: TaintEffect


class LimitsConfig(TypedDict):
    """A dynamic pool's limits."""

    nodes: NotRequired[int]
    cpu: NotRequired[int]
    memory: NotRequired[str]


class NodePoolConfig(TypedDict):
    """One node pool: an Auto Mode / Karpenter NodePool or a managed node group."""

    instance_types: list[str]
    """Catalogued accelerated instance types."""
    provisioning: NotRequired[Provisioning]
    replicas: NotRequired[int]
    limits: NotRequired[LimitsConfig]
    capacity: NotRequired[Capacity]
    capacity_reservation_ids: NotRequired[list[str]]
    ami: NotRequired[AmiFamily]
    ami_version: NotRequired[str]
    """This pool's AMI release (unset: the cluster's amiVersion)."""
    devices: NotRequired[DeviceManagers]
    efa: NotRequired[EfaConfig]
    gpu_sharing: NotRequired[GpuSharingConfig]
    compute_domains: NotRequired[bool]
    labels: NotRequired[dict[str, str]]
    taints: NotRequired[list[TaintConfig]]
    subnets: NotRequired[SubnetKind]
    availability_zone: NotRequired[str]
    placement_group: NotRequired[bool]
    disk_size_gib: NotRequired[int]
    bottlerocket_settings: NotRequired[dict[str, Any]]
    """Bottlerocket settings tables, as in the stack file."""
    renamed_from: NotRequired[str]
    """The pool's previous name: its resources keep their identity (aliases), nothing is replaced."""


class DeviceClassConfig(TypedDict):
    """A DeviceClass of your own narrowing an upstream class."""

    base: str
    """gpu.nvidia.com, mig.nvidia.com, efa.networking.k8s.aws or neuron.aws.com."""
    product_name: NotRequired[str]
    expression: NotRequired[str]


class PlatformArgs(TypedDict):
    """The stack configuration as arguments: every `eks-devices:<key>` of a stack file, plus the
    region and profile. All plain: the device plan decides at construct time which resources exist."""

    cluster: ClusterConfig
    """The EKS cluster: name, version, mode and settings."""
    region: NotRequired[str]
    """The AWS region (us-west-2 when absent)."""
    profile: NotRequired[str]
    """The AWS profile the cluster's kubeconfig asks for tokens with."""
    network: NotRequired[NetworkConfig]
    """The VPC to create or bring."""
    node_pools: NotRequired[dict[str, NodePoolConfig]]
    """Node pools by name."""
    device_classes: NotRequired[dict[str, DeviceClassConfig]]
    """Extra DeviceClasses by name."""
    claims: NotRequired[dict[str, dict[str, Any]]]
    """Workload ResourceClaims / ResourceClaimTemplates by name, as in the stack file's `claims`."""
    helm_values: NotRequired[dict[str, dict[str, Any]]]
    """Per-chart value overrides (free-form), merged last and re-checked by the rules."""
    chart_versions: NotRequired[dict[str, str]]
    """Per-chart version overrides."""


class ManagerDecision(TypedDict):
    """A pool's device manager for one family, why, and the release that runs it."""

    manager: str
    requested: str
    reason: str
    release: NotRequired[str]


class PoolDevices(TypedDict):
    """One pool in the device plan."""

    managers: dict[str, ManagerDecision]
    labels: dict[str, str]
    instance_types: list[str]


class DeviceRelease(TypedDict):
    """One Helm release of device software and the pools it serves."""

    chart: str
    version: str
    namespace: str
    family: str
    manager: str
    pools: list[str]


class PlanFinding(TypedDict):
    """A rule's warning on the configuration (error findings refuse the arguments)."""

    slug: str
    severity: str
    path: str
    message: str
    fix: str


class DevicePlan(TypedDict):
    """Per pool and device family the manager and why, the releases, and the findings."""

    mode: str
    pools: dict[str, PoolDevices]
    releases: dict[str, DeviceRelease]
    findings: list[PlanFinding]
