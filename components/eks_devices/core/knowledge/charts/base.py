"""What a chart descriptor records: the chart, its known releases, where its device-managing DaemonSets
take their node scope (`Agent`), what its own templates refuse to render (`Refusal`), and what it
brings that other objects wait for (Deployments, CRDs). Each chart module fills one in, with sources."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eks_devices.core.knowledge import versions
from eks_devices.core.values import dig
from eks_devices.core.vocabulary import Family

ManagerName = str  # "dra" | "device-plugin"
Values = dict[str, Any]


@dataclass(frozen=True)
class Toleration:
    """One toleration of a chart's default `tolerations` list: `Exists` on `key` (any value), or
    `Equal` to `value` when one is given; `effect` None tolerates every effect of the key."""

    key: str
    effect: str | None = None
    value: str | None = None

    def render(self) -> dict[str, str]:
        out = {"key": self.key, "operator": "Equal" if self.value is not None else "Exists"}
        if self.value is not None:
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        return out


@dataclass(frozen=True)
class Agent:
    """A DaemonSet in a chart that manages one device family with one manager.

    `enabled` / `node_selector` / `affinity` / `tolerations` / `instance_types` /
    `instance_label_keys` are dotted paths into the release's values. `builtin_tolerations` are
    taints the template tolerates whatever the values say (hard-coded in the template, not list
    defaults a value would replace). `enabled_default` is the chart's default for the `enabled`
    path; `default_tolerations` the chart's default `tolerations` list while the value is unset (a
    null removes them, as Helm deletes null keys). `default_affinity` is the chart's default
    `affinity` value, which Helm merges the release's value into (maps merge, a list of terms
    replaces, null removes it). With `instance_types_in_affinity` it carries the Neuron chart's
    placeholders, which the template fills with the label key and the `instance_types` list
    (`excluded_prefixes` dropped from it). `instance_label_keys` marks the eks-charts templates,
    which build the required affinity themselves from that list of label keys × the
    `instance_types` list (`affinity` is then None); `host_network` pods get the DaemonSet
    controller's network-unavailable toleration. `images` are the repository names (last path segment)
    of the images its DaemonSet runs, by which the policy pack knows a raw DaemonSet of it.
    """

    family: Family
    manager: ManagerName
    node_selector: str
    affinity: str | None
    tolerations: str | None
    builtin_tolerations: tuple[str, ...] = ()
    enabled: str | None = None
    enabled_default: bool = True
    instance_types: str | None = None
    default_tolerations: tuple[Toleration, ...] = ()
    excluded_prefixes: tuple[str, ...] = ()
    serves_only: str = ""
    """What the agent serves, in messages about the types `excluded_prefixes` keeps it off."""
    instance_types_in_affinity: bool = False
    default_affinity: dict[str, Any] | None = None
    instance_label_keys: str | None = None
    default_instance_label_keys: tuple[str, ...] = ()
    host_network: bool = False
    images: tuple[str, ...] = ()


Switch = tuple[str, bool]  # a value path that renders something, and the chart's default for it


def switched_on(values: Values, switch: Switch | None) -> bool:
    """Whether the values turn a switch on (Go template truthiness; no switch: always)."""
    return switch is None or truthy(dig(values, *switch))


@dataclass(frozen=True)
class Image:
    """A container image a release runs, as its chart's values name it: the value paths of its
    repository and tag (the templates write `<repository>:<tag>`), and of its digest where the chart
    has one (Karpenter: `<repository>:<tag>@<digest>`). `default` is the chart's repository (None: the
    region's EKS add-on registry, `Chart.eks_image`). `enabled` is the value path of the switch that
    renders it, with its default. `tag_of` is the chart's default tag for a chart version, where the
    chart derives it from the version. `stack.digests.images` pins it by digest (`derive/digests.py`)."""

    repository: str
    tag: str
    default: str | None
    digest: str | None = None
    enabled: Switch | None = None
    tag_of: Callable[[str], str] | None = None


@dataclass(frozen=True)
class ChartClass:
    """A DeviceClass a chart's templates create: its name (or the value path naming it, the name being
    the default), the driver it selects and its CEL, the switch that renders it (value path, default),
    when it is left out whatever the switch (`skipped(values, chart version)`), and the extended resource
    it names for plain requests, if any (`extended_resource(values, Kubernetes minor)`, KEP-5004)."""

    name: str
    driver: str
    cel: str
    enabled: Switch | None = None
    name_path: str | None = None
    skipped: Callable[[Values, str], bool] | None = None
    extended_resource: Callable[[Values, tuple[int, int]], str | None] | None = None

    def rendered(self, values: Values, version: str, kubernetes: tuple[int, int]) -> tuple[str, str | None] | None:
        """The class's name and extended resource as a release with these values renders it, or None."""
        if not switched_on(values, self.enabled):
            return None
        if self.skipped is not None and self.skipped(values, version):
            return None
        name = (dig(values, self.name_path) if self.name_path else None) or self.name
        return name, self.extended_resource(values, kubernetes) if self.extended_resource else None


