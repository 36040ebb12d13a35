"""What any Pulumi program's resources say about its nodes and device software, as plain facts.

The policy pack hands the core the resources of a stack (type, URN, properties); this module reads
from them the node shapes (Karpenter / Auto Mode `NodePool`s with their NodeClasses, EKS node groups
with their launch templates, pulumi-eks node groups), the device software (Helm releases and charts
of the known device charts, raw DaemonSets by image), Karpenter's settings and the ResourceClaims.
The overlap proof then runs on these facts as it runs on a Plan's pools (`shape_scope.py`, with
`scope.py`'s placement and node-image models): `nodes()` gives the `scope.Node`s a shape launches
with the labels they really carry (`knowledge/node_labels.py`), so each DaemonSet is placed by
Kubernetes' rules on them. Values the
engine does not know yet (preview) arrive as None and are treated as absent: a label whose value is
unknown (an auto-named NodePool's or node group's name) is left off the node.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from eks_devices.core.derive import scope
from eks_devices.core.knowledge import catalog, charts, installers, node_labels
from eks_devices.core.names import (
    AUTO_MODE_NODE_CLASS_API,
    INSTANCE_FAMILY_LABEL,
    INSTANCE_TYPE_LABEL,
    KARPENTER_CAPACITY_TYPE_LABEL,
)
from eks_devices.core.naming import KUBERNETES_TAINT_EFFECTS
from eks_devices.core.values import dig, merge, nested

NODE_POOL_KIND = "NodePool"
AUTO_MODE_NODE_CLASS_GROUP = AUTO_MODE_NODE_CLASS_API.split("/")[0]  # a NodePool on Auto Mode's NodeClass
NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE_TYPE = "aws:ec2/launchTemplate:LaunchTemplate"
# pulumi-eks v4.4.0 components (schema.json `resources`): a managed node group and the self-managed ones.
EKS_MANAGED_NODE_GROUP_TYPE = "eks:index:ManagedNodeGroup"
EKS_SELF_MANAGED_TYPES = ("eks:index:NodeGroup", "eks:index:NodeGroupV2")
AWS_PROVIDER_TYPE = "pulumi:providers:aws"
HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart")
# Where a shape's nodes come from (`NodeShape.source`): which labels Karpenter, Auto Mode or EKS add.
KARPENTER_POOL, AUTO_MODE_POOL = "Karpenter NodePool", "Auto Mode NodePool"
PULUMI_EKS_MANAGED, EKS_MANAGED, SELF_MANAGED = ("pulumi-eks managed node group", "EKS managed node group",
                                                "pulumi-eks node group")
KARPENTER_DEFAULT_CAPACITY = "on-demand"
# EKS's taint effects in the node group API, and Kubernetes' names for them.


@dataclass(frozen=True)
class Resource:
    """One resource of a program as a policy sees it: plain properties (unknowns already None)."""

    type: str
    name: str
    urn: str
    props: dict[str, Any]
    parent: str = ""
    property_dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.type.rsplit(":", 1)[-1]


@dataclass(frozen=True)
class NodeShape:
    """The nodes one resource launches, with what the overlap proof reads of a pool."""

    name: str
    urn: str
    source: str  # KARPENTER_POOL, AUTO_MODE_POOL, EKS_MANAGED, …
    labels: dict[str, str]
    taints: tuple[dict[str, str], ...]
    instance_types: tuple[str, ...]  # catalogued accelerated types only
    ami: str  # "al2023", "bottlerocket", or another image ("al2", "custom", "" on Auto Mode)
    bottlerocket_settings: dict[str, Any]
    provisioning: str  # "static" | "dynamic"
    auto_mode: bool = False
    interface_types: tuple[str, ...] | None = None  # the NodeClass's static interface layout, if any
    node_pool: str | None = None  # the NodePool's or node group's name in the cluster, when known
    capacity_types: tuple[str, ...] = ()  # as the nodes' capacity-type label writes them
    region: str | None = None


@dataclass(frozen=True)
class Installer:
    """Device software in the program: a release / chart of a known chart, or a raw DaemonSet."""

    name: str
    urn: str
    what: str  # "Helm release <resource> of aws-dranet 1.0.0", "DaemonSet kube-system/x (image …)"
    agents: tuple[charts.Agent, ...]
    values: dict[str, Any]
    unread: tuple[str, ...] = ()  # valueYamlFiles that could not be read: its placement is unknown
    chart_key: str | None = None  # a known chart's key in charts.CHARTS, with the version the program pins
    version: str | None = None


@dataclass(frozen=True)
class Facts:
    shapes: tuple[NodeShape, ...]
    installers: tuple[Installer, ...]
    karpenter: tuple[Resource, ...]  # Karpenter releases / charts
    claims: tuple[Resource, ...]  # ResourceClaims (shared by every Pod that names them)
    device_classes: tuple[Resource, ...]


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items() if v is not None} if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _accelerated(types: list[str]) -> tuple[str, ...]:
    known = catalog.instance_types()
    return tuple(t for t in types if t in known)


def _types_from_requirements(requirements: list[Any]) -> tuple[str, ...]:
    """The catalogued instance types a NodePool's requirements admit (every one when unconstrained)."""
    types = list(catalog.instance_types())
    for req in requirements:
        if not isinstance(req, dict):
            continue
        key, op, values = req.get("key"), req.get("operator"), [str(v) for v in _list(req.get("values"))]
        if key == INSTANCE_TYPE_LABEL:
            types = [t for t in types if (t in values) == (op == "In")] if op in ("In", "NotIn") else types
        elif key == INSTANCE_FAMILY_LABEL and op in ("In", "NotIn"):
            types = [t for t in types if (t.split(".", 1)[0] in values) == (op == "In")]
    return tuple(types)


