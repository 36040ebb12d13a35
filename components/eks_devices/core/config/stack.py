"""Typed, immutable stack configuration (the `eks-devices:*` keys of `stacks/Pulumi.<stack>.yaml`).

Parsing never raises a bare pydantic error: every problem in a stack is collected into one
`ConfigError`, each with its config path, what was given and what is accepted, so a user fixes
everything in one pass and nothing downstream runs on half-valid input.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Annotated, Any, Literal, get_origin

from pydantic import AfterValidator, Field, ValidationError, create_model, field_validator, model_validator
from pydantic.alias_generators import to_camel

from eks_devices.core import names
from eks_devices.core.config.aws_inputs import KMS_KEY_ARN
from eks_devices.core.config.base import Model, empty_list
from eks_devices.core.config.bottlerocket import bottlerocket_toml
from eks_devices.core.config.claims import MIG_PROFILE, Claim
from eks_devices.core.config.claims import problems as claim_problems
from eks_devices.core.config.cluster import LOG_TYPES, Cluster, Network  # noqa: F401  (re-exported: the config vocabulary)
from eks_devices.core.config.digests import Digests
from eks_devices.core.config.errors import ConfigError, ConfigProblem, article, did_you_mean, from_validation, worded
from eks_devices.core.config.helm import karpenter_settings_problems
from eks_devices.core.config.helm import problems as helm_shape_problems
from eks_devices.core.config.keys import PROVIDER_KEYS, camel_case, property_name, stack_key
from eks_devices.core.config.subnets import subnet_layout
from eks_devices.core.config.values import ENDLESS, value_problems
from eks_devices.core.families import EFA, FAMILY
from eks_devices.core.knowledge import amis, catalog, registries, versions
from eks_devices.core.knowledge.charts import SETTING_KEYS
from eks_devices.core.knowledge.device_classes import BASE_CLASSES, GPU_CLASS, UPSTREAM_DEVICE_CLASSES
from eks_devices.core.names import toolkit_label
from eks_devices.core.vocabulary import (  # noqa: F401  (re-exported: the configuration's vocabulary)
    CHART_KEYS,
    EFA_INTERFACE,
    EFA_ONLY,
    FAMILIES,
    INTERFACE,
    NAMESPACE,
    AmiFamily,
    Capacity,
    ChartKey,
    EfaAlignment,
    Family,
    GpuSharingStrategy,
    InterfaceType,
    ManagerChoice,
    Mode,
    Provisioning,
    SubnetKind,
    TaintEffect,
    reserves,
)

LABEL_KEY = re.compile(worded(rf"^({names.DNS_SUBDOMAIN}/)?{names.QUALIFIED_NAME_63}$", "a Kubernetes label key: an "
                              "optional DNS prefix and '/', then up to 63 letters, digits and -_. starting and ending "
                              "with a letter or digit"))
LABEL_VALUE = re.compile(worded(rf"^({names.QUALIFIED_NAME_63})?$", "a Kubernetes label value: up to 63 letters, "
                                "digits and -_. starting and ending with a letter or digit, or empty"))
POOL_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$")
# the patterns of claims.DNS_LABEL and claims.DNS_SUBDOMAIN, whose words a problem says
DNS_LABEL = rf"^{names.DNS_LABEL_63}$"
DNS_SUBDOMAIN = rf"^{names.DNS_SUBDOMAIN}$"  # and at most 253 characters
Devices = create_model(  # one key per device family, from the family descriptors
    "Devices", __base__=Model, __module__=__name__,
    __doc__="""The device manager per family (auto when absent): `auto` resolves with a stated reason;
    `inferred` leaves the choice to Auto Mode per node (dynamic Auto Mode pools, for families it can label).""",
    **{family: (ManagerChoice, "auto") for family in FAMILIES})  # type: ignore[call-overload]


class NetworkInterface(Model):
    """One network interface of an EC2NodeClass."""

    network_card_index: int = Field(ge=0, le=31)
    device_index: int = Field(ge=0, le=1)
    interface_type: InterfaceType


class Efa(Model):
    """EFA alignment and interface layout."""

    align_with: EfaAlignment = "none"
    network_interfaces: list[NetworkInterface] | None = None


FABRIC = EFA.name
"""The pool section of EFA alignment and the interface layout (`Efa`) is keyed by the EFA family's name."""
LAYOUT = f"{FABRIC}.networkInterfaces"  # the interface layout's path in a pool


class GpuSharing(Model):
    """GPU sharing: time-slicing (replicas), MIG (profile) or one shared claim."""

    strategy: GpuSharingStrategy = "none"
    replicas: int | None = Field(default=None, ge=2, le=64)
    profile: str | None = Field(default=None, pattern=MIG_PROFILE)
    claim_name: str | None = Field(default=None, max_length=253, pattern=DNS_SUBDOMAIN)
    # shared-claim: the namespace of the ResourceClaim the toolkit creates (pods must run there)
    claim_namespace: str = Field(default="default", pattern=DNS_LABEL)


