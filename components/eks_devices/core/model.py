"""The Plan and everything in it: per pool its device managers, labels and taints; the device
software releases and their node scope; the DeviceClasses; Karpenter's settings; the declared claims
with their fit; the rules' findings. Pure data: components, preview and render all read this and
never re-decide. The derivation that fills it is `eks_devices.core.derive`; `planner.build` runs it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from eks_devices.core.config.claims import Claim
from eks_devices.core.config.stack import NodePool, Spec
from eks_devices.core.knowledge import catalog
from eks_devices.core.vocabulary import FAMILIES, Family


@dataclass(frozen=True)
class Resolution:
    family: Family
    manager: str  # dra | device-plugin | none | inferred (Auto Mode picks per node)
    requested: str  # the config's choice: dra | device-plugin | none | auto | inferred
    reason: str


@dataclass(frozen=True)
class DeviceClassPlan:
    name: str
    driver: str
    expression: str
    owner: str  # "toolkit" (created by eks-devices) or the release key whose chart creates it
    extended_resource_name: str | None = None

    @property
    def created_by_toolkit(self) -> bool:
        return self.owner == "toolkit"


@dataclass(frozen=True)
class Outcome:
    """One allocation attempt: the devices per request, or why none."""

    ok: bool
    reason: str = ""
    cause: str = ""  # "", class-missing, no-devices, too-few, too-many, topology, cel-error, undetermined
    devices: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (request key, device names)
    attributes: tuple[str, ...] = ()  # for a topology failure: the attributes the devices had to share


@dataclass(frozen=True)
class NodeFit:
    """A claim on one node of one instance type."""

    instance_type: str
    per_node: int  # claims (Pods with their own claim) one node holds; 0 = does not fit
    reason: str = ""
    cause: str = ""  # the Outcome's, or topology-modelled: a topology failure on a modelled layout

    @property
    def fits(self) -> bool:
        return self.per_node > 0


@dataclass(frozen=True)
class BuiltClaim:
    """A claim object plus what a Pod needs to use it."""

    name: str
    namespace: str
    manifest: dict[str, Any]
    devices: dict[str, Any]  # `spec.devices`: requests, constraints, config
    families: tuple[Family, ...]
    node_selector: dict[str, str]

    @property
    def kind(self) -> str:
        return str(self.manifest["kind"])

    @property
    def shared(self) -> bool:
        """A ResourceClaim is shared by every Pod naming it; a template gives each Pod its own."""
        return self.kind == "ResourceClaim"

    @property
    def request_names(self) -> tuple[str, ...]:
        return tuple(r["name"] for r in self.devices["requests"])

    @property
    def device_class_names(self) -> tuple[str, ...]:
        """The DeviceClasses its requests (and their firstAvailable alternatives) name."""
        names: set[str] = set()
        for request in self.devices.get("requests") or []:
            for sub in [request.get("exactly") or {}, *(request.get("firstAvailable") or [])]:
                if sub.get("deviceClassName"):
                    names.add(sub["deviceClassName"])
        return tuple(sorted(names))

    def pod_claim(self, name: str | None = None) -> dict[str, str]:
        """The Pod's `spec.resourceClaims` entry (containers list `resources.claims: [{name}]`)."""
        key = "resourceClaimName" if self.shared else "resourceClaimTemplateName"
        return {"name": name or self.name, key: self.name}


UNSETTLED = frozenset({"undetermined", "topology-modelled"})  # causes the model cannot stand behind


_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
_TYPE = "\0"
_COUNT = "\x01"


def grouped(bad: Sequence[NodeFit]) -> list[tuple[str, str]]:
    """(instance types, reason) with one sentence for the types that fail the same way: their reasons
    equal but for the type's name and counts ('g6e.xlarge / g6e.12xlarge ... it has 1 / 4 × ...')."""
    groups: dict[str, list[tuple[str, list[str]]]] = {}
    for fit in bad:
        text = fit.reason.replace(fit.instance_type, _TYPE)
        groups.setdefault(_NUMBER.sub(_COUNT, text), []).append((fit.instance_type, _NUMBER.findall(text)))
    out = []
    for shape, members in groups.items():
        names = [name for name, _ in members]
        varying = any(numbers != members[0][1] for _, numbers in members)
        joined = (" / " if varying else ", ").join(names)
        columns = zip(*(numbers for _, numbers in members), strict=True)
        reason = shape.replace("{", "{{").replace("}", "}}").replace(_COUNT, "{}")
        values = [" / ".join(column) if len(set(column)) > 1 else column[0] for column in columns]
        out.append((joined, reason.format(*values).replace(_TYPE, joined)))
    return out


