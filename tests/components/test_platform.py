"""The whole program per shipped stack under Pulumi's mock engine, the Platform component built
directly, and a stack with error findings or bad configuration registering nothing."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from eks_devices.core import planner as planning
from eks_devices.platform import Platform
from eks_devices.program import PlanRejected
from support import engine, stacks

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
    "aws:ec2/tag:Tag": 2, "pulumi:providers:kubernetes": 1,
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


def export_kubeconfig_secrecy(_: dict[str, Any]) -> None:
    kubeconfig = pulumi.runtime.settings.get_root_resource().outputs["kubeconfig"]
    pulumi.export("kubeconfigIsSecret", pulumi.Output.from_input(kubeconfig.is_secret()))


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def shipped(request: pytest.FixtureRequest) -> tuple[str, engine.Recording]:
    """Run `__main__.py`; also export whether the kubeconfig export is secret."""
    return request.param, engine.main(stacks.shipped(request.param), stack=request.param,
                                      then=export_kubeconfig_secrecy)


def platform_resources(rec: engine.Recording) -> dict[str, int]:
    """Counts of what the Network and Cluster components make (other components under the
    Platform are not this inventory's business)."""
    return engine.counts_under(rec, ("eks-devices:index:Network", "eks-devices:index:Cluster"))


def test_shipped_stack_builds_the_expected_resources(shipped: tuple[str, engine.Recording]) -> None:
    stack, rec = shipped
    assert platform_resources(rec) == dict(sorted(EXPECTED[stack].items()))
    assert len(rec.of_type("eks-devices:index:Platform")) == 1


def test_shipped_stack_exports_the_cluster_and_network(shipped: tuple[str, engine.Recording]) -> None:
    stack, rec = shipped
    expected = ALWAYS_EXPORTED | (KARPENTER_EXPORTED if stack == "staging" else set())
    assert expected <= set(rec.exports)
    assert not (KARPENTER_EXPORTED - expected) & set(rec.exports)
    assert rec.exports["clusterName"] == stacks.shipped(stack)["eks-devices:cluster"]["name"]
    assert rec.exports["kubeconfigIsSecret"] is True
    assert rec.exports["devicePlan"]["mode"] == stacks.shipped(stack)["eks-devices:cluster"]["mode"]


def test_every_resource_hangs_under_the_platform(shipped: tuple[str, engine.Recording]) -> None:
    _, rec = shipped
    (platform,) = rec.of_type("eks-devices:index:Platform")
    for r in rec.resources:
        if r is not platform:
            assert "eks-devices:index:Platform" in engine.ancestors(rec, r), r.name


def _platform_ready(cfg: dict[str, Any]) -> tuple[engine.Recording, planning.Plan]:
    plan = stacks.build(cfg)

    def program() -> None:
        platform = Platform.from_plan(plan.spec.cluster.name, plan)
        pulumi.export("ready", pulumi.Output.all(*[r.urn for r in platform.cluster.ready]))
        pulumi.export("zones", platform.network.availability_zones)

    return engine.run(program, cfg, stack="direct"), plan


@pytest.mark.parametrize("mode, expected", [
    ("auto-mode", {"eks:index:Cluster", "aws:eks/accessEntry:AccessEntry",
                   "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"}),
    ("karpenter", {"kubernetes:helm.sh/v3:Release"}),
    ("managed-node-groups", {"aws:eks/nodeGroup:NodeGroup", "aws:eks/addon:Addon"}),
])
def test_cluster_ready_is_what_custom_resources_and_pools_wait_for(mode: str, expected: set[str]) -> None:
    cfg = stacks.config(mode, name="direct", region="eu-central-1",
                        pools={"gpu": {"instanceTypes": ["g6e.xlarge"], "provisioning": "static", "replicas": 1}})
    rec, _ = _platform_ready(cfg)
    types = {r.urn: r.type for r in rec.resources}
    ready_types = {types[urn] for urn in rec.exports["ready"]}
    assert expected <= ready_types
    if mode == "karpenter":
        names = {r.name for r in rec.resources if r.urn in rec.exports["ready"]}
        assert names == {"direct-karpenter-crd-release", "direct-karpenter-release"}
    assert rec.exports["zones"] == ["eu-central-1a", "eu-central-1b", "eu-central-1c"]


def test_error_findings_register_nothing_and_are_all_named_at_once() -> None:
    cfg = stacks.config("karpenter", name="bad", cluster={"karpenter": {"reuseValues": True}},
                        pools={"gpu": {"instanceTypes": ["g6e.xlarge"],
                                       "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}})
    errors = stacks.build(cfg).errors
    assert len(errors) >= 2
    rec, rejected = engine.refused(cfg, PlanRejected, stack="bad")
    assert rec.resources == []
    message = str(rejected)
    assert f"{len(errors)} error finding(s), nothing deployed" in message
    for finding in errors:
        assert f"{finding.slug} at {finding.path}" in message


def test_bad_configuration_registers_nothing_and_lists_every_problem() -> None:
    cfg = stacks.merge(stacks.base(name="bad"), {"eks-devices:cluster": {"version": "1.99x", "mode": "fargate"}})
    rec, rejected = engine.refused(cfg, PlanRejected, stack="bad")
    assert rec.resources == []
    message = str(rejected)
    assert "2 problem(s)" in message and "cluster.version" in message and "cluster.mode" in message