class Taint(Model):
    """A node taint."""

    key: str = Field(pattern=LABEL_KEY.pattern)
    value: str | None = Field(default=None, pattern=LABEL_VALUE.pattern)
    effect: TaintEffect

    @field_validator("value")
    @classmethod
    def _empty_is_absent(cls, value: str | None) -> str | None:
        """An empty taint value means no value to Kubernetes, but Karpenter's NodePool CRD refuses
        `value: ""`: keep it absent so every pool kind gets the same, accepted taint."""
        return value or None


class Limits(Model):
    """A dynamic pool's limits."""

    nodes: int | None = Field(default=None, ge=0)
    cpu: int | None = Field(default=None, ge=1)
    memory: str | None = Field(default=None, pattern=worded(r"^[0-9]+(Ki|Mi|Gi|Ti)$", "a memory quantity such as "
                                                                                     "256Gi (Ki, Mi, Gi or Ti)"))


def _known_type(itype: str) -> str:
    """A catalogued instance type; an unknown one is refused at its own entry (`instanceTypes.2`), the one
    to edit, with the catalogued types near it."""
    known = catalog.instance_types()
    if itype in known:
        return itype
    close = _near_types(itype, known)
    hint = f"did you mean {', '.join(close)}? " if close else "(no catalogued family is near it) "
    raise ValueError(f"{hint}a catalogued accelerated instance type (`eks-devices catalog` lists them)")


InstanceTypeName = Annotated[str, AfterValidator(_known_type)]
# an EC2 capacity reservation id, refused at its own entry (`capacityReservationIds.1`)
ReservationId = Annotated[str, Field(pattern=worded(r"^cr-[0-9a-f]{8,17}$", "a capacity reservation id such as "
                                                                         "cr-0123456789abcdef0"))]


class _PoolShape(Model):
    """A node pool's provisioning, capacity, image and device managers: the fields before its EFA section."""

    provisioning: Provisioning | None = None
    replicas: int | None = Field(default=None, ge=0, le=1000)
    limits: Limits = Limits()
    instance_types: list[InstanceTypeName] = Field(min_length=1)
    """Catalogued accelerated instance types."""
    capacity: Capacity = "on-demand"
    capacity_reservation_ids: list[ReservationId] = Field(default_factory=empty_list)
    ami: AmiFamily = "al2023"
    ami_version: str | None = None
    """This pool's AMI release (unset: the cluster's amiVersion)."""
    devices: Devices = Devices()


_PoolFabric = create_model(  # the EFA section, keyed by the family's name from its descriptor
    "_PoolFabric", __base__=_PoolShape, __module__=__name__, **{FABRIC: (Efa, Efa())})  # type: ignore[call-overload]


