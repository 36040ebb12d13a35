"""Mocks for a team's own unit tests of a program that uses eks-devices (and the toolkit's own
offline engine): `pulumi.runtime.set_mocks(Mocks(), preview=False)` and the program runs as it does
under `pulumi up`, with no AWS account and no Pulumi CLI.

Pulumi's unit-testing guide mocks echo each resource's inputs as its outputs. That is not enough
for a program using eks-devices: pulumi-eks's `eks:index:Cluster` is a remote component whose
outputs (its EKS cluster, security group, kubeconfig) its provider computes, and the network asks
AWS for availability zones and subnets. `Mocks` answers those as the providers would
(`eks_devices.answers` lists each read), echoes every other resource's inputs with an id and ARN of
the shapes AWS uses, and echoes the arguments of other function calls. Subclass it to change an
answer::

    import pulumi
    from eks_devices.testing import Mocks

    pulumi.runtime.set_mocks(Mocks(region="us-east-2"), preview=False)
    # then import or build the program, and assert on its outputs in @pulumi.runtime.test functions
"""

from __future__ import annotations

import inspect
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.sync_await import _sync_await

from eks_devices import answers, identity

__all__ = ["ACCOUNT_ID", "CALLER_ARN", "Mocks", "aws_id", "session_context"]

ACCOUNT_ID = "123456789012"  # the mocked account
CALLER_ARN = f"arn:aws:iam::{ACCOUNT_ID}:user/offline"  # who runs the program, unless a test says


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


