"""The whole program per shipped stack under Pulumi's mock engine, the Platform component built
directly, and a stack with error findings or bad configuration registering nothing."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from eks_devices.core import planner as planning
from eks_devices.core.spec.stack import parse
from eks_devices.offline import engine as offline
from eks_devices.platform import Platform
from eks_devices.program import PlanRejected

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "__main__.py")

NETWORK_SINGLE_NAT = {
    "aws:ec2/vpc:Vpc": 1, "aws:ec2/internetGateway:InternetGateway": 1, "aws:ec2/subnet:Subnet": 6,
    "aws:ec2/eip:Eip": 1, "aws:ec2/natGateway:NatGateway": 1, "aws:ec2/routeTable:RouteTable": 4,
    "aws:ec2/route:Route": 4, "aws:ec2/routeTableAssociation:RouteTableAssociation": 6,
    "aws:ec2/securityGroup:SecurityGroup": 1,
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": 1,
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": 1,
    "eks-devices:index:Network": 1,
}
NETWORK_NAT_PER_ZONE = {**NETWORK_SINGLE_NAT, "aws:ec2/eip:Eip": 3, "aws:ec2/natGateway:NatGateway": 3}
CLUSTER_COMMON = {
    "eks-devices:index:Cluster": 1, "eks:index:Cluster": 1, "aws:kms/key:Key": 1, "aws:kms/alias:Alias": 1,
    "aws:cloudwatch/logGroup:LogGroup": 1,
    "aws:ec2/tag:Tag": 1, "pulumi:providers:kubernetes": 1,
}
SYSTEM_NODES = {"aws:ec2/launchTemplate:LaunchTemplate": 1, "aws:eks/nodeGroup:NodeGroup": 1}
EXPECTED = {
    # Auto Mode: two node roles (built-in pools, custom NodeClasses), the NodeClass role's access.
    "dev": {**NETWORK_SINGLE_NAT, **CLUSTER_COMMON,
            "aws:iam/role:Role": 2, "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 4,
            "aws:eks/accessEntry:AccessEntry": 1, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": 1},
    # Karpenter: system nodes (+ CoreDNS), node and controller roles, six controller policies,
    # Pod Identity agent and association, the queue and its policy, five rules and targets, two charts.
    "staging": {**NETWORK_NAT_PER_ZONE, **CLUSTER_COMMON, **SYSTEM_NODES,
                "eks-devices:index:Karpenter": 1, "aws:iam/role:Role": 3, "aws:iam/policy:Policy": 6,
                "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 4 + 4 + 6,
                "aws:eks/addon:Addon": 2, "aws:eks/accessEntry:AccessEntry": 1,
                "aws:eks/podIdentityAssociation:PodIdentityAssociation": 1,
                "aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1,
                "aws:cloudwatch/eventRule:EventRule": 5, "aws:cloudwatch/eventTarget:EventTarget": 5,
                "kubernetes:helm.sh/v3:Release": 2},
    # Managed node groups: one node role for every group, system nodes and CoreDNS.
    "prod": {**NETWORK_NAT_PER_ZONE, **CLUSTER_COMMON, **SYSTEM_NODES,
             "aws:iam/role:Role": 1, "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 4,
             "aws:eks/addon:Addon": 1},
}
ALWAYS_EXPORTED = {"clusterName", "kubeconfig", "vpcId", "privateSubnetIds", "publicSubnetIds",
                   "privateSubnetsByZone", "efaSecurityGroupId", "nodeRoleName", "nodeRoleArn", "devicePlan"}
KARPENTER_EXPORTED = {"interruptionQueueName", "karpenterControllerRoleArn", "karpenterNodeRoleArn"}


def stack_config(stack: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]


def run_program(cfg: dict[str, Any], stack: str) -> tuple[offline.Recording, dict[str, Any]]:
    """Run `__main__.py`; also report whether the kubeconfig export is secret, and catch a rejected plan."""
    seen: dict[str, Any] = {}

    def program() -> None:
        try:
            runpy.run_path(MAIN)
        except PlanRejected as exc:
            seen["rejected"] = exc
            return
        kubeconfig = pulumi.runtime.settings.get_root_resource().outputs["kubeconfig"]
        pulumi.export("kubeconfigIsSecret", pulumi.Output.from_input(kubeconfig.is_secret()))

    return offline.run(program, cfg, stack=stack), seen


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def shipped(request: pytest.FixtureRequest) -> tuple[str, offline.Recording]:
    rec, seen = run_program(stack_config(request.param), request.param)
    assert "rejected" not in seen
    return request.param, rec


def ancestors(rec: offline.Recording, resource: offline.Registered) -> list[str]:
    """Types of a resource's parents, nearest first (from the parents the engine was told)."""
    by_urn = {r.urn: r for r in rec.resources}
    out, parent = [], by_urn.get(resource.parent)
    while parent is not None:
        out.append(parent.type)
        parent = by_urn.get(parent.parent)
    return out