class NodePool(_PoolFabric):  # type: ignore[misc,valid-type]
    """One node pool: an Auto Mode / Karpenter NodePool or an EKS managed node group."""

    gpu_sharing: GpuSharing = GpuSharing()
    compute_domains: bool = False
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=empty_list)
    subnets: SubnetKind = "private"
    availability_zone: str | None = None
    placement_group: bool = True
    disk_size_gib: int = Field(default=200, ge=20, le=16384)
    renamed_from: str | None = None
    """The pool's previous name: its resources keep their identity (aliases), nothing is replaced."""
    bottlerocket_settings: dict[str, Any] = Field(default_factory=dict)
    """Bottlerocket settings tables, as in the stack file."""

    @property
    def fabric(self) -> Efa:
        """The pool's EFA section: its alignment and interface layout."""
        return getattr(self, FABRIC)  # type: ignore[no-any-return]

    @field_validator("bottlerocket_settings")
    @classmethod
    def _bottlerocket(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            bottlerocket_toml(value)  # the user data it becomes: every value needs a TOML form
        except ValueError as exc:
            raise ValueError("Bottlerocket settings: tables of text keys whose values are text, numbers, "
                             f"booleans or lists of them ({exc})") from None
        return value



def _near_types(itype: str, known: Any) -> list[str]:
    """Catalogued types an unknown one may be a misspelling of: the same name in another case or with spaces
    around it; else the near sizes of its family, or of a catalogued family near its family (`g7` for g7e);
    none for a family of no accelerator (`m7i.large`: a nearby GPU type would be a wrong fix)."""
    same = [t for t in known if t == itype.strip().lower()]
    if same:
        return same
    family = itype.partition(".")[0]
    families = sorted({t.partition(".")[0] for t in known})
    near = [family] if family in families else difflib.get_close_matches(family, families, n=2, cutoff=0.75)
    return difflib.get_close_matches(itype, [t for t in known if t.partition(".")[0] in near], n=3, cutoff=0.5)


class ExtraDeviceClass(Model):
    """A toolkit-owned DeviceClass under a name of your own that narrows an upstream class, e.g.
    one GPU model: the GPU class as `base` and `productName: NVIDIA H100 80GB HBM3`. Its selector is the
    base class's CEL AND the product name AND `expression` (a CEL expression over `device`)."""

    base: Literal[tuple(BASE_CLASSES)]  # type: ignore[valid-type]
    """The upstream DeviceClass it narrows."""
    product_name: str | None = Field(default=None, pattern=worded(
        r"^[A-Za-z0-9][A-Za-z0-9 ._()+-]{0,63}$",
        "a GPU product name such as NVIDIA H100 80GB HBM3: up to 64 letters, digits, spaces and ._()+-"))
    expression: str | None = None

    @field_validator("expression")
    @classmethod
    def _cel(cls, value: str | None) -> str | None:
        if value is not None:
            from eks_devices.core.cel import CelError, compile_expression

            try:
                compile_expression(value)
            except CelError as exc:
                raise ValueError(f"a CEL expression over `device` ({exc})") from None
        return value

    @model_validator(mode="after")
    def _narrows(self) -> ExtraDeviceClass:
        if self.product_name is not None and self.base != GPU_CLASS:
            raise ValueError(f"productName only with base {GPU_CLASS} (use expression for other classes)")
        if self.product_name is None and self.expression is None:
            raise ValueError("productName and/or expression (a class equal to its base adds nothing)")
        return self


class Spec(Model):
    """A whole stack: network, cluster, node pools and per-chart overrides."""

    region: str = Field(default="us-west-2", pattern=r"^[a-z]{2}(-[a-z]+)+-[0-9]$")
    """The AWS region (us-west-2 when absent). PlatformArgs without one take the AWS provider's `aws:region`."""
    aws_profile: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.@+=,-]{1,128}$")
    """The AWS profile the stack deploys with; the cluster's kubeconfig asks for tokens with it too."""
    network: Network = Network()
    """The VPC to create or bring."""
    cluster: Cluster
    """The EKS cluster: name, version, mode and settings."""
    node_pools: dict[str, NodePool] = Field(default_factory=dict)
    """Node pools by name."""
    helm_values: dict[Literal[SETTING_KEYS], dict[str, Any]] = Field(default_factory=dict)  # type: ignore[valid-type]
    """Per-chart value overrides (free-form), merged last and re-checked by the rules."""
    chart_versions: dict[Literal[SETTING_KEYS], str] = Field(default_factory=dict)  # type: ignore[valid-type]
    """Per-chart version overrides."""
    digests: Digests = Digests()
    """Charts and container images pinned by digest (`core/config/digests.py`)."""
    device_classes: dict[str, ExtraDeviceClass] = Field(default_factory=dict)
    """Extra DeviceClasses by name."""
    claims: dict[str, Claim] = Field(default_factory=dict)
    """Workload ResourceClaims / ResourceClaimTemplates by name, with the pools they must fit."""

    @property
    def mode(self) -> Mode:
        return self.cluster.mode

    @property
    def pinned_zones(self) -> list[str]:
        """The zones node pools are pinned to (`availabilityZone`), in name order."""
        return sorted({p.availability_zone for p in self.node_pools.values() if p.availability_zone})

    def ami_version(self, pool: NodePool) -> str:
        """The pool's AMI release (`latest` or a pinned version): its own, else the stack's."""
        return pool.ami_version or self.cluster.ami_version

    def provisioning(self, pool: NodePool) -> Provisioning:
        """Managed node groups are static by nature; elsewhere pools default to dynamic."""
        if pool.provisioning:
            return pool.provisioning
        return "static" if self.mode == "managed-node-groups" else "dynamic"


# stack-file key (`eks-devices:nodePools`, `aws:region`) → the Spec field it is read into
STACK_KEYS = {stack_key(name): name for name in Spec.model_fields}

def _name_problems(data: dict[str, Any]) -> list[ConfigProblem]:
    """Pool names, read from the raw configuration so they are reported with any other problem."""
    pools = data.get("nodePools")
    names = pools if isinstance(pools, dict) else {}
    return [ConfigProblem(f"nodePools.{name}", repr(name), "lower-case letters, digits and '-', at most 40 characters")
            for name in names if isinstance(name, str) and not POOL_NAME.fullmatch(name)]  # other keys: value_problems


def _rename_problems(spec: Spec) -> list[ConfigProblem]:
    """`renamedFrom` names a previous pool name: a valid pool name that is not a pool now, given by
    one pool only, and not itself renamed (no chains: the old name is what the deployed stack has)."""
    problems: list[ConfigProblem] = []
    claimed: dict[str, str] = {}
    for name, pool in spec.node_pools.items():
        old = pool.renamed_from
        if old is None:
            continue
        at = f"nodePools.{name}.renamedFrom"
        if not POOL_NAME.fullmatch(old) or old == name:
            problems.append(ConfigProblem(at, repr(old), "the pool's previous name (a pool name other than "
                                                         f"{name!r}: lower-case letters, digits and '-')"))
        elif old in spec.node_pools:
            problems.append(ConfigProblem(at, repr(old), f"a name that is no longer a pool ({old!r} still is: "
                                                         "remove it, or rename from another name)"))
        elif old in claimed:
            problems.append(ConfigProblem(at, repr(old), f"a name only one pool was renamed from "
                                                         f"(nodePools.{claimed[old]} is renamed from it too)"))
        claimed.setdefault(old, name)
    return problems