class Mocks(answers.AnsweringMocks):
    """Outputs a real provider would return, enough for the program to run to completion.

    Remote components return what their provider would: `eks:index:Cluster` answers with resource
    references (its `aws:eks/cluster:Cluster`, the Kubernetes provider in `core`) registered with
    the mock monitor, so pulumi_eks's Python properties (`eks_cluster`, `core`, `kubeconfig`, …)
    resolve to real objects as they do under `pulumi up`.

    `new_resource` never changes the inputs it is given (the offline engine copies the outputs that
    are inputs from the request as sent, `offline/echo.py`).
    """

    def __init__(self, region: str = "us-west-2", subnet_zones: Mapping[str, str] | None = None,
                 caller_arn: str = CALLER_ARN, access_entries: Iterable[tuple[str, str]] = ()):
        self.region = region  # the stack's aws:region: zones, ARNs and endpoints are in it
        self.subnet_zones = dict(subnet_zones or {})  # brought subnets' zones, where the test knows them
        self.caller_arn = caller_arn  # who runs the program: a user, role or assumed-role session ARN
        # (cluster name, principal ARN) of the access entries EKS already has, such as the creator's
        # bootstrap admin on a cluster created before (`aws:eks/getAccessEntry` finds them, and only them)
        self.access_entries = set(access_entries)

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
        elif typ == answers.EKS_CLUSTER.token:
            outputs.update(self._eks_component_outputs(name, inputs, args.transforms))
        return rid, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        token = args.token
        if token == answers.AVAILABILITY_ZONES.token:
            zones = _zones(self.region)
            return {"names": zones, "zoneIds": [f"usw2-az{i}" for i in range(1, 7)], "id": self.region}, []
        if token == answers.CALLER_IDENTITY.token:
            return {"accountId": ACCOUNT_ID, "arn": self.caller_arn, "userId": "OFFLINE", "id": ACCOUNT_ID}, []
        if token == answers.SESSION_CONTEXT.token:
            return session_context(str(args.args.get("arn", ""))), []
        if token == answers.ACCESS_ENTRY:
            key = (str(args.args.get("clusterName")), str(args.args.get("principalArn")))
            if key not in self.access_entries:  # the provider's answer for an entry (or cluster) EKS lacks
                return {}, [("principalArn", f"no access entry for {key[1]} on cluster {key[0]}")]
            return {**args.args, "accessEntryArn": f"arn:aws:eks:{self.region}:{ACCOUNT_ID}:access-entry/{key[0]}/x",
                    "type": "STANDARD", "id": f"{key[0]}:{key[1]}"}, []
        if token == "aws:index/getPartition:getPartition":
            return {"partition": "aws", "dnsSuffix": "amazonaws.com", "id": "aws"}, []
        if token == "aws:index/getRegion:getRegion":
            return {"name": self.region, "region": self.region, "id": self.region}, []
        if token == answers.SUBNET.token:
            return self.subnet(str(args.args.get("id", ""))), []
        return dict(args.args), []

    def subnet(self, subnet_id: str) -> dict[str, Any]:
        """A brought subnet as EC2 describes it: in its zone from `subnet_zones`, else in one of the
        region's first three, fixed by the id (so a test can predict it with this same method)."""
        zone = self.subnet_zones.get(subnet_id) or _zones(self.region)[zlib.crc32(subnet_id.encode()) % 3]
        return {"id": subnet_id, "availabilityZone": zone, "vpcId": "vpc-brought",
                "cidrBlock": "10.0.0.0/20", "mapPublicIpOnLaunch": False}

    def _eks_component_outputs(self, name: str, inputs: dict[str, Any],
                               transforms: Sequence[pulumi.ResourceTransform] = ()) -> dict[str, Any]:
        """What pulumi-eks's Cluster returns: its EKS cluster (as pulumi-eks configures it from the
        inputs, pulumi/pulumi-eks v4.3.0, then through the component's transforms, which the engine
        applies to a packaged component's children) and Kubernetes provider as references, the
        kubeconfig, the security groups."""
        cluster_name = inputs.get("name") or name
        auto = bool((inputs.get("autoMode") or {}).get("enabled"))
        cluster_sg = aws_id("aws:ec2/securityGroup:SecurityGroup", f"{cluster_name}-cluster")
        eks_state = _transformed(answers.EKS_CLUSTER_CHILD, f"{name}-eksCluster", transforms, {
            **_eks_cluster_outputs(cluster_name, self.region), **self._eks_cluster_config(inputs, auto)})
        eks_state["vpcConfig"]["clusterSecurityGroupId"] = cluster_sg
        eks_state["arn"] = f"arn:aws:eks:{self.region}:{ACCOUNT_ID}:cluster/{cluster_name}"
        kubeconfig = _kubeconfig(cluster_name, self.region)
        eks_ref = self._reference(answers.EKS_CLUSTER_CHILD, f"{name}-eksCluster", cluster_name, eks_state)
        provider_ref = self._reference(identity.PROVIDER_TYPE_PREFIX + "kubernetes", f"{name}-eks-k8s",
                                       f"{name}-eks-k8s-id", {"kubeconfig": json.dumps(kubeconfig)})
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
    def _reference(type_: str, name: str, rid: str, state: dict[str, Any]) -> dict[str, Any]:
        """A resource reference to a child of the remote component being answered, registered with the
        mock monitor so that deserializing it (a `getResource` call) finds its state. Its URN is the
        one the engine gives it under the offline engine, whose monitor knows the component's URN;
        under the SDK's mock monitor, spelled as that monitor spells URNs (the component's type only)."""
        monitor = pulumi_settings.get_monitor()
        component = getattr(monitor, "registering", None)
        urn = (monitor.make_urn(component(), type_, name) if component is not None
               else identity.urn(f"{answers.EKS_CLUSTER.token}${type_}", name))
        monitor.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(urn, rid, {**state, "id": rid})
        return {pulumi.runtime.rpc._special_sig_key: pulumi.runtime.rpc._special_resource_sig,
                "urn": urn, "id": rid, "name": name, "type": type_}


def session_context(arn: str) -> dict[str, Any]:
    """`aws:iam/getSessionContext` as AWS answers: the role behind an assumed-role session, any other
    ARN passed through (this mock knows no role paths)."""
    parts = arn.split(":", 5)
    if len(parts) == 6 and parts[2] == "sts" and parts[5].startswith("assumed-role/"):
        _, role, session = parts[5].split("/", 2)
        issuer = f"arn:{parts[1]}:iam::{parts[4]}:role/{role}"
        return {"arn": arn, "issuerArn": issuer, "issuerName": role, "sessionName": session, "issuerId": "OFFLINE"}
    return {"arn": arn, "issuerArn": arn, "issuerName": arn.rsplit("/", 1)[-1], "sessionName": "", "issuerId": ""}


def _transformed(type_: str, name: str, transforms: Sequence[pulumi.ResourceTransform],
                 props: dict[str, Any]) -> dict[str, Any]:
    """A remote component's child's properties after the component's transforms, as the engine runs
    them on the child's registration (each may return None: unchanged)."""
    for transform in transforms:
        result = transform(pulumi.ResourceTransformArgs(True, type_, name, props, pulumi.ResourceOptions()))
        if inspect.isawaitable(result):
            result = _sync_await(result)
        if result is not None:
            props = dict(result.props)
    return props


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
