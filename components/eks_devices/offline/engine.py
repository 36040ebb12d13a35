"""Run the real Pulumi program under Pulumi's built-in mock engine, recording every resource.

This is what `eks-devices preview` and the component tests stand on: no AWS account, no Pulumi
CLI, no network. The monitor records each registration with the options the engine would see
(parent, provider, replace-on-changes, delete-before-replace, protect, dependencies), and the
mocks answer provider calls (availability zones, caller identity) and give remote components the
outputs the program reads, so the program runs exactly as it does under `pulumi up`.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from eks_devices.offline import output_values

ACCOUNT_ID = "123456789012"


@dataclass
class Registered:
    """One resource as the engine would receive it."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    remote: bool
    provider: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    replace_on_changes: list[str]
    delete_before_replace: bool
    protect: bool
    depends_on: list[str]
    aliases: list[str] = field(default_factory=list)  # the old URNs this resource answers to
    retain_on_delete: bool = False
    ignore_changes: list[str] = field(default_factory=list)


@dataclass
class Recording:
    resources: list[Registered] = field(default_factory=list)
    exports: dict[str, Any] = field(default_factory=dict)
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)  # remote components' inputs on the wire, by URN

    def of_type(self, type_: str) -> list[Registered]:
        return [r for r in self.resources if r.type == type_]

    def named(self, name: str) -> Registered:
        found = [r for r in self.resources if r.name == name]
        if len(found) != 1:
            raise KeyError(f"{len(found)} resources named {name!r}")
        return found[0]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.resources:
            out[r.type] = out.get(r.type, 0) + 1
        return dict(sorted(out.items()))


# EC2 id prefixes, so mocked ids look like the ones AWS returns (and pass the CRD id patterns).
ID_PREFIXES = {
    "aws:ec2/vpc:Vpc": "vpc-", "aws:ec2/subnet:Subnet": "subnet-", "aws:ec2/securityGroup:SecurityGroup": "sg-",
    "aws:ec2/internetGateway:InternetGateway": "igw-", "aws:ec2/natGateway:NatGateway": "nat-",
    "aws:ec2/eip:Eip": "eipalloc-", "aws:ec2/routeTable:RouteTable": "rtb-",
    "aws:ec2/launchTemplate:LaunchTemplate": "lt-", "aws:ec2/placementGroup:PlacementGroup": "pg-",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr-",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sgr-",
}


def aws_id(type_: str, name: str) -> str:
    """A deterministic id for a mocked resource: EC2-shaped (`sg-0a1b…`) where AWS's ids are, else `<name>-id`."""
    prefix = ID_PREFIXES.get(type_)
    if prefix is None:
        return f"{name}-id"
    return f"{prefix}{zlib.crc32(f'{type_}/{name}'.encode()):08x}{zlib.crc32(name.encode()):08x}"[:len(prefix) + 17]


def _zones(region: str) -> list[str]:
    return [f"{region}{letter}" for letter in "abcdef"]