def _semantic_problems(spec: Spec, declared: set[str] | None = None) -> list[ConfigProblem]:
    """Checks that need several fields or the catalogue; every one is a config error (exit 2). `declared`,
    the pool names the stack declares (its pools, unless some were set aside for problems of their own),
    are the names claims may name."""
    problems: list[ConfigProblem] = _rename_problems(spec) + _ami_problems(spec)
    for name, pool in spec.node_pools.items():
        at = f"nodePools.{name}"
        provisioning = spec.provisioning(pool)
        if provisioning == "static" and pool.replicas is None:
            problems.append(ConfigProblem(f"{at}.replicas", "nothing", "a node count for a static pool"))
        if provisioning == "dynamic" and pool.replicas is not None:
            problems.append(ConfigProblem(f"{at}.replicas", repr(pool.replicas),
                                          "no replicas on a dynamic pool (use limits, or provisioning: static)"))
        if spec.mode == "managed-node-groups" and provisioning == "dynamic":
            problems.append(ConfigProblem(f"{at}.provisioning", "'dynamic'",
                                          "'static' (managed node groups have a fixed size)"))
        if reserves(pool.capacity) and not pool.capacity_reservation_ids:
            problems.append(ConfigProblem(f"{at}.capacityReservationIds", "nothing",
                                          f"the reservation id(s) a {pool.capacity} pool draws on"))
        if not reserves(pool.capacity) and pool.capacity_reservation_ids:
            problems.append(ConfigProblem(f"{at}.capacityReservationIds", repr(pool.capacity_reservation_ids),
                                          "reservation ids only with capacity: reserved or capacity-block"))
        sharing = pool.gpu_sharing
        if sharing.strategy == "time-slicing" and sharing.replicas is None:
            problems.append(ConfigProblem(f"{at}.gpuSharing.replicas", "nothing",
                                          "the number of shares per GPU (2-64) for time-slicing"))
        if sharing.strategy == "mig" and sharing.profile is None:
            problems.append(ConfigProblem(f"{at}.gpuSharing.profile", "nothing",
                                          "a MIG profile such as 1g.10gb"))
        for key, value in pool.labels.items():
            if not LABEL_KEY.fullmatch(key):
                problems.append(ConfigProblem(f"{at}.labels.{key}", repr(key), "a Kubernetes label key"))
            elif toolkit_label(key):
                problems.append(ConfigProblem(
                    f"{at}.labels.{key}", repr(key), "a label the toolkit does not set itself: it derives "
                    "eks-devices.io/* and the NVIDIA node labels from devices.* and gpuSharing, and the device "
                    "software's scope depends on them"))
            if not LABEL_VALUE.fullmatch(value):
                problems.append(ConfigProblem(f"{at}.labels.{key}", repr(value),
                                              "a Kubernetes label value (63 characters of [A-Za-z0-9_.-])"))
        layout = pool.fabric.network_interfaces
        if layout is not None:
            problems.extend(_layout_problems(f"{at}.{LAYOUT}", layout))
            problems.extend(_layout_card_problems(f"{at}.{LAYOUT}", layout, pool.instance_types))
            if spec.mode != "managed-node-groups":
                problems.extend(
                    ConfigProblem(f"{at}.{LAYOUT}.{i}.interfaceType", repr(EFA_INTERFACE),
                                  f"{INTERFACE!r} or {EFA_ONLY!r} (NodeClasses take no {EFA_INTERFACE!r} interfaces)")
                    for i, nic in enumerate(layout) if nic.interface_type == EFA_INTERFACE)
        problems.extend(_zone_problems(f"{at}.availabilityZone", pool.availability_zone, spec))
        problems.extend(_inferred_problems(at, pool, spec))
        if provisioning == "static" and (pool.limits.cpu is not None or pool.limits.memory is not None):
            problems.append(ConfigProblem(f"{at}.limits", "cpu or memory limits on a static pool",
                                          "only limits.nodes on a static pool (its size is replicas)"))
    pinned = spec.pinned_zones
    count = spec.network.availability_zones
    if spec.network.vpc_id is None and isinstance(count, int) and len(pinned) > count:
        problems.append(ConfigProblem("network.availabilityZones", str(count),
                                      f"at least as many zones as the pools are pinned to ({', '.join(pinned)})"))
    if isinstance(spec.network.availability_zones, list):
        for i, zone in enumerate(spec.network.availability_zones):
            if not _region_zone(zone, spec.region):
                problems.append(ConfigProblem(f"network.availabilityZones.{i}", repr(zone),
                                              f"a zone of region {spec.region} such as {spec.region}a"))
            elif zone in spec.network.availability_zones[:i]:  # each zone's subnets are named after it
                problems.append(ConfigProblem(f"network.availabilityZones.{i}", repr(zone),
                                              "each zone once (a zone gets one public and one private subnet)"))
    problems.extend(_registry_problems(spec))
    if spec.network.vpc_id is None:
        try:
            subnet_layout(spec.network.cidr, spec.network.zone_count)
        except ValueError as exc:
            problems.append(ConfigProblem("network.cidr", repr(spec.network.cidr), str(exc).split(" is ", 1)[-1]))
    endpoint = spec.cluster.endpoint
    arn = spec.cluster.kms_key_arn
    if arn is not None and ((match := KMS_KEY_ARN.fullmatch(arn)) is None or match["region"] != spec.region):
        problems.append(ConfigProblem("cluster.kmsKeyArn", repr(arn),
                                      f"the ARN of a KMS key or alias in {spec.region} (EKS encrypts secrets only "
                                      "with a key in the cluster's region), such as arn:aws:kms:"
                                      f"{spec.region}:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"))
    if not endpoint.private_access and not endpoint.public_access_cidrs:
        problems.append(ConfigProblem("cluster.endpoint", "privateAccess: false and no publicAccessCidrs",
                                      "privateAccess: true, or publicAccessCidrs listing who may reach the API server"))
    if spec.network.vpc_id and not spec.network.private_subnet_ids:
        problems.append(ConfigProblem("network.privateSubnetIds", "nothing",
                                      "the private subnet ids of the VPC named by network.vpcId"))
    problems.extend(_brought_zone_problems(spec))
    for name in spec.device_classes:
        if len(name) > 253 or not re.fullmatch(DNS_SUBDOMAIN, name) or name in UPSTREAM_DEVICE_CLASSES:
            problems.append(ConfigProblem(f"deviceClasses.{name}", repr(name),
                                          "a DNS subdomain name other than the upstream classes "
                                          f"({', '.join(UPSTREAM_DEVICE_CLASSES)})"))
    for key, text in spec.chart_versions.items():
        if key == "karpenter":  # one source of truth: the rules check the Karpenter version that is installed
            problems.append(ConfigProblem("chartVersions.karpenter", repr(text),
                                          "no karpenter entry: set the Karpenter version as cluster.karpenter.version"))
            continue
        try:
            versions.semver(text)
        except ValueError:
            problems.append(ConfigProblem(f"chartVersions.{key}", repr(text), "a chart version such as 1.2.3"))
    problems.extend(_device_class_version_problems(spec))
    pools = set(spec.node_pools) | (declared or set())
    for name, claim in spec.claims.items():
        problems.extend(ConfigProblem(*p) for p in claim_problems(name, claim, pools, spec.cluster.kubernetes))
    problems.extend(helm_shape_problems(spec.helm_values, spec.cluster.karpenter.version))
    problems.extend(_existing_problems(spec))
    return problems


