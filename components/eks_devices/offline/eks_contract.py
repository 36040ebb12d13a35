"""The pulumi-eks contract: what the engine sends an `eks:` remote component, and whether pulumi-eks takes it.

`eks:index:Cluster` is a remote component: the engine hands its inputs to pulumi-eks's Node.js
provider, which builds the cluster at construct time. Under the mock engine nothing reads those
inputs, so this module does what pulumi-eks would:

- *What is sent.* The real engine supports output values, so the Python SDK sends a remote
  component's `Output` inputs as output values, each with its dependencies (pulumi 3.272.0
  `pulumi/runtime/resource.py` `prepare_resource`, ~236: `keep_output_values=remote`); the SDK's
  mock monitor reports no such support (`pulumi/runtime/mocks.py` `SupportsFeature` and
  `GetDeploymentInfo`, ~357-381). `with_output_values` and `for_mocks` let the recording monitor
  keep the wire form while the mocks keep seeing what they always saw.
- *What pulumi-eks reads.* Its provider hands a top-level input over as is when it is no secret and
  has no dependencies or holds output values, else wrapped in an `Output` (pulumi/pulumi
  `sdk/nodejs/provider/server.ts` `deserializeInputs`, lines 639-672 at v3.259.0-14-g1b59498); an
  output value is an `Output` wherever it sits. pulumi-eks reads plain-only inputs (`autoMode`,
  `skipDefaultNodeGroup`, …) with plain JavaScript (`args.autoMode?.enabled`), and every field of
  an `Output` is a truthy lifted `Output`: such an input must arrive plain.
- *Types.* Every input against the installed `pulumi_eks` SDK's `<Name>Args`: property names,
  plain vs `pulumi.Input`, nested shapes, enums, required fields.
- *Cross-field rules* pulumi-eks enforces at construct time, and the resources it then creates on
  its own (`effects`), read from pulumi/pulumi-eks v4.3.0 `nodejs/eks/cluster/cluster.ts` and
  `authenticationMode.ts` (the newest tag in the source snapshot, whose later commits change no
  TypeScript; the requirements pin the 4.4.0 SDK, whose types are read from the install).
"""

from __future__ import annotations

import collections.abc
import enum
import functools
import inspect
import typing
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pulumi_eks
from google.protobuf import json_format
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2

OUTPUT_VALUES = resource_pb2.RESOURCE_MONITOR_FEATURE_OUTPUT_VALUES
SOURCE = "pulumi/pulumi-eks v4.3.0 nodejs/eks/cluster"
_SIG, _SECRET, _RESOURCE, _OUTPUT = (rpc._special_sig_key, rpc._special_secret_sig, rpc._special_resource_sig,
                                     rpc._special_output_value_sig)


# --- the hook: record what the engine is sent, hand the mocks what they always got ---------------------------


def with_output_values(info: Any) -> Any:
    """The mock monitor's deployment info, plus output values (as the real engine reports)."""
    features = set(info.supportedFeatures) | {OUTPUT_VALUES}
    return resource_pb2.DeploymentInfo(supportedFeatures=sorted(features))


def sent(struct: Any) -> dict[str, Any]:
    """A request's inputs exactly as on the wire: output values, secrets and references keep their markers."""
    return json_format.MessageToDict(struct)


def for_mocks(request: Any) -> Any:
    """A copy of a registration with each output value as an engine without output values gets it
    (its value, a secret, or unknown), so the mocks see exactly what they saw before. Only remote
    components are sent output values (`keep_output_values=remote`)."""
    if not request.remote:
        return request
    wire = sent(request.object)
    plain = _without_output_values(wire)
    if plain == wire:
        return request
    copy = type(request)()
    copy.CopyFrom(request)
    copy.object.Clear()
    json_format.ParseDict(plain, copy.object)
    return copy


