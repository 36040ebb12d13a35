"""The replace-forcing table: every entry cites its upstream source, and every resource type the
toolkit's components create has an entry (a new type without one fails here)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pulumi_aws
import pulumi_eks
import pulumi_kubernetes
import pytest

import eks_devices
from eks_devices.core import derive, manifests
from eks_devices.core.knowledge import replacement
from eks_devices.core.manifests.nodes import NODE_CLASS_KINDS

PACKAGE = Path(eks_devices.__file__).parent
SDKS = {"aws": pulumi_aws, "k8s": pulumi_kubernetes, "eks": pulumi_eks}
UPSTREAM = ("hashicorp/terraform-provider-aws ", "pulumi/pulumi-kubernetes ", "pulumi/pulumi-eks ",
            "kubernetes/kubernetes ")


def _dotted(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return [node.id, *parts] if isinstance(node, ast.Name) else None


def constructed_types() -> set[str]:
    """Type tokens of every `aws.…(`, `k8s.…(` and `eks.…(` resource constructor the components call."""
    found: set[str] = set()
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and (parts := _dotted(node.func)) and parts[0] in SDKS and len(parts) > 1:
                target = SDKS[parts[0]]
                for part in parts[1:]:
                    target = getattr(target, part)
                if isinstance(target, type) and (token := getattr(target, "pulumi_type", None)):
                    found.add(token)
    return found


def manifest_types() -> set[str]:
    """`kubernetes:<apiVersion>:<kind>` of every object manifest the core builds (dicts with apiVersion,
    kind and metadata, wherever in the core: the manifests and the claims derive builds), and of the NodeClass
    kinds."""
    found = {f"kubernetes:{api}:{kind}" for api, kind in NODE_CLASS_KINDS.values()}
    modules = [importlib.import_module(f"{package.__name__}.{info.name}")
               for package in (manifests, derive) for info in pkgutil.iter_modules(package.__path__)]
    for module in modules:
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Dict):
                continue
            entries = {k.value: v for k, v in zip(node.keys, node.values, strict=True) if isinstance(k, ast.Constant)}
            if not {"apiVersion", "kind", "metadata"} <= set(entries) or not isinstance(entries["kind"], ast.Constant):
                continue
            api = entries["apiVersion"]
            version = api.value if isinstance(api, ast.Constant) else getattr(module, api.id, None) \
                if isinstance(api, ast.Name) else None
            if isinstance(version, str):
                api_version = version if "/" in version else f"core/{version}"
                found.add(f"kubernetes:{api_version}:{entries['kind'].value}")
    return found


def test_every_entry_cites_an_upstream_source() -> None:
    assert len(replacement.TABLE) >= 30
    for type_, entry in replacement.TABLE.items():
        assert entry.source.startswith(UPSTREAM), type_
        assert entry.paths or "no ForceNew" in entry.source or "in place" in entry.source, type_
        assert not entry.stateful or entry.loses, f"{type_}: a stateful entry says what is lost"


def test_every_resource_type_the_components_create_has_an_entry() -> None:
    types = constructed_types() | manifest_types()
    # the scan finds what it should (so an empty scan cannot pass)
    assert {"aws:ec2/subnet:Subnet", "aws:eks/nodeGroup:NodeGroup", "eks:index:Cluster", "pulumi:providers:kubernetes",
            "kubernetes:helm.sh/v3:Release", "kubernetes:karpenter.sh/v1:NodePool",
            "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
            "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain", "kubernetes:core/v1:Namespace"} <= types
    assert sorted(types - set(replacement.TABLE)) == []


REVISION = re.compile(r"\bv\d+\.\d+\.\d+\b|@[0-9a-f]{8}\b")


def test_every_entry_names_the_revision_it_was_read_at() -> None:
    """A tag (`v4.3.0`) or a commit (`@00555dc5`) in every citation: "main" is not a revision."""
    unpinned = sorted(type_ for type_, entry in replacement.TABLE.items() if not REVISION.search(entry.source))
    assert unpinned == []


def test_no_path_is_both_replace_forcing_and_immutable() -> None:
    for type_, entry in replacement.TABLE.items():
        assert not set(entry.paths) & set(entry.immutable), type_


def _verdict(type_: str, path: str) -> str:
    """What the table says a change at `path` does: the path or one above it decides."""
    entry = replacement.entry(type_)
    assert entry is not None

    def hit(rules: tuple[str, ...]) -> bool:
        return any(path == rule or path.startswith(f"{rule}.") for rule in rules)
    return "replace" if hit(entry.paths) else "fails" if hit(entry.immutable) else "update"


@pytest.mark.parametrize(("type_", "path", "verdict"), [
    # pulumi-eks v4.3.0 cluster.ts:751-755 ignores it on the aws.eks.Cluster it creates
    ("eks:index:Cluster", "bootstrapSelfManagedAddons", "update"),
    # aws_eks_cluster CustomizeDiff: a changed compute_config.node_role_arn forces a new cluster
    ("eks:index:Cluster", "autoMode.computeConfig.nodeRoleArn", "replace"),
    ("eks:index:Cluster", "autoMode.computeConfig.nodePools", "update"),
    # the cluster security group is replaced, and EKS does not move a cluster to another VPC
    ("eks:index:Cluster", "vpcId", "fails"),
    ("eks:index:Cluster", "subnetIds", "update"),
    ("eks:index:Cluster", "version", "update"),
    ("eks:index:Cluster", "encryptionConfigKeyArn", "replace"),
    ("aws:ec2/eip:Eip", "customerOwnedIpv4Pool", "update"),
    ("aws:ec2/natGateway:NatGateway", "secondaryPrivateIpAddressCount", "replace"),
    ("aws:ec2/placementGroup:PlacementGroup", "strategy", "replace"),
    ("kubernetes:resource.nvidia.com/v1beta1:ComputeDomain", "spec.numNodes", "fails"),
    ("kubernetes:karpenter.sh/v1:NodePool", "spec.template.spec.nodeClassRef.group", "fails"),
    ("kubernetes:karpenter.sh/v1:NodePool", "spec.template.spec.nodeClassRef.name", "update"),
    ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "spec.role", "update"),
])
def test_verified_provider_behaviour(type_: str, path: str, verdict: str) -> None:
    """Behaviour read in the upstream sources the entries cite (see each entry's source)."""
    assert _verdict(type_, path) == verdict
