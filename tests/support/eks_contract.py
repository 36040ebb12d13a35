"""The pulumi-eks contract: what the engine sends an `eks:` remote component, and whether pulumi-eks takes it.

`eks:index:Cluster` is a remote component: the engine hands its inputs to pulumi-eks's Node.js
provider, which builds the cluster at construct time. Under the mock engine nothing reads those
inputs, so this module does what pulumi-eks would (`contract_data` over a recording). It guards the
toolkit's own program, so it lives in the test suite (tests/offline/test_eks_contract.py), not in a user's
preview:

- *What is sent.* The inputs as the real engine receives them, output values included (the mock
  engine records them so, see `output_values`).
- *What pulumi-eks reads.* Its provider hands a top-level input over as is when it is no secret and
  has no dependencies or holds output values, else wrapped in an `Output` (pulumi/pulumi
  `sdk/nodejs/provider/server.ts` `deserializeInputs`, lines 639-672 at v3.259.0-14-g1b59498); an
  output value is an `Output` wherever it sits. pulumi-eks reads plain-only inputs (`autoMode`,
  `skipDefaultNodeGroup`, …) with plain JavaScript (`args.autoMode?.enabled`), and every field of
  an `Output` is a truthy lifted `Output`: such an input must arrive plain.
- *Types.* Every input against the installed `pulumi_eks` SDK's `<Name>Args` (`eks_types`): input
  names, plain vs `pulumi.Input`, nested shapes, enums, required fields.
- *Cross-field rules* pulumi-eks enforces at construct time, and the resources it then creates on
  its own (`effects`), read from pulumi/pulumi-eks v4.3.0 `nodejs/eks/cluster/cluster.ts` and
  `authenticationMode.ts` (the newest tag in the source snapshot, whose later commits change no
  TypeScript; the requirements pin the 4.4.0 SDK, whose types are read from the install).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from importlib import metadata
from typing import Any

from eks_devices.core.names import PULUMI_EKS_PACKAGE
from eks_devices.offline.engine import Recording
from eks_devices.offline.output_values import OUTPUT, RESOURCE, SECRET, SIG, UNKNOWN, values_of
from support.eks_types import Shape, args_class, describe, properties

SOURCE = "pulumi/pulumi-eks v4.3.0 nodejs/eks/cluster"


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
    if isinstance(value, dict) and value.get(SIG) in (OUTPUT, SECRET):
        what = "a secret" if value.get(SIG) == SECRET or value.get("secret") else "an Output"
        if not shape.output_ok:
            out.append(Violation(path, f"plain-only in pulumi_eks ({describe(shape)}) but sent as {what}; pulumi-eks "
                                       "then reads an Output, every field of which is truthy",
                                 "pulumi/pulumi sdk/nodejs/provider/server.ts:639-672"))
        if "value" in value and value["value"] != UNKNOWN:
            _value(value["value"], replace(shape, output_ok=True), path, out)
        return
    if value is None or value == UNKNOWN or shape.kind == "any":
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
        trials: list[list[Violation]] = [[] for _ in shape.options]
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
    if shape.kind in ("map", "object") and (not isinstance(value, dict) or SIG in value):
        return f"{given}, not an object"
    if shape.kind == "resource" and not (isinstance(value, dict) and value.get(SIG) == RESOURCE):
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
        if value.get(SIG) in (OUTPUT, SECRET):
            inner = value.get("value")
            return Lifted(None if inner == UNKNOWN else values_of(inner))
        if value.get(SIG) == RESOURCE:
            return value
        return {k: _constructed(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_constructed(v) for v in value]
    return value


def truthy(value: Any) -> bool:
    """JavaScript truthiness: `[]` and `{}` are true, `null`/`undefined`, `false`, `0` and `""` are not."""
    if isinstance(value, list | dict | Lifted):
        return True
    return bool(value)


def _access_entries_supported(mode: Any) -> bool:
    return mode in ("API", "API_AND_CONFIG_MAP")  # authenticationMode.ts:111-113


def _config_map_supported(mode: Any) -> bool:
    return not truthy(mode) or mode in ("CONFIG_MAP", "API_AND_CONFIG_MAP")  # authenticationMode.ts:102-109


def cluster_rules(a: Constructed) -> list[Violation]:
    """The checks `createCluster`/`createCore` make before creating anything (they throw). Not here:
    an invalid `authenticationMode` (authenticationMode.ts:14-23; the SDK's enum check covers it) and
    an explicit AWS provider without `providerCredentialOpts` (cluster.ts:2096-2100), which reads
    `opts.provider`, never set when pulumi-eks is constructed through its provider (pulumi/pulumi
    sdk/nodejs/provider/server.ts:437-448 builds `opts` with `providers` only)."""
    out: list[Violation] = []
    mode = a.get("authenticationMode")

    def rule(fires: bool, path: str, message: str, where: str) -> None:
        if fires:
            out.append(Violation(f"Cluster.{path}", message, f"{SOURCE}/{where}"))

    for key in ("roleMappings", "userMappings", "instanceRoles"):  # checked on the resolved value
        rule(not _config_map_supported(mode) and bool(resolved(a.get(key))), key,
             f"non-empty {key} is refused with authenticationMode {mode!r}", "authenticationMode.ts:25-39")
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


def unexpected_effects(a: Constructed, mode: str) -> list[Violation]:
    """What pulumi-eks would create on its own that the toolkit does not leave to it in `mode`, and what
    the toolkit leaves to it that it would not create."""
    made, left = effects(a), LEFT_TO_PULUMI_EKS[mode]
    return ([Violation("Cluster", f"pulumi-eks would create its own {e}, which the toolkit makes itself or does "
                                  f"not need with cluster.mode {mode}", SOURCE) for e in sorted(made - left)]
            + [Violation("Cluster", f"pulumi-eks would not create the {e} the toolkit leaves to it with "
                                    f"cluster.mode {mode}", SOURCE) for e in sorted(left - made)])


# what the toolkit leaves to pulumi-eks: outside Auto Mode the VPC CNI and kube-proxy add-ons (Auto Mode
# runs both on its nodes itself); nothing else (no default node group, instance role, Auto Mode node role,
# CoreDNS add-on or extra security groups: the toolkit makes its own or needs none)
LEFT_TO_PULUMI_EKS = {"auto-mode": frozenset(), "karpenter": frozenset({"kube-proxy-addon", "vpc-cni-addon"}),
                      "managed-node-groups": frozenset({"kube-proxy-addon", "vpc-cni-addon"})}


def contract_data(recording: Recording, mode: str) -> dict[str, Any]:
    """Every pulumi-eks remote component the program registered, checked as pulumi-eks would take its
    inputs (`check`), and what pulumi-eks would create on its own beyond what the toolkit
    leaves to it in this mode (or fail to create that): a violation is a bug in the program, not in the
    stack's configuration."""
    checked, violations = [], []
    for r in sorted(recording.resources, key=lambda r: r.urn):
        if not r.remote or r.type.split(":", 1)[0] != PULUMI_EKS_PACKAGE or r.urn not in recording.sent:
            continue
        checked.append(r.urn)
        wire = recording.sent[r.urn]
        found = check(r.type, wire)
        if r.type == f"{PULUMI_EKS_PACKAGE}:index:Cluster" and mode in LEFT_TO_PULUMI_EKS:
            found += unexpected_effects(as_constructed(wire), mode)
        violations += [{"urn": r.urn, "type": r.type, "path": v.path, "message": v.message, "source": v.source}
                       for v in found]
    return {"checked": checked, "violations": violations}