def _without_output_values(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(_SIG) == _OUTPUT:
            inner = _without_output_values(value["value"]) if "value" in value else rpc.UNKNOWN
            return {_SIG: _SECRET, "value": inner} if value.get("secret") else inner
        return {k: _without_output_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_output_values(v) for v in value]
    return value


# --- the SDK's types -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """One input's declared type: its kind, whether an `Output` may stand there, and what it holds."""

    kind: str  # bool, str, number, any, enum, list, map, object, resource, union
    output_ok: bool = False
    name: str = ""  # enum, object and resource types
    item: Shape | None = None  # list items, map values
    values: tuple[str, ...] = ()  # enum values
    args: type | None = None  # object: the SDK's `...Args` class
    options: tuple[Shape, ...] = ()  # union members


@dataclass(frozen=True)
class Prop:
    python: str
    shape: Shape
    required: bool


_SCALARS = {bool: "bool", str: "str", int: "number", float: "number"}


def _is_output(a: Any) -> bool:
    if isinstance(a, typing.ForwardRef):
        return a.__forward_arg__.startswith("Output")
    return typing.get_origin(a) is not None and getattr(typing.get_origin(a), "__name__", "") == "Output"


def shape_of(annotation: Any) -> Shape:
    """The shape of an SDK annotation (`pulumi.Input[...]` is a union with `Output`, flattened by typing)."""
    origin, members = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union:
        output_ok = any(_is_output(m) for m in members)
        kept = [m for m in members if m is not type(None) and not _is_output(m)
                and typing.get_origin(m) is not collections.abc.Awaitable]
        inner = [shape_of(m) for m in kept]
        one = inner[0] if len(inner) == 1 else Shape("union", options=tuple(inner))
        return Shape(one.kind, output_ok or one.output_ok, one.name, one.item, one.values, one.args, one.options)
    if origin in (collections.abc.Sequence, list):
        return Shape("list", item=shape_of(members[0]))
    if origin in (collections.abc.Mapping, dict):
        return Shape("map", item=shape_of(members[1]))
    if isinstance(annotation, typing.ForwardRef):
        return _named(annotation.__forward_arg__)
    if annotation in _SCALARS:
        return Shape(_SCALARS[annotation])
    return Shape("any", output_ok=True)


def _named(name: str) -> Shape:
    if "." in name:  # e.g. 'pulumi_aws.ec2.SecurityGroup': a resource, sent as a reference
        return Shape("resource", name=name)
    found = getattr(pulumi_eks, name)
    if isinstance(found, type) and issubclass(found, enum.Enum):
        return Shape("enum", name=name, values=tuple(str(m.value) for m in found))
    return Shape("object", name=name, args=found)


def describe(shape: Shape) -> str:
    """A shape as a reader would write it: `Input[...]` where an Output may stand, else plain."""
    inner = {"list": lambda: f"list[{describe(shape.item)}]", "map": lambda: f"map[{describe(shape.item)}]",
             "union": lambda: " | ".join(describe(o) for o in shape.options)}.get(shape.kind, lambda: shape.name
                                                                                  or shape.kind)()
    return f"Input[{inner}]" if shape.output_ok else inner


@functools.cache
def properties(args: type) -> dict[str, Prop]:
    """An SDK `...Args` class's inputs by wire name (the `@pulumi.getter(name=...)` of each)."""
    out: dict[str, Prop] = {}
    for name, param in inspect.signature(args.__init__).parameters.items():
        if name == "__self__" or param.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        getter = getattr(args, name).fget
        wire = getattr(getter, "_pulumi_name", name)
        out[wire] = Prop(name, shape_of(param.annotation), param.default is inspect.Parameter.empty)
    return out


def args_class(type_token: str) -> type | None:
    """The SDK's args class of an `eks:` resource type (`eks:index:Cluster` → `ClusterArgs`)."""
    return getattr(pulumi_eks, f"{type_token.rsplit(':', 1)[-1]}Args", None)


# --- checking ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    """Something pulumi-eks would reject or misread: where, what, and the upstream source saying so."""

    path: str
    message: str
    source: str = ""

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" + (f" ({self.source})" if self.source else "")


def check(type_token: str, wire: dict[str, Any]) -> list[Violation]:
    """Every problem pulumi-eks has with one `eks:` resource's inputs, as sent on the wire."""
    args = args_class(type_token)
    if args is None:
        return [Violation(type_token, f"the installed pulumi_eks ({metadata.version('pulumi_eks')}) has no "
                                      f"{type_token.rsplit(':', 1)[-1]}Args for this resource type")]
    out: list[Violation] = []
    _object(wire, args, type_token.rsplit(":", 1)[-1], out)
    if type_token == "eks:index:Cluster":
        out += cluster_rules(as_constructed(wire))
    return out


def _object(value: dict[str, Any], args: type, path: str, out: list[Violation]) -> None:
    props = properties(args)
    for key, item in value.items():
        if key not in props:
            out.append(Violation(f"{path}.{key}", f"not an input of pulumi_eks.{args.__name__}"))
        else:
            _value(item, props[key].shape, f"{path}.{key}", out)
    for key, prop in props.items():
        if prop.required and value.get(key) is None:
            out.append(Violation(f"{path}.{key}", f"required by pulumi_eks.{args.__name__} and not given"))


def _value(value: Any, shape: Shape, path: str, out: list[Violation]) -> None:
    if isinstance(value, dict) and value.get(_SIG) in (_OUTPUT, _SECRET):
        what = "a secret" if value.get(_SIG) == _SECRET or value.get("secret") else "an Output"
        if not shape.output_ok:
            out.append(Violation(path, f"plain-only in pulumi_eks ({describe(shape)}) but sent as {what}; pulumi-eks "
                                       "then reads an Output, every field of which is truthy",
                                 "pulumi/pulumi sdk/nodejs/provider/server.ts:639-672"))
        if "value" in value and value["value"] != rpc.UNKNOWN:
            _value(value["value"], Shape(**{**shape.__dict__, "output_ok": True}), path, out)
        return
    if value is None or value == rpc.UNKNOWN or shape.kind == "any":
        return
    wrong = _kind_problem(value, shape)
    if wrong:
        out.append(Violation(path, f"{wrong}; pulumi_eks declares {describe(shape)}"))
        return
    if shape.kind == "list":
        for i, item in enumerate(value):
            _value(item, shape.item, f"{path}[{i}]", out)  # type: ignore[arg-type]
    elif shape.kind == "map":
        for key, item in value.items():
            _value(item, shape.item, f"{path}.{key}", out)  # type: ignore[arg-type]
    elif shape.kind == "object":
        _object(value, shape.args, path, out)  # type: ignore[arg-type]
    elif shape.kind == "union":
        trials = [[] for _ in shape.options]  # type: list[list[Violation]]
        for option, found in zip(shape.options, trials, strict=True):
            _value(value, option, path, found)
        if all(trials):
            out.extend(min(trials, key=len))


def _kind_problem(value: Any, shape: Shape) -> str:
    """What is wrong with a (non-special) value's kind, or ""."""
    given = f"given {value!r}"
    if shape.kind == "bool" and not isinstance(value, bool):
        return f"{given}, not a boolean"
    if shape.kind == "str" and not isinstance(value, str):
        return f"{given}, not a string"
    if shape.kind == "number" and (isinstance(value, bool) or not isinstance(value, int | float)):
        return f"{given}, not a number"
    if shape.kind == "enum" and value not in shape.values:
        return f"{given}; accepted: {', '.join(shape.values)}"
    if shape.kind == "list" and not isinstance(value, list):
        return f"{given}, not a list"
    if shape.kind in ("map", "object") and (not isinstance(value, dict) or _SIG in value):
        return f"{given}, not an object"
    if shape.kind == "resource" and not (isinstance(value, dict) and value.get(_SIG) == _RESOURCE):
        return f"{given}, not a resource reference"
    return ""


# --- what pulumi-eks's construct sees, its cross-field rules and what it creates ----------------------------------


@dataclass(frozen=True)
class Lifted:
    """An `Output` as pulumi-eks's JavaScript sees it: truthy, each field another lifted `Output`; `value`
    is what an `apply` on it gets (None when unknown)."""

    value: Any = None

    def __repr__(self) -> str:
        return f"Output({self.value!r})"


def resolved(value: Any) -> Any:
    """What `pulumi.all(...).apply(...)` hands pulumi-eks's callback."""
    return value.value if isinstance(value, Lifted) else value


@dataclass
class Constructed:
    """pulumi-eks's `args` at construct time: plain values, `Lifted` where an `Output` arrives."""

    args: dict[str, Any] = field(default_factory=dict)

    def get(self, *path: str) -> Any:
        value: Any = self.args
        for key in path:
            if isinstance(value, Lifted):
                return Lifted(_dig(value.value, key))
            value = value.get(key) if isinstance(value, dict) else None
        return value


def _dig(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def as_constructed(wire: dict[str, Any]) -> Constructed:
    """The inputs as the provider hands them to `new Cluster(name, inputs)`: secrets and output values are
    `Output`s, anything else is plain (with output values, no plain input carries dependencies of its own)."""
    return Constructed({k: _constructed(v) for k, v in wire.items()})


def _constructed(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(_SIG) in (_OUTPUT, _SECRET):
            inner = value.get("value")
            return Lifted(None if inner == rpc.UNKNOWN else _without_markers(inner))
        if value.get(_SIG) == _RESOURCE:
            return value
        return {k: _constructed(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_constructed(v) for v in value]
    return value


def _without_markers(value: Any) -> Any:
    """A resolved value: output values and secrets by their value."""
    if isinstance(value, dict):
        if value.get(_SIG) in (_OUTPUT, _SECRET):
            return _without_markers(value.get("value"))
        return {k: _without_markers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value


def truthy(value: Any) -> bool:
    """JavaScript truthiness: `[]` and `{}` are true, `null`/`undefined`, `false`, `0` and `""` are not."""
    if isinstance(value, list | dict | Lifted):
        return True
    return bool(value)


def _access_entries_supported(mode: Any) -> bool:
    return mode in ("API", "API_AND_CONFIG_MAP")  # authenticationMode.ts supportsAccessEntries


def cluster_rules(a: Constructed) -> list[Violation]:
    """The checks `createCluster`/`createCore` make before creating anything (they throw)."""
    out: list[Violation] = []
    mode = a.get("authenticationMode")

    def rule(fires: bool, path: str, message: str, where: str) -> None:
        if fires:
            out.append(Violation(f"Cluster.{path}", message, f"{SOURCE}/{where}"))

    for key in ("roleMappings", "userMappings", "instanceRoles"):  # checked on the resolved value
        rule(mode == "API" and bool(resolved(a.get(key))), key,
             f"non-empty {key} is refused with authenticationMode API", "authenticationMode.ts:25-39")
    rule(truthy(a.get("accessEntries")) and not _access_entries_supported(mode), "accessEntries",
         f"access entries need authenticationMode API or API_AND_CONFIG_MAP (given {mode or 'none'})",
         "authenticationMode.ts:41-54")
    rule(truthy(a.get("instanceRole")) and truthy(a.get("instanceRoles")), "instanceRole",
         "instanceRole and instanceRoles are mutually exclusive", "cluster.ts:426-430")
    rule(truthy(a.get("subnetIds")) and (truthy(a.get("publicSubnetIds")) or truthy(a.get("privateSubnetIds"))),
         "subnetIds", "subnetIds excludes publicSubnetIds and privateSubnetIds", "cluster.ts:432-436")
    singular = ("nodeSubnetIds", "nodeAssociatePublicIpAddress", "instanceType", "instanceProfileName",
                "nodePublicKey", "nodeRootVolumeSize", "nodeUserData", "minSize", "maxSize", "desiredCapacity",
                "nodeAmiId", "gpu")
    rule(truthy(a.get("nodeGroupOptions")) and any(truthy(a.get(k)) for k in singular), "nodeGroupOptions",
         "nodeGroupOptions excludes the singular node group options", "cluster.ts:438-456")
    rule(truthy(a.get("autoMode", "enabled")) and not _access_entries_supported(mode), "authenticationMode",
         f"Auto Mode needs access entries: authenticationMode API or API_AND_CONFIG_MAP (given {mode or 'none'})",
         "cluster.ts:458-463")
    public = resolved(a.get("endpointPublicAccess"))  # checked in an apply: resolved values, default true
    rule(truthy(a.get("publicAccessCidrs")) and resolved(a.get("publicAccessCidrs")) is not None
         and public is False,
         "publicAccessCidrs", "publicAccessCidrs only with endpointPublicAccess true (an empty list too)",
         "cluster.ts:708-716")
    rule(truthy(a.get("creationRoleProvider", "provider")), "creationRoleProvider.provider",
         "not supported outside Node.js programs; use providerCredentialOpts", "cluster.ts:2273-2278")
    return out


def effects(a: Constructed) -> set[str]:
    """What pulumi-eks creates on its own from these inputs (beyond the EKS cluster, its service role,
    OIDC provider and Kubernetes provider)."""
    auto = truthy(a.get("autoMode", "enabled"))
    skip_group = a.get("skipDefaultNodeGroup")
    out: set[str] = set()
    if auto and a.get("autoMode", "createNodeRole") is not False:  # cluster.ts:627
        out.add("auto-mode-node-role")
    skip_sgs = a.get("skipDefaultSecurityGroups")
    if not truthy(a.get("autoMode", "enabled") if skip_sgs is None else skip_sgs):  # cluster.ts:548, 2120
        out.add("default-security-groups")
    if not (truthy(skip_group) or truthy(a.get("fargate")) or auto):  # cluster.ts:924-925, 2150-2155
        out.add("default-node-group")
    create_role = a.get("createInstanceRole")
    if (not truthy(a.get("instanceRoles")) and not truthy(a.get("instanceRole"))
            and (truthy(create_role) or (not truthy(skip_group) and create_role is None))):  # cluster.ts:943-946
        out.add("default-instance-role")
    coredns_enabled = a.get("corednsAddonOptions", "enabled")
    explicit = coredns_enabled is True or truthy(a.get("corednsAddonOptions", "configurationValues"))
    wanted = truthy(a.get("fargate")) or not truthy(skip_group) or auto
    if explicit or (wanted and truthy(True if coredns_enabled is None else coredns_enabled)):  # cluster.ts:1175-1184
        out.add("coredns-addon")
    kube_proxy = a.get("kubeProxyAddonOptions", "enabled")
    if truthy(not auto if kube_proxy is None else kube_proxy):  # cluster.ts:764-765
        out.add("kube-proxy-addon")
    vpc_cni = a.get("useDefaultVpcCni")
    if (not auto) if vpc_cni is None else not truthy(vpc_cni):  # cluster.ts:1090-1093
        out.add("vpc-cni-addon")
    return out


# what the toolkit leaves to pulumi-eks: outside Auto Mode the VPC CNI and kube-proxy add-ons (Auto Mode
# runs both on its nodes itself); nothing else (no default node group, instance role, Auto Mode node role,
# CoreDNS add-on or extra security groups: the toolkit makes its own or needs none)
LEFT_TO_PULUMI_EKS = {"auto-mode": frozenset(), "karpenter": frozenset({"kube-proxy-addon", "vpc-cni-addon"}),
                      "managed-node-groups": frozenset({"kube-proxy-addon", "vpc-cni-addon"})}