# what the toolkit creates only for a cluster of its own: refused on an existing one (nothing would read them)
CREATED_CLUSTER_KEYS = ("endpoint", "logging", "log_retention_days", "kms_key_arn", "system_node_group", "admins",
                        "ssm_access", "protect")


def _device_class_version_problems(spec: Spec) -> list[ConfigProblem]:
    """A DeviceClass expression (already compiled on its own) that calls CEL functions the cluster's API server
    does not yet accept in a new selector, as a claim's selectors are checked. CEL (celpy) loads only when a
    class has an expression: a stack without one pays nothing for it (~40 ms of imports)."""
    expressions = {name: c.expression for name, c in spec.device_classes.items() if c.expression is not None}
    if not expressions:
        return []
    from eks_devices.core.cel import CelError, compile_expression

    out: list[ConfigProblem] = []
    for name, expression in expressions.items():
        try:
            compile_expression(expression, spec.cluster.kubernetes)
        except CelError as exc:
            out.append(ConfigProblem(f"deviceClasses.{name}.expression", repr(expression)[:60],
                                     f"a CEL expression that compiles ({exc})"))
    return out


def _existing_problems(spec: Spec) -> list[ConfigProblem]:
    """An existing cluster states what it runs (its Karpenter's version and settings); a cluster of the
    toolkit's own derives Karpenter's settings from the pools."""
    cluster, karpenter = spec.cluster, spec.cluster.karpenter
    if not cluster.existing:
        if karpenter.settings is not None:
            return [ConfigProblem("cluster.karpenter.settings", repr(karpenter.settings),
                                  "no settings: the toolkit derives the settings of the Karpenter it installs from "
                                  "the pools (overrides go to helmValues.karpenter); state them only for a cluster "
                                  "that runs its own Karpenter (cluster.existing: true)")]
        return []
    problems = [ConfigProblem(f"cluster.{to_camel(key)}", "a setting of the cluster",
                              "nothing on an existing cluster (cluster.existing: true): the toolkit does not "
                              "create or change the cluster") for key in CREATED_CLUSTER_KEYS
                if key in cluster.model_fields_set]
    problems.extend(ConfigProblem(f"network.{to_camel(key)}", "a setting of the VPC",
                                  "nothing on an existing cluster: node pools take its subnets as arguments")
                    for key in sorted(spec.network.model_fields_set))
    if "karpenter" in spec.helm_values:
        problems.append(ConfigProblem("helmValues.karpenter", "overrides", "nothing on an existing cluster: its "
                                      "Karpenter release is the team's; state its settings in "
                                      "cluster.karpenter.settings"))
    if spec.mode == "karpenter":
        if "version" not in karpenter.model_fields_set:
            problems.append(ConfigProblem("cluster.karpenter.version", "nothing",
                                          "the version of the Karpenter release the cluster runs, such as 1.15.0"))
        if karpenter.settings is None:
            problems.append(ConfigProblem("cluster.karpenter.settings", "nothing",
                                          "the settings of the cluster's Karpenter release, as its Helm values "
                                          "set them, e.g. {enableDRA: true}; {} when it sets none"))
        else:
            problems.extend(karpenter_settings_problems(karpenter.settings, "cluster.karpenter.settings",
                                                        karpenter.version))
        if karpenter.reuse_values:
            problems.append(ConfigProblem("cluster.karpenter.reuseValues", "true", "nothing on an existing "
                                          "cluster: the toolkit does not upgrade its Karpenter release"))
    elif karpenter.model_fields_set:
        problems.append(ConfigProblem("cluster.karpenter", repr(sorted(karpenter.model_fields_set)),
                                      f"nothing: a {spec.mode} cluster runs no Karpenter"))
    return problems