@dataclass(frozen=True)
class Releases:
    """The releases known of a chart, oldest first, and where they were read."""

    versions: tuple[str, ...]
    source: str

    def knows(self, version: str) -> bool:
        """Whether `version` is one of them (a leading `v` is optional, as Helm's semver reads it)."""
        return version.removeprefix("v") in {v.removeprefix("v") for v in self.versions}

    @property
    def newest(self) -> str:
        return self.versions[-1]


def series(prefix: str, minor: int, patches: int | tuple[int, ...]) -> tuple[str, ...]:
    """`prefix1.<minor>.0` … — the patch releases of one minor line."""
    numbers = range(patches + 1) if isinstance(patches, int) else patches
    return tuple(f"{prefix}{minor}.{n}" for n in numbers)


def truthy(value: Any) -> bool:
    """Go template truthiness, as `if` / `and` / `not` judge a value."""
    return value not in (None, False, 0, "") and not (isinstance(value, dict | list) and not value)


@dataclass(frozen=True)
class Refusal:
    """One `fail` of a chart: `refuses(values)` is true when the template stops rendering.

    `paths` are the values the condition reads, the one to blame first (the finding names the first of
    them the stack overrides, else the first). `since` is the first chart version whose template has it."""

    chart: str
    paths: tuple[str, ...]
    refuses: Callable[[Values], bool]
    problem: str
    accepted: str
    source: str
    since: str = "0.0.0"

    def applies(self, version: str) -> bool:
        try:
            return versions.semver(version) >= versions.semver(self.since)
        except ValueError:
            return True  # a version the spec let through but semver cannot read: judge by the newest template


@dataclass(frozen=True)
class Chart:
    """One chart the toolkit installs, under its key (`vocabulary.ChartKey`), with everything known of it.

    `deployment_switches`: the (value path, chart default) pairs any true one of which renders a
    Deployment (a release then waits for a node to run it); None when not modelled (assumed to).
    `crds`: the custom resources (`group/version/Kind`) whose definitions the chart installs.
    `former_names`: the chart's names before a move, which a program's release may still use.
    `eks_image`: the image's path in the region's EKS add-on registry, when that is where it is served.
    `images`: the images its device-managing workloads (or controller) run, by which it can be pinned.
    `read_values`: values the toolkit reads besides its agents' (path, shape: `mapping` or `text`), which
    a stack's override must give in that shape (`config/helm.py`).
    `device_classes`: the DeviceClasses its templates create (claims name them; the toolkit lists them)."""

    key: str
    chart: str
    repository: str  # an https Helm repository or an oci:// registry path
    version: str
    namespace: str
    releases: Releases
    agents: tuple[Agent, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    deployment_switches: tuple[tuple[str, bool], ...] | None = None
    crds: tuple[str, ...] = ()
    former_names: tuple[str, ...] = ()
    eks_image: str | None = None
    images: tuple[Image, ...] = ()
    read_values: tuple[tuple[str, str], ...] = ()
    device_classes: tuple[ChartClass, ...] = ()

    @property
    def reference(self) -> str:
        """What `helm install` takes: `oci://…/chart` for OCI charts, else the bare chart name."""
        return f"{self.repository}/{self.chart}" if self.repository.startswith("oci://") else self.chart

    @property
    def registry(self) -> str | None:
        """The registry its images come from by default (the host of the first image's repository);
        None for the region's EKS registry (reached through the ECR endpoints) or no image at all."""
        defaults = [image.default for image in self.images]
        return defaults[0].split("/", 1)[0] if defaults and defaults[0] else None

    @property
    def is_oci(self) -> bool:
        return self.repository.startswith("oci://")


def required(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    """A required node affinity with these terms (each a list of match expressions)."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}}


def label_in(key: str, value: str) -> list[dict[str, Any]]:
    return [{"key": key, "operator": "In", "values": [value]}]