class OfflineMocks(pulumi.runtime.Mocks):
    """Outputs a real provider would return, enough for the program to run to completion.

    Remote components return what their provider would: `eks:index:Cluster` answers with resource
    references (its `aws:eks/cluster:Cluster`, the Kubernetes provider in `core`) registered with
    the mock monitor, so pulumi_eks's Python properties (`eks_cluster`, `core`, `kubeconfig`, …)
    resolve to real objects as they do under `pulumi up`.
    """

    def __init__(self, region: str):
        self.region = region

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        name, typ, inputs = args.name, args.typ, dict(args.inputs)
        rid = aws_id(typ, name)
        arn = f"arn:aws:{typ.split(':')[1].split('/')[0]}:{self.region}:{ACCOUNT_ID}:{name}"
        outputs: dict[str, Any] = {"arn": arn, "id": rid, **inputs}
        if typ == "aws:iam/role:Role":
            outputs["arn"] = f"arn:aws:iam::{ACCOUNT_ID}:role/{inputs.get('name', name)}"
            outputs.setdefault("name", name)
        elif typ == "aws:sqs/queue:Queue":
            outputs.setdefault("name", name)
            outputs["url"] = f"https://sqs.{self.region}.amazonaws.com/{ACCOUNT_ID}/{outputs['name']}"
        elif typ == "aws:ec2/launchTemplate:LaunchTemplate":
            outputs["latestVersion"] = 1
        elif typ == "aws:eks/cluster:Cluster":
            outputs.update(_eks_cluster_outputs(inputs.get("name") or name, self.region))
        elif typ == "eks:index:Cluster":
            outputs.update(self._eks_component_outputs(name, inputs))
        return rid, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        token = args.token
        if token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            zones = _zones(self.region)
            return {"names": zones, "zoneIds": [f"usw2-az{i}" for i in range(1, 7)], "id": self.region}, []
        if token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {"accountId": ACCOUNT_ID, "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/offline",
                    "userId": "OFFLINE", "id": ACCOUNT_ID}, []
        if token == "aws:index/getPartition:getPartition":
            return {"partition": "aws", "dnsSuffix": "amazonaws.com", "id": "aws"}, []
        if token == "aws:index/getRegion:getRegion":
            return {"name": self.region, "region": self.region, "id": self.region}, []
        if token == "aws:ec2/getSubnet:getSubnet":
            return self.subnet(str(args.args.get("id", ""))), []
        return dict(args.args), []

    def subnet(self, subnet_id: str) -> dict[str, Any]:
        """A brought subnet as EC2 describes it: its zone is one of the region's first three, fixed
        by the id (so a test can predict it with this same method)."""
        zone = _zones(self.region)[zlib.crc32(subnet_id.encode()) % 3]
        return {"id": subnet_id, "availabilityZone": zone, "vpcId": "vpc-brought",
                "cidrBlock": "10.0.0.0/20", "mapPublicIpOnLaunch": False}

    def _eks_component_outputs(self, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """What pulumi-eks's Cluster returns: its EKS cluster (as pulumi-eks configures it from the
        inputs, pulumi/pulumi-eks v4.3.0) and Kubernetes provider as references, the kubeconfig, the security groups."""
        cluster_name = inputs.get("name") or name
        auto = bool((inputs.get("autoMode") or {}).get("enabled"))
        cluster_sg = aws_id("aws:ec2/securityGroup:SecurityGroup", f"{cluster_name}-cluster")
        eks_state = {**_eks_cluster_outputs(cluster_name, self.region), **self._eks_cluster_config(inputs, auto)}
        eks_state["vpcConfig"]["clusterSecurityGroupId"] = cluster_sg
        eks_state["arn"] = f"arn:aws:eks:{self.region}:{ACCOUNT_ID}:cluster/{cluster_name}"
        kubeconfig = _kubeconfig(cluster_name, self.region)
        eks_ref = self._reference("eks:index:Cluster$aws:eks/cluster:Cluster", f"{name}-eksCluster",
                                  cluster_name, eks_state)
        provider_ref = self._reference("eks:index:Cluster$pulumi:providers:kubernetes", f"{name}-eks-k8s",
                                       f"{name}-eks-k8s-id", {"kubeconfig": json.dumps(kubeconfig)},
                                       type_="pulumi:providers:kubernetes")
        subnets = eks_state["vpcConfig"]["subnetIds"]
        return {
            "kubeconfig": kubeconfig,
            "kubeconfigJson": json.dumps(kubeconfig),
            "eksCluster": eks_ref,
            "clusterSecurityGroupId": cluster_sg,
            "nodeSecurityGroupId": cluster_sg,
            "oidcProviderArn": f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/oidc.eks.{self.region}.amazonaws.com/id/X",
            "oidcIssuer": f"oidc.eks.{self.region}.amazonaws.com/id/X",
            "oidcProviderUrl": f"https://oidc.eks.{self.region}.amazonaws.com/id/X",
            "autoModeNodeRoleName": (f"{name}-nodeRole" if auto and (inputs.get("autoMode") or {}).get(
                "createNodeRole", True) is not False else ""),
            "instanceRoles": [],
            "core": {
                "cluster": eks_ref, "provider": provider_ref, "endpoint": eks_state["endpoint"],
                "vpcId": inputs.get("vpcId"), "subnetIds": subnets, "instanceRoles": [],
                "nodeGroupOptions": {}, "kubeconfig": kubeconfig, "tags": inputs.get("tags"),
                "privateSubnetIds": inputs.get("privateSubnetIds"), "publicSubnetIds": inputs.get("publicSubnetIds"),
            },
        }

    @staticmethod
    def _eks_cluster_config(inputs: dict[str, Any], auto: bool) -> dict[str, Any]:
        """The `aws:eks/cluster:Cluster` settings pulumi-eks derives from its inputs."""
        public = inputs.get("endpointPublicAccess", True)
        state: dict[str, Any] = {
            "version": inputs.get("version"),
            "enabledClusterLogTypes": inputs.get("enabledClusterLogTypes") or [],
            "bootstrapSelfManagedAddons": False if auto else inputs.get("bootstrapSelfManagedAddons", True),
            "vpcConfig": {"subnetIds": inputs.get("subnetIds") or [*(inputs.get("publicSubnetIds") or []),
                                                                   *(inputs.get("privateSubnetIds") or [])],
                          "endpointPrivateAccess": inputs.get("endpointPrivateAccess", False),
                          "endpointPublicAccess": public,
                          "publicAccessCidrs": inputs.get("publicAccessCidrs") or (["0.0.0.0/0"] if public else [])},
        }
        if inputs.get("authenticationMode"):
            state["accessConfig"] = {"authenticationMode": inputs["authenticationMode"],
                                     "bootstrapClusterCreatorAdminPermissions": True}
        if inputs.get("encryptionConfigKeyArn"):
            state["encryptionConfig"] = {"provider": {"keyArn": inputs["encryptionConfigKeyArn"]},
                                         "resources": ["secrets"]}
        if auto:
            compute = (inputs.get("autoMode") or {}).get("computeConfig") or {}
            state["computeConfig"] = {"enabled": True, "nodePools": ["general-purpose", "system"], **compute}
            state["storageConfig"] = {"blockStorage": {"enabled": True}}
            state["kubernetesNetworkConfig"] = {"elasticLoadBalancing": {"enabled": True}, "ipFamily": "ipv4"}
        return state

    @staticmethod
    def _reference(qualified_type: str, name: str, rid: str, state: dict[str, Any],
                   type_: str | None = None) -> dict[str, Any]:
        """A resource reference to a child of a remote component, registered with the mock monitor
        so that deserializing it (a `getResource` call) finds its state."""
        monitor = pulumi_settings.get_monitor()
        urn = f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{qualified_type}::{name}"
        monitor.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(urn, rid, {**state, "id": rid})
        return {pulumi.runtime.rpc._special_sig_key: pulumi.runtime.rpc._special_resource_sig,
                "urn": urn, "id": rid, "name": name, "type": type_ or qualified_type.split("$")[-1]}


def _eks_cluster_outputs(name: str, region: str) -> dict[str, Any]:
    return {
        "name": name,
        "endpoint": f"https://{name}.gr7.{region}.eks.amazonaws.com",
        "certificateAuthority": {"data": "T0ZGTElORQ=="},
        "vpcConfig": {"clusterSecurityGroupId": f"sg-{name}-cluster"},
        "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/X"}]}],
    }