def platform_resources(rec: offline.Recording) -> dict[str, int]:
    """Counts of what the Network and Cluster components make (other components under the
    Platform are not this inventory's business)."""
    owners = ("eks-devices:index:Network", "eks-devices:index:Cluster")
    counts: dict[str, int] = {}
    for r in rec.resources:
        if r.type in owners or set(owners) & set(ancestors(rec, r)):
            counts[r.type] = counts.get(r.type, 0) + 1
    return dict(sorted(counts.items()))


def test_shipped_stack_builds_the_expected_resources(shipped: tuple[str, offline.Recording]) -> None:
    stack, rec = shipped
    assert platform_resources(rec) == dict(sorted(EXPECTED[stack].items()))
    assert len(rec.of_type("eks-devices:index:Platform")) == 1


def test_shipped_stack_exports_the_cluster_and_network(shipped: tuple[str, offline.Recording]) -> None:
    stack, rec = shipped
    expected = ALWAYS_EXPORTED | (KARPENTER_EXPORTED if stack == "staging" else set())
    assert expected <= set(rec.exports)
    assert not (KARPENTER_EXPORTED - expected) & set(rec.exports)
    assert rec.exports["clusterName"] == stack_config(stack)["eks-devices:cluster"]["name"]
    assert rec.exports["kubeconfigIsSecret"] is True
    assert rec.exports["devicePlan"]["mode"] == stack_config(stack)["eks-devices:cluster"]["mode"]


def test_every_resource_hangs_under_the_platform(shipped: tuple[str, offline.Recording]) -> None:
    _, rec = shipped
    (platform,) = rec.of_type("eks-devices:index:Platform")
    for r in rec.resources:
        if r is not platform:
            assert "eks-devices:index:Platform" in ancestors(rec, r), r.name


def _platform_ready(cfg: dict[str, Any]) -> tuple[offline.Recording, planning.Plan]:
    plan = planning.build(parse(cfg))

    def program() -> None:
        platform = Platform(plan.spec.cluster.name, plan)
        pulumi.export("ready", pulumi.Output.all(*[r.urn for r in platform.cluster.ready]))
        pulumi.export("zones", platform.network.availability_zones)

    return offline.run(program, cfg, stack="direct"), plan


@pytest.mark.parametrize("mode, expected", [
    ("auto-mode", {"eks:index:Cluster", "aws:eks/accessEntry:AccessEntry",
                   "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"}),
    ("karpenter", {"kubernetes:helm.sh/v3:Release"}),
    ("managed-node-groups", {"aws:eks/nodeGroup:NodeGroup", "aws:eks/addon:Addon"}),
])
def test_cluster_ready_is_what_custom_resources_and_pools_wait_for(mode: str, expected: set[str]) -> None:
    cfg = {"aws:region": "eu-central-1",
           "eks-devices:cluster": {"name": "direct", "version": "1.36", "mode": mode},
           "eks-devices:nodePools": {"gpu": {"instanceTypes": ["g6e.xlarge"], "provisioning": "static",
                                             "replicas": 1}}}
    rec, _ = _platform_ready(cfg)
    types = {r.urn: r.type for r in rec.resources}
    ready_types = {types[urn] for urn in rec.exports["ready"]}
    assert expected <= ready_types
    if mode == "karpenter":
        names = {r.name for r in rec.resources if r.urn in rec.exports["ready"]}
        assert names == {"direct-karpenter-crd-release", "direct-karpenter-release"}
    assert rec.exports["zones"] == ["eu-central-1a", "eu-central-1b", "eu-central-1c"]


def test_error_findings_register_nothing_and_are_all_named_at_once() -> None:
    cfg = {"aws:region": "us-west-2",
           "eks-devices:cluster": {"name": "bad", "version": "1.36", "mode": "karpenter",
                                   "karpenter": {"reuseValues": True}},
           "eks-devices:nodePools": {"gpu": {"instanceTypes": ["g6e.xlarge"],
                                             "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}}}
    errors = planning.build(parse(cfg)).errors
    assert len(errors) >= 2
    rec, seen = run_program(cfg, "bad")
    assert rec.resources == []
    message = str(seen["rejected"])
    assert f"{len(errors)} error finding(s), nothing deployed" in message
    for finding in errors:
        assert f"{finding.slug} at {finding.path}" in message


def test_bad_configuration_registers_nothing_and_lists_every_problem() -> None:
    cfg = {"aws:region": "us-west-2",
           "eks-devices:cluster": {"name": "bad", "version": "1.99x", "mode": "fargate"},
           "eks-devices:nodePools": {}}
    rec, seen = run_program(cfg, "bad")
    assert rec.resources == []
    message = str(seen["rejected"])
    assert "2 problem(s)" in message and "cluster.version" in message and "cluster.mode" in message