def _ami_problems(spec: Spec) -> list[ConfigProblem]:
    """`amiVersion` in the form the mode pins an AMI by (`knowledge/amis.py`), on each pool and on
    the cluster (checked against every pool family that inherits it)."""
    problems = []
    for name, pool in spec.node_pools.items():
        if pool.ami_version is not None:
            why = amis.problem(spec.mode, pool.ami, pool.ami_version, spec.cluster.kubernetes)
            if why:
                problems.append(ConfigProblem(f"nodePools.{name}.amiVersion", repr(pool.ami_version), why))
    inheriting = sorted({p.ami for p in spec.node_pools.values() if p.ami_version is None}) or ["al2023"]
    for family in inheriting:
        why = amis.problem(spec.mode, family, spec.cluster.ami_version, spec.cluster.kubernetes)
        if why:
            problems.append(ConfigProblem("cluster.amiVersion", repr(spec.cluster.ami_version),
                                          f"{why} for the {family} pools that inherit it"))
            break
    return problems


def _inferred_problems(at: str, pool: NodePool, spec: Spec) -> list[ConfigProblem]:
    """`inferred` means "no eks.amazonaws.com/device-manager-<family> label on the NodePool": only Auto Mode
    infers a manager, only for NVIDIA and EFA, and only from the Pods a dynamic pool launches a node for (a
    static pool has no Pods to infer from and runs the device plugin without the label; EKS user guide,
    "Manage hardware devices", Selecting the device manager explicitly)."""
    problems = []
    for family in FAMILIES:
        if getattr(pool.devices, family) != "inferred":
            continue
        labelled = FAMILY[family].auto_mode_label  # Auto Mode infers only where it has a label to set
        why = (f"Auto Mode runs {FAMILY[family].title} devices with the device plugin only" if not labelled
               else f"only Auto Mode infers a device manager (mode is {spec.mode})" if spec.mode != "auto-mode"
               else "a static Auto Mode pool has no Pods to infer a manager from (without the label it runs the "
                    "device plugin)" if spec.provisioning(pool) == "static" else "")
        if why:
            choices = "auto, dra, device-plugin or none" + ("" if not labelled or spec.mode != "auto-mode"
                                                             else " (inferred on dynamic Auto Mode pools)")
            problems.append(ConfigProblem(f"{at}.devices.{family}", f"'inferred' ({why})", choices))
    return problems


EFA_CHARTS: tuple[ChartKey, ...] = tuple(EFA.releases.values())


def _registry_problems(spec: Spec) -> list[ConfigProblem]:
    """The EFA charts pull their images from the EKS add-on registry of the stack's region
    (knowledge/registries.py): a stack that may install them in a region without a known registry
    is refused, unless its helmValues name the image of both charts."""
    if registries.eks_registry(spec.region) is not None or spec.mode == "auto-mode":
        return []
    efas = any(getattr(pool.devices, EFA.name) != "none"
               and any(catalog.instance_types()[t].has(EFA.name) for t in pool.instance_types)
               for pool in spec.node_pools.values())
    if not efas or all(isinstance(spec.helm_values.get(key, {}).get("image"), dict)
                      and spec.helm_values[key]["image"].get("repository") for key in EFA_CHARTS):
        return []
    return [ConfigProblem("aws:region", repr(spec.region),
                          "a region with a known EKS add-on image registry (" + ", ".join(registries.known_regions())
                          + f"), or helmValues.<{'|'.join(EFA_CHARTS)}>.image.repository for both EFA charts")]


def _region_zone(zone: str, region: str) -> bool:
    """Whether `zone` names an availability zone (`us-west-2a`) or a Local Zone (`us-west-2-lax-1a`) of `region`."""
    return zone.startswith(region) and re.fullmatch(r"[a-z]|-[a-z0-9-]*[a-z]", zone[len(region):]) is not None


def _brought_zone_problems(spec: Spec) -> list[ConfigProblem]:
    """A subnet lies in one zone: pools of a brought VPC pinned to more zones than the pools' kind of
    subnet (private or public) has subnets leave some pool without a subnet in its zone (a node group
    there fails to create, a NodePool never launches). Which subnet is in which zone only EC2 knows:
    `eks-devices preflight` checks that."""
    if spec.network.vpc_id is None:
        return []
    problems = []
    for kind, listed, pinned in _brought_subnets(spec):
        if listed and len(pinned) > len(listed):
            problems.append(ConfigProblem(f"network.{kind}SubnetIds", f"{len(listed)} subnet(s)",
                                          f"a {kind} subnet in each zone the pools are pinned to "
                                          f"({', '.join(pinned)}): at least {len(pinned)}"))
    return problems


def brought_subnet_zones(spec: Spec) -> dict[str, str]:
    """A plausible zone for each brought subnet, for running the program without AWS: the zones the
    pools using that kind of subnet are pinned to, one per subnet in list order (EC2 tells the real
    ones at deploy; `eks-devices preflight` checks them)."""
    zones: dict[str, str] = {}
    for _, listed, pinned in _brought_subnets(spec):
        zones.update(zip(listed, pinned, strict=False))
    return zones