def _kubeconfig(name: str, region: str) -> dict[str, Any]:
    server = f"https://{name}.gr7.{region}.eks.amazonaws.com"
    token = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws",
             "args": ["eks", "get-token", "--cluster-name", name]}
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "aws",
        "clusters": [{"name": "kubernetes",
                      "cluster": {"server": server, "certificate-authority-data": "T0ZGTElORQ=="}}],
        "contexts": [{"name": "aws", "context": {"cluster": "kubernetes", "user": "aws"}}],
        "users": [{"name": "aws", "user": {"exec": token}}],
    }


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The mock monitor, keeping the resource options that `MockResourceArgs` leaves out, and
    supporting output values as the real engine does (see `output_values`)."""

    def __init__(self, mocks: OfflineMocks, recording: Recording):
        super().__init__(mocks)
        self.recording = recording
        self._root = ""
        self._aliases: dict[str, list[str]] = {}  # URN → the old URNs it answers to, kept as resources register

    def GetDeploymentInfo(self, request: Any) -> Any:  # gRPC method name
        return output_values.with_output_values(super().GetDeploymentInfo(request))

    def RegisterResource(self, request: Any) -> Any:  # gRPC method name
        response = super().RegisterResource(output_values.for_mocks(request))
        if request.type == "pulumi:pulumi:Stack":
            self._root = response.urn  # what "no parent" means here: the stack's resources are its children
            return response
        if request.remote:
            self.recording.sent[response.urn] = output_values.sent(request.object)
        inputs = wire_inputs(request.object)
        state = self.resources[response.urn].state if response.urn in self.resources else {}
        aliases = self._aliases[response.urn] = self._alias_urns(request)
        self.recording.resources.append(Registered(
            type=request.type, name=request.name, urn=response.urn, parent=request.parent,
            custom=bool(request.custom), remote=bool(request.remote), provider=request.provider,
            inputs=_plain(inputs), outputs=_plain(state),
            replace_on_changes=list(request.replaceOnChanges),
            delete_before_replace=bool(request.deleteBeforeReplace), protect=bool(request.protect),
            depends_on=list(request.dependencies), aliases=aliases,
            retain_on_delete=bool(request.retainOnDelete), ignore_changes=list(request.ignoreChanges),
        ))
        return response

    def _alias_urns(self, request: Any) -> list[str]:
        """The URNs a resource's aliases stand for, spelled as this monitor spells URNs: each alias
        spec (name, type, stack, project, parent; unset parts are the resource's own) under its
        parent and under every URN the parent itself answers to, as the engine inherits a parent's
        aliases (pulumi/pulumi v3.259.0 pkg/resource/deploy/step_generator.go:621, generateAliases)."""
        own_parent = request.parent
        inherited = self._aliases
        out: list[str] = []
        for alias in request.aliases:
            if alias.HasField("urn"):
                out.append(alias.urn)
                continue
            spec = alias.spec
            if spec.noParent:
                parents = [self._root]
            elif spec.parentUrn:
                parents = [spec.parentUrn, *inherited.get(spec.parentUrn, [])]
            else:
                parents = [own_parent, *inherited.get(own_parent, [])]
            for parent in parents:
                out.append(_urn(parent, spec.type or request.type, spec.name or request.name,
                                spec.stack or pulumi.get_stack(), spec.project or pulumi.get_project()))
        if own_parent in inherited:  # the parent's aliases alone also move the child (same name and type)
            for parent in inherited[own_parent]:
                out.append(_urn(parent, request.type, request.name, pulumi.get_stack(), pulumi.get_project()))
        return sorted(set(out) - {self.make_urn(request.parent, request.type, request.name)})


def _urn(parent: str, type_: str, name: str, stack: str, project: str) -> str:
    """A URN as the mock monitor makes them (`MockMonitor.make_urn`): the parent's own type, then ours."""
    if parent:
        type_ = parent.split("::")[2].split("$").pop() + "$" + type_
    return "urn:pulumi:" + "::".join([stack, project, type_, name])


_SIG = "4dabf18193072939515e22adb298388d"  # pulumi's special-value signature key on the wire
_SECRET, _RESOURCE, _OUTPUT = ("1b47061264138c4ac30d75fd1eb44270", "5cf8f73096256a8f31e491e813e4eb8e",
                               "d0e6a833031e9bbcd3f4e8bde6ca49a4")


def _unwire(value: Any) -> Any:
    """Special wire values made plain: secrets and output values by their value, resource references
    by their URN, unknowns as None. Nulls stay (pulumi's own decoding drops them, but the engine
    receives them: a null Helm value deletes a chart default)."""
    if isinstance(value, dict):
        sig = value.get(_SIG)
        if sig in (_SECRET, _OUTPUT):
            return _unwire(value.get("value"))
        if sig == _RESOURCE:
            return value.get("urn")
        return {k: _unwire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwire(v) for v in value]
    return None if value == pulumi.runtime.rpc.UNKNOWN else value


def wire_inputs(struct: Any) -> dict[str, Any]:
    """A resource's inputs exactly as sent to the engine (nulls included)."""
    return _unwire(json_format.MessageToDict(struct))


def _plain(value: Any) -> Any:
    """Protobuf-free, JSON-friendly copy of deserialized properties (unknowns become None)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire carries every number as a double; manifests want integers back
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def config_strings(config: dict[str, Any]) -> dict[str, str]:
    """Stack config as the engine hands it to a program: structured values as JSON text."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def run(program: Callable[[], None], config: dict[str, Any], stack: str = "dev",
        project: str = "eks-devices") -> Recording:
    """Run `program` under the mock engine with `config` as the stack's configuration."""
    recording = Recording()
    region = str(config.get("aws:region", "us-west-2"))
    mocks = OfflineMocks(region)
    pulumi.runtime.set_all_config(config_strings(config))
    pulumi_settings.ROOT.set(None)
    pulumi_mocks.set_mocks(mocks, project=project, stack=stack, preview=False,
                           monitor=RecordingMonitor(mocks, recording))
    pulumi_settings.SETTINGS.rpc_manager.clear()
    pulumi_settings.SETTINGS.outputs.clear()
    exports: dict[str, Any] = {}

    def program_and_exports() -> None:
        program()
        root = pulumi_settings.get_root_resource()
        outputs = pulumi.Output.from_input(dict(getattr(root, "outputs", {})))
        outputs.apply(exports.update)

    try:
        _sync_await(run_pulumi_func(program_and_exports))
    finally:
        pulumi_settings.ROOT.set(None)
    recording.exports = _plain(exports)
    return recording