@dataclass(frozen=True)
class PoolFit:
    """A claim on one of the pools meant to serve it."""

    pool: str
    nodes: tuple[NodeFit, ...]
    summary: str
    blocked: str = ""  # why the pool cannot serve the claim at all (no DRA driver for a family)

    @property
    def fits(self) -> bool:
        return any(n.fits for n in self.nodes)

    @property
    def reason(self) -> str:
        return self.blocked or "; ".join(reason for _, reason in grouped([n for n in self.nodes if not n.fits]))

    @property
    def causes(self) -> set[str]:
        return {"blocked"} if self.blocked else {n.cause for n in self.nodes if not n.fits}

    @property
    def settled(self) -> bool:
        """Whether a failure to fit is certain: not a search that gave up, nor a topology failure on
        an instance type whose layout is modelled rather than published."""
        return self.fits or not self.causes <= UNSETTLED


@dataclass(frozen=True)
class ClaimPlan:
    """A declared claim: its object, the families and nodeSelector, and its fit per pool."""

    name: str
    config: Claim
    built: BuiltClaim | None  # None for kind: extended-resource
    families: tuple[Family, ...]
    node_selector: dict[str, str]
    pools: dict[str, PoolFit]
    missing_classes: tuple[str, ...] = ()

    @property
    def shared(self) -> bool:
        return self.built is not None and self.built.shared


Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    slug: str
    severity: Severity
    path: str
    message: str
    fix: str

    def as_dict(self) -> dict[str, str]:
        return {"slug": self.slug, "severity": self.severity, "path": self.path,
                "message": self.message, "fix": self.fix}


@dataclass(frozen=True)
class PoolPlan:
    """Everything the components need to build one node pool."""

    name: str
    provisioning: str
    replicas: int | None
    instance_types: tuple[str, ...]
    architecture: str
    capacity: str
    ami: str
    managers: dict[Family, Resolution]
    labels: dict[str, str]
    taints: tuple[dict[str, str], ...]
    releases: dict[Family, str]  # family → release key serving it ("auto-mode" when built in)
    network_interfaces: tuple[dict[str, Any], ...] | None
    bottlerocket_settings: dict[str, Any]
    node_class_annotations: dict[str, str]
    config: NodePool
    ami_version: str = "latest"  # the pinned AMI release, or `latest` (knowledge/amis.py)

    def manager(self, family: Family) -> str:
        return self.managers[family].manager

    def serves(self, family: Family, manager: str) -> bool:
        """Whether Pods of `manager` (dra | device-plugin) can get this family's devices on the pool: its
        manager, or either one where Auto Mode infers the manager per node."""
        return self.manager(family) in (manager, "inferred")

    def has_hardware(self, family: Family) -> bool:
        return any(catalog.instance_types()[t].has(family) for t in self.instance_types)

    @property
    def stem(self) -> str:
        """What the pool's resources are named after: its previous name when it was renamed
        (`renamedFrom`), so that a rename keeps every resource and physical name, else its name."""
        return self.config.renamed_from or self.name

    @cached_property  # asked per node and per rule that names the pool; the instance is immutable
    def identity(self) -> str:
        """The pool's device-manager identity; a change must replace its nodes."""
        return ",".join(f"{f}={self.manager(f)}" for f in FAMILIES)


@dataclass(frozen=True)
class Release:
    """One Helm release of device software, scoped by label to the pools that chose it."""

    key: str
    family: Family
    manager: str
    chart: str
    repository: str
    version: str
    namespace: str
    pools: tuple[str, ...]
    scope: dict[str, str]
    toolkit_values: dict[str, Any]
    values: dict[str, Any]  # toolkit values with the stack's overrides merged last


@dataclass(frozen=True)
class KarpenterPlan:
    version: str
    dra_settings: dict[str, Any]  # the DRA settings the dynamic pools need
    static_capacity: bool
    toolkit_values: dict[str, Any]
    values: dict[str, Any]  # the release's values: the toolkit's with overrides, or an existing release's settings
    reuse_values: bool
    installed: bool = True  # False: the cluster's own release (cluster.existing), which the toolkit only checks
    charts: dict[str, str] = field(default_factory=dict)  # what Helm pulls per chart key (by digest when pinned)


@dataclass(frozen=True)
class Plan:
    spec: Spec
    pools: dict[str, PoolPlan]
    releases: dict[str, Release]
    device_classes: tuple[DeviceClassPlan, ...]
    karpenter: KarpenterPlan | None
    findings: tuple[Finding, ...] = field(default=())
    claims: tuple[ClaimPlan, ...] = field(default=())  # per declared claim, with its fit per pool
    derived: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)
    """What the proofs derive from this plan once and share (derive/scope.py's nodes per pool); not
    part of the plan: a plan made with `replace` starts without it."""

    @property
    def mode(self) -> str:
        return self.spec.mode

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")