def _brought_subnets(spec: Spec) -> list[tuple[str, list[str], list[str]]]:
    """Per kind of subnet (private, public): the brought subnet ids and the zones pools using that
    kind are pinned to, sorted."""
    return [(kind, list(listed), sorted({p.availability_zone for p in spec.node_pools.values()
                                         if p.availability_zone and p.subnets == kind}))
            for kind, listed in (("private", spec.network.private_subnet_ids),
                                 ("public", spec.network.public_subnet_ids))]


def _zone_problems(at: str, zone: str | None, spec: Spec) -> list[ConfigProblem]:
    """A pool's zone must exist where its nodes go: in the stack's region and, when the stack creates
    the VPC in listed zones, among them. Nothing else gets subnets, so a node group there fails to
    create and a NodePool there never launches a node. (The zones of a brought VPC and of a zone
    count are known only to EC2: `eks-devices preflight` checks those.)"""
    if zone is None:
        return []
    if not _region_zone(zone, spec.region):
        return [ConfigProblem(at, repr(zone), f"a zone of region {spec.region} such as {spec.region}a")]
    listed = spec.network.availability_zones
    if spec.network.vpc_id is None and isinstance(listed, list) and zone not in listed:
        return [ConfigProblem(at, repr(zone),
                              f"one of the VPC's zones (network.availabilityZones: {', '.join(listed)})")]
    if spec.network.vpc_id is None and isinstance(listed, int) and len(zone) != len(spec.region) + 1:
        # a counted VPC takes the region's zones that need no opt-in: never a Local Zone
        return [ConfigProblem(at, repr(zone), f"a zone of region {spec.region} such as {spec.region}a (a Local Zone "
                              "only when network.availabilityZones lists it)")]
    return []


def _layout_card_problems(at: str, layout: list[NetworkInterface], types: list[str]) -> list[ConfigProblem]:
    """Each interface on a card the instance types have, and EFA interfaces only on EFA-capable cards."""
    problems = []
    known = [catalog.instance_types()[t] for t in types]
    for i, nic in enumerate(layout):
        card = nic.network_card_index
        short = sorted(t.name for t in known if card >= t.network_cards)
        no_efa = sorted(t.name for t in known if nic.interface_type != "interface"
                        and t.efa_cards is not None and card not in t.efa_cards)
        if short or no_efa:
            what = (f"{', '.join(short)} have fewer network cards" if short
                    else f"card {card} of {', '.join(no_efa)} takes no EFA")
            problems.append(ConfigProblem(f"{at}.{i}.networkCardIndex", f"{card} ({what})",
                                          "a card every instance type of the pool has, EFA-capable for EFA interfaces"))
    return problems


def _layout_problems(at: str, layout: list[NetworkInterface]) -> list[ConfigProblem]:
    problems = []
    seen = set()
    for i, nic in enumerate(layout):
        slot = (nic.network_card_index, nic.device_index)
        if slot in seen:
            problems.append(ConfigProblem(f"{at}.{i}", f"card {slot[0]} device {slot[1]} twice",
                                          "one interface per network card and device index"))
        seen.add(slot)
        if slot == (0, 0) and nic.interface_type != "interface":
            problems.append(ConfigProblem(f"{at}.{i}.interfaceType", repr(nic.interface_type),
                                          "'interface' for the primary interface (card 0, device 0)"))
    if (0, 0) not in seen:
        problems.append(ConfigProblem(at, "no primary interface", "an 'interface' at card 0, device 0"))
    return problems


# What the Spec fields read from the AWS provider's keys accept (`keys.PROVIDER_KEYS`).
AWS_ACCEPTED = {"region": "an AWS region such as us-west-2",
                "aws_profile": "an AWS profile name (letters, digits and _.@+=,-)"}


def _aws_key(problem: ConfigProblem) -> ConfigProblem:
    """A problem with `aws:region` / `aws:profile`, named as the stack file spells the key."""
    for field, accepted in AWS_ACCEPTED.items():
        if problem.path == camel_case(field):
            return ConfigProblem(stack_key(field), problem.given, accepted)
    return problem


# stack keys whose value is an object (a section or a mapping of them)
OBJECT_KEYS = frozenset(key for key, name in STACK_KEYS.items()
                        if Spec.model_fields[name].annotation not in (str, str | None))


def _object_text(value: Any) -> Any:
    """An object section as `pulumi config set` stores it (JSON text) read as the object `pulumi up`
    reads (the Pulumi SDK's `Config.get_object` parses the text as JSON); anything else unchanged."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return value
        if isinstance(parsed, dict | list) and not value_problems(parsed, ""):
            return parsed
    return value


def near_namespace(key: str) -> bool:
    """A key in a namespace that is a near miss of this project's (`eks-device:nodePools`)."""
    namespace, _, name = key.partition(":")
    return bool(name) and namespace != NAMESPACE and difflib.SequenceMatcher(None, namespace, NAMESPACE).ratio() >= 0.75


# Spec sections that map names to items (pools, claims, classes, charts): a problem inside one item leaves
# the others to be checked, by shape and across fields, with it set aside
NAMED_SECTIONS = frozenset(camel_case(name) for name, field in Spec.model_fields.items()
                           if get_origin(field.annotation) is dict)