def _bottlerocket_toml(user_data: Any, encoded: bool) -> dict[str, Any]:
    """Bottlerocket's `settings` table from user data (TOML; base64 in a launch template)."""
    import tomllib  # here: the plan and `check` never read TOML, and its parser compiles regexes on import

    if not isinstance(user_data, str) or not user_data:
        return {}
    text = user_data
    if encoded:
        try:
            text = base64.b64decode(user_data, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return {}
    try:
        return dict(tomllib.loads(text).get("settings") or {})
    except tomllib.TOMLDecodeError:
        return {}


def _node_pool(res: Resource, node_classes: dict[tuple[str, str], Resource]) -> NodeShape:
    spec = res.props.get("spec") or {}
    template = spec.get("template") or {}
    ref = dig(template, "spec.nodeClassRef") or {}
    auto = ref.get("group") == AUTO_MODE_NODE_CLASS_GROUP
    node_class = node_classes.get((str(ref.get("group")), str(ref.get("name"))))
    class_spec = (node_class.props.get("spec") or {}) if node_class else {}
    aliases = [str(t.get("alias", "")) for t in _list(class_spec.get("amiSelectorTerms")) if isinstance(t, dict)]
    # The NodeClass's AMI family from its alias; a NodeClass outside the program is taken as AL2023
    # (Karpenter's recommended `al2023@latest`), one selecting AMIs by id or tag as a custom image.
    family = aliases[0].split("@", 1)[0] if aliases else ("custom" if class_spec.get("amiSelectorTerms") else "al2023")
    bottlerocket = not auto and family == "bottlerocket"
    requirements = _list(dig(template, "spec.requirements"))
    layout = dig(class_spec, "advancedNetworking.networkInterfaces" if auto else "networkInterfaces")
    return NodeShape(
        name=res.name, urn=res.urn, source=AUTO_MODE_POOL if auto else KARPENTER_POOL,
        labels=_str_map(dig(template, "metadata.labels")),
        taints=tuple(_taint(t, {}) for t in _list(dig(template, "spec.taints")) if isinstance(t, dict)),
        instance_types=_types_from_requirements(requirements),
        ami="" if auto else family,
        bottlerocket_settings=_bottlerocket_toml(class_spec.get("userData"), encoded=False) if bottlerocket else {},
        provisioning="static" if spec.get("replicas") is not None else "dynamic", auto_mode=auto,
        interface_types=tuple(str(n.get("interfaceType")) for n in layout if isinstance(n, dict))
        if isinstance(layout, list) else None,
        node_pool=_name(dig(res.props, "metadata.name")), capacity_types=_capacity_types(requirements))


def _name(value: Any) -> str | None:
    return str(value) if isinstance(value, str) and value else None


def _capacity_types(requirements: list[Any]) -> tuple[str, ...]:
    """The capacity types a NodePool's requirements admit: those an `In` on karpenter.sh/capacity-type
    lists, else on-demand only, Karpenter's default (aws/karpenter-provider-aws
    `website/content/en/docs/concepts/nodepools.md`, `karpenter.sh/capacity-type`)."""
    for req in requirements:
        if isinstance(req, dict) and req.get("key") == KARPENTER_CAPACITY_TYPE_LABEL and req.get("operator") == "In":
            listed = tuple(str(v) for v in _list(req.get("values")))
            if listed:
                return listed
    return (KARPENTER_DEFAULT_CAPACITY,)


def _taint(taint: dict[str, Any], effects: dict[str, str]) -> dict[str, str]:
    effect = str(taint.get("effect") or "")
    return {"key": str(taint.get("key") or ""), "value": str(taint.get("value") or ""),
            "effect": effects.get(effect, effect)}


def _launch_template(res: Resource, templates: dict[str, Resource]) -> Resource | None:
    """The launch template a node group names, by id (or name) when known, else by the property
    dependency the engine recorded for `launchTemplate`."""
    ref = res.props.get("launchTemplate") or {}
    for key in ("id", "name"):
        if ref.get(key) in templates:
            return templates[ref[key]]
    for urn in res.property_dependencies.get("launchTemplate", ()):
        if urn in templates:
            return templates[urn]
    return None


def _node_group(res: Resource, templates: dict[str, Resource], source: str) -> NodeShape:
    props = res.props
    template = _launch_template(res, templates)
    lt = template.props if template else {}
    types = _list(props.get("instanceTypes")) or ([lt["instanceType"]] if lt.get("instanceType") else [])
    ami = _node_group_ami(props.get("amiType"))
    return NodeShape(
        name=res.name, urn=res.urn, source=source, labels=_str_map(props.get("labels")),
        taints=tuple(_taint(t, KUBERNETES_TAINT_EFFECTS) for t in _list(props.get("taints")) if isinstance(t, dict)),
        instance_types=_accelerated([str(t) for t in types]), ami=ami,
        bottlerocket_settings=_bottlerocket_toml(lt.get("userData"), encoded=True) if ami == "bottlerocket" else {},
        provisioning="static", node_pool=_name(props.get("nodeGroupName")),
        capacity_types=(str(props.get("capacityType") or "ON_DEMAND"),))


def _node_group_ami(ami_type: Any) -> str:
    """A managed node group's image from its `amiType` (EKS API `Nodegroup.amiType`): AL2023 when
    unset (EKS's default from Kubernetes 1.30), `CUSTOM` when a launch template names the AMI."""
    text = str(ami_type or "AL2023").upper()
    for prefix, ami in (("AL2023", "al2023"), ("BOTTLEROCKET", "bottlerocket"), ("AL2_", "al2")):
        if text.startswith(prefix):
            return ami
    return "custom"


def _self_managed(res: Resource) -> NodeShape:
    """pulumi-eks's self-managed node groups: `labels`, `taints` keyed by taint key, `instanceType`."""
    props = res.props
    taints = props.get("taints") if isinstance(props.get("taints"), dict) else {}
    bottlerocket = str(props.get("amiType") or "").startswith("bottlerocket") or bool(props.get("bottlerocketSettings"))
    return NodeShape(
        name=res.name, urn=res.urn, source=SELF_MANAGED, labels=_str_map(props.get("labels")),
        taints=tuple(_taint({"key": k, **(v if isinstance(v, dict) else {})}, {}) for k, v in taints.items()),
        instance_types=_accelerated([str(props["instanceType"])] if props.get("instanceType") else []),
        ami="bottlerocket" if bottlerocket else "al2023",
        bottlerocket_settings=dict(dig(props, "bottlerocketSettings.settings") or {}), provisioning="static")


def nodes(shape: NodeShape, instance_type: str) -> list[scope.Node]:
    """The shape's nodes of one instance type (one per capacity type), with the labels they carry:
    the shape's own, the kubelet's and cloud provider's, Karpenter's, Auto Mode's or EKS's, and the
    node image's (`node_labels.image`)."""
    itype = catalog.instance_types()[instance_type]
    out = []
    for capacity in shape.capacity_types or ("",):
        labels = dict(node_labels.common(itype.name, itype.architecture, shape.region, None))
        if shape.source == AUTO_MODE_POOL:
            labels.update(node_labels.auto_mode(itype, shape.node_pool, capacity))
        elif shape.source == KARPENTER_POOL:
            labels.update(node_labels.karpenter(itype, shape.node_pool, capacity))
        elif shape.source in (EKS_MANAGED, PULUMI_EKS_MANAGED):
            labels.update(node_labels.node_group(shape.node_pool, capacity))
        labels.update(node_labels.image(shape.ami, itype))
        out.append(scope.Node(shape.name, instance_type, {**labels, **shape.labels}, shape.taints))
    return out


def _default_instance_lists(agents: tuple[charts.Agent, ...], values: dict[str, Any]) -> dict[str, Any]:
    """The values with each agent's instance-type list filled in where they leave it unset. The
    chart's own default lists the instance types with the device (see the chart descriptors); the
    catalogue's types with the agent's family stand for it, as the toolkit's own releases always set
    the list."""
    for agent in agents:
        if agent.instance_types and dig(values, agent.instance_types) is None:
            listed = sorted(t for t, it in catalog.instance_types().items() if it.has(agent.family))
            values = merge(values, nested(agent.instance_types, listed))
    return values


def _value_files(res: Resource) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The merged `valueYamlFiles` of a release or chart (Helm merges them in order, then `values` on
    top), and the files that could not be read. An asset arrives as `{"text": …}` or `{"path": …}`
    (a local file, read from the program's folder, where Pulumi runs)."""
    merged: dict[str, Any] = {}
    unread: list[str] = []
    for asset in _list(res.props.get("valueYamlFiles")):
        text = asset.get("text") if isinstance(asset, dict) else None
        path = asset.get("path") if isinstance(asset, dict) else None
        if not isinstance(text, str) and isinstance(path, str):
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = None
        try:
            loaded = yaml.safe_load(text) if isinstance(text, str) else None
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict):
            merged = merge(merged, loaded)
        elif not (isinstance(text, str) and loaded is None):  # an empty file adds nothing
            unread.append(str(path or "an inline values file"))
    return merged, tuple(unread)


def _helm(res: Resource) -> Installer | None:
    chart = str(res.props.get("chart") or "")
    key = installers.chart_key(chart)
    version = res.props.get("version") or "(unpinned)"
    files, unread = _value_files(res)
    given = res.props.get("values") if isinstance(res.props.get("values"), dict) else {}
    values = merge(files, given)
    what = f"Helm {res.kind.lower()} {res.name} of {{}} {version}"
    if key is not None:
        values = _default_instance_lists(charts.CHARTS[key].agents, values)
        pinned = res.props.get("version")
        return Installer(res.name, res.urn, what.format(charts.CHARTS[key].chart), charts.CHARTS[key].agents,
                         values, unread, key, pinned if isinstance(pinned, str) and pinned else None)
    if installers.chart_name(chart) == installers.GPU_OPERATOR_CHART:
        if dig(values, "clusterPolicy.deployCR") is False:  # no ClusterPolicy: no device plugin from it
            values = merge(values, {"devicePlugin": {"enabled": False}})
        return Installer(res.name, res.urn, what.format(installers.GPU_OPERATOR_CHART) + " (NVIDIA GPU Operator)",
                         installers.GPU_OPERATOR_AGENTS, values, unread)
    managers = {m for image in installers.images_in(values) if (m := installers.image_manager(image))}
    if managers or unread:  # another chart whose values run a device manager's image (a wrapper, a mirror)
        agents = tuple(charts.Agent(family, manager, node_selector="nodeSelector", affinity="affinity",
                                    tolerations="tolerations") for family, manager in sorted(managers))
        return Installer(res.name, res.urn, what.format(installers.chart_name(chart) or res.name)
                         + " (its values run " + (", ".join(f"the {f} {m}" for f, m in sorted(managers))
                                                  or "nothing known") + ")", agents, values, unread)
    return None


def _operator_policy(res: Resource) -> Installer | None:
    """A GPU Operator `ClusterPolicy` or `GPUCluster`: its spec, read as the chart's values."""
    if res.kind not in installers.GPU_OPERATOR_CRS or not res.type.startswith(
            f"kubernetes:{installers.GPU_OPERATOR_CRS[res.kind]}/"):
        return None
    spec = res.props.get("spec") if isinstance(res.props.get("spec"), dict) else {}
    agents = installers.CLUSTER_POLICY_AGENTS if res.kind == "ClusterPolicy" else installers.GPU_CLUSTER_AGENTS
    name = dig(res.props, "metadata.name") or res.name
    return Installer(res.name, res.urn, f"GPU Operator {res.kind} {name} (resource {res.name})", agents, spec)


# A raw DaemonSet is read with the same Agent model as a chart, its own pod spec as the "values".
_POD = "spec.template.spec"
_DAEMONSET_AGENT = {"node_selector": f"{_POD}.nodeSelector", "affinity": f"{_POD}.affinity",
                    "tolerations": f"{_POD}.tolerations"}


def _daemonset(res: Resource) -> Installer | None:
    pod = dig(res.props, _POD) or {}
    images = [str(c.get("image") or "") for c in _list(pod.get("containers")) if isinstance(c, dict)]
    found = [(image, m) for image in images if (m := installers.image_manager(image)) is not None]
    if not found:
        return None
    image, (family, manager) = found[0]
    namespace = dig(res.props, "metadata.namespace") or "default"
    name = dig(res.props, "metadata.name") or res.name
    kind = "DaemonSetPatch" if res.kind.endswith("Patch") else "DaemonSet"
    return Installer(res.name, res.urn, f"{kind} {namespace}/{name} (image {image}, resource {res.name})",
                     (charts.Agent(family, manager, **_DAEMONSET_AGENT, host_network=pod.get("hostNetwork") is True),),
                     dict(res.props))


def _under(res: Resource, urns: set[str], by_urn: dict[str, Resource]) -> bool:
    parent = res.parent
    while parent:
        if parent in urns:
            return True
        parent = by_urn[parent].parent if parent in by_urn else ""
    return False


def read(resources: list[Resource]) -> Facts:
    """The facts of a program's resources (anything else in the program is ignored)."""
    by_urn = {r.urn: r for r in resources}
    node_classes = {(r.type.split(":")[1].split("/")[0], str(dig(r.props, "metadata.name"))): r for r in resources
                    if r.kind in ("EC2NodeClass", "NodeClass") and r.type.startswith("kubernetes:")}
    templates: dict[str, Resource] = {}
    for r in resources:
        if r.type == LAUNCH_TEMPLATE_TYPE:
            templates[r.urn] = r
            for key in ("id", "name"):
                if r.props.get(key):
                    templates[str(r.props[key])] = r
    managed = {r.urn for r in resources if r.type == EKS_MANAGED_NODE_GROUP_TYPE}
    shapes: list[NodeShape] = []
    software: list[Installer] = []
    charted: set[str] = set()
    for r in resources:
        if r.type.startswith("kubernetes:karpenter.sh/") and r.kind == NODE_POOL_KIND:
            shapes.append(_node_pool(r, node_classes))
        elif r.type == EKS_MANAGED_NODE_GROUP_TYPE:
            shapes.append(_node_group(r, templates, PULUMI_EKS_MANAGED))
        elif r.type == NODE_GROUP_TYPE and not _under(r, managed, by_urn):  # a component's child is the same nodes
            shapes.append(_node_group(r, templates, EKS_MANAGED))
        elif r.type in EKS_SELF_MANAGED_TYPES:
            shapes.append(_self_managed(r))
        elif r.type in HELM_TYPES and (installer := _helm(r)) is not None:
            software.append(installer)
            charted.add(r.urn)
        elif r.type.startswith("kubernetes:") and (installer := _operator_policy(r)) is not None:
            software.append(installer)
    # The DaemonSets a chart component (helm.sh/v4 Chart) registered are what its nodes really run,
    # transforms included: they replace the chart's values model. A Release registers none.
    expanded: dict[str, list[Installer]] = {}
    for r in resources:
        daemonset = r.kind in ("DaemonSet", "DaemonSetPatch") and r.type.startswith("kubernetes:apps/")
        if not daemonset or (installer := _daemonset(r)) is None:
            continue
        owner = next((u for u in charted if _under(r, {u}, by_urn)), None)
        if owner is None:
            software.append(installer)
        else:
            expanded.setdefault(owner, []).append(replace(
                installer, what=f"{installer.what} of {by_urn[owner].kind} {by_urn[owner].name}"))
    software = [i for i in software if i.urn not in expanded] + [i for found in expanded.values() for i in found]
    regions = {str(r.props["region"]) for r in resources if r.type == AWS_PROVIDER_TYPE and r.props.get("region")}
    if len(regions) == 1:  # the nodes' region label, when the program's AWS providers agree on one
        shapes = [replace(s, region=next(iter(regions))) for s in shapes]
    karpenter = tuple(r for r in resources if r.type in HELM_TYPES
                      and installers.chart_name(str(r.props.get("chart") or "")) == installers.KARPENTER_CHART)
    dra = [r for r in resources if r.type.startswith("kubernetes:resource.k8s.io/")]
    claims = tuple(r for r in dra if r.kind == "ResourceClaim")
    classes = tuple(r for r in dra if r.kind == "DeviceClass")
    return Facts(tuple(shapes), tuple(software), karpenter, claims, classes)