# sections every check across fields reads (the mode, the version, the zones, the region): a problem in one
# of them leaves those checks unmade, while the shape of every other section is still checked
CORE_SECTIONS = frozenset({"cluster", "network", *(camel_case(name) for name in PROVIDER_KEYS)})
# what stands in for a cluster section that cannot be read, so that the other sections' shapes are checked
# (no check across fields runs on it)
STAND_IN_CLUSTER = {"name": "stand-in", "version": versions.show(versions.EKS_KUBERNETES[1]), "mode": "karpenter"}


def _set_aside(data: dict[str, Any], units: set[tuple[str, ...]]) -> dict[str, Any]:
    """`data` without the named items (`(section, name)`) and sections (`(section,)`) in `units`."""
    out = dict(data)
    for unit in units:
        if len(unit) == 1:
            out.pop(unit[0], None)
        elif isinstance(out.get(unit[0]), dict):
            out[unit[0]] = {k: v for k, v in out[unit[0]].items() if k != unit[1]}
    return out


def _unit(loc: tuple[Any, ...]) -> tuple[str, ...]:
    """What a problem at `loc` (a validation error's location, stack-file keys) sets aside: the item of a
    named section it is in, else its section (`()` for the stack as a whole)."""
    if not loc:
        return ()
    head = str(loc[0])
    return (head, loc[1]) if head in NAMED_SECTIONS and len(loc) > 1 else (head,)


def _value_units(data: dict[str, Any]) -> set[tuple[str, ...]]:
    """The items and sections holding a value JSON cannot carry (reported by `value_problems`)."""
    units: set[tuple[str, ...]] = set()
    for section, value in data.items():
        if section in NAMED_SECTIONS and isinstance(value, dict):
            units.update((section, name) for name, item in value.items()
                         if not isinstance(name, str) or value_problems(item, ""))
        elif value_problems(value, ""):
            units.add((section,))
    return units


def parse(config: dict[str, Any], source: str = "stack configuration") -> Spec:
    """Validate a stack's `config:` mapping (namespaced keys) into a Spec, or raise ConfigError with every
    problem: a value JSON cannot carry, a shape the models refuse and a check across fields, in every
    section at once. What one item (a pool, a claim, a chart's entry) or section gets wrong sets it aside
    for the later checks, which then run on the rest; the checks across fields need the cluster, the
    network and the region (`CORE_SECTIONS`) readable."""
    if not isinstance(config, dict):
        raise ConfigError([ConfigProblem("config", article(type(config).__name__),
                                         "a mapping of eks-devices:* keys (and aws:region)")], source)
    problems: list[ConfigProblem] = []
    for key, value in config.items():
        namespace, _, name = str(key).partition(":")
        problems.extend(value_problems(value, name if namespace == NAMESPACE else str(key)))
    if any(p.given.startswith(ENDLESS) for p in problems):
        raise ConfigError(problems, source)  # nothing more is read of a value that does not end or is huge
    data: dict[str, Any] = {}
    config = {key: _object_text(value) if key in OBJECT_KEYS else value for key, value in config.items()}
    allowed = sorted(property_name(k) for k in STACK_KEYS if k.startswith(f"{NAMESPACE}:"))
    for key, value in config.items():
        namespace, _, name = str(key).partition(":")
        if key in STACK_KEYS:
            data[camel_case(STACK_KEYS[key])] = value
        elif namespace == NAMESPACE:
            hint = did_you_mean(name, allowed, spelled=f"{NAMESPACE}:{{}}")
            problems.append(ConfigProblem(key, f"unknown key {key!r}",
                                          hint + ", ".join(f"{NAMESPACE}:{k}" for k in allowed)))
        elif near_namespace(str(key)):
            # another project's keys are left alone; a near miss of ours would be silently ignored
            problems.append(ConfigProblem(str(key), f"a key in namespace {namespace!r}",
                                          f"did you mean {NAMESPACE}:{name}? (this project reads {NAMESPACE}:* keys)"))
    if "cluster" not in data:
        problems.append(ConfigProblem(f"{NAMESPACE}:cluster", "nothing",
                                      "a cluster section with name, version and mode"))
    problems.extend(_name_problems(data))
    pools = data.get("nodePools")
    declared = {name for name in pools if isinstance(name, str)} if isinstance(pools, dict) else set()
    aside = _value_units(data) if problems else set()
    checked = _set_aside(data, aside)
    spec: Spec | None = None
    try:
        spec = Spec.model_validate(checked if "cluster" in checked else {**checked, "cluster": STAND_IN_CLUSTER})
    except ValidationError as exc:
        problems.extend(_aws_key(p) for p in from_validation(exc, model=Spec))  # the stand-in is refused nothing
        refused = {_unit(err["loc"]) for err in exc.errors()}
        aside |= refused
        if () not in refused:
            try:
                spec = Spec.model_validate(_set_aside(data, aside))
            except ValidationError:
                spec = None
    if spec is not None and "cluster" in data and not {unit[:1] for unit in aside} & {(s,) for s in CORE_SECTIONS} \
            and ("nodePools",) not in aside:
        problems.extend(_semantic_problems(spec, declared))
    if not problems and spec is not None:
        return spec
    raise ConfigError(problems, source)
