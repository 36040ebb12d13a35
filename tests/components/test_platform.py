"""The whole program per shipped stack under Pulumi's mock engine, the Platform component built
directly, and a stack with error findings or bad configuration registering nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest

from eks_devices.core import planner as planning
from eks_devices.identity import PROVIDER_TYPE_PREFIX
from eks_devices.offline.engine import aws_id
from eks_devices.platform import PROGRAM_NAME, Platform
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
    # Auto Mode: two node roles (built-in pools, custom NodeClasses), the NodeClass role's access (and,
    # as in every mode, the deployer's admin access).
    "dev": {**NETWORK_SINGLE_NAT, **CLUSTER_COMMON,
            "aws:iam/role:Role": 2, "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 4,
            "aws:eks/accessEntry:AccessEntry": 1 + 1, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": 1 + 1},
    # Karpenter: system nodes (+ CoreDNS), node, controller and VPC CNI roles, six controller policies,
    # the Pod Identity agent and two associations (controller, aws-node) with aws-node's roll onto its
    # role, the queue and its policy, five rules and targets, two charts.
    "staging": {**NETWORK_NAT_PER_ZONE, **CLUSTER_COMMON, **SYSTEM_NODES,
                "eks-devices:index:Karpenter": 1, "aws:iam/role:Role": 4, "aws:iam/policy:Policy": 6,
                "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 2 + 2 + 6 + 1,
                "aws:eks/addon:Addon": 2, "aws:eks/accessEntry:AccessEntry": 1 + 1,
                "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": 1,
                "aws:eks/podIdentityAssociation:PodIdentityAssociation": 2,
                "kubernetes:apps/v1:DaemonSetPatch": 1,
                "aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1,
                "aws:cloudwatch/eventRule:EventRule": 5, "aws:cloudwatch/eventTarget:EventTarget": 5,
                "kubernetes:helm.sh/v3:Release": 2},
    # Managed node groups: one node role for every group, system nodes and CoreDNS; the VPC CNI's role
    # through Pod Identity (agent, association, aws-node's roll onto it).
    "prod": {**NETWORK_NAT_PER_ZONE, **CLUSTER_COMMON, **SYSTEM_NODES,
             "aws:iam/role:Role": 2, "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 2 + 1,
             "aws:eks/addon:Addon": 2, "aws:eks/podIdentityAssociation:PodIdentityAssociation": 1,
             "kubernetes:apps/v1:DaemonSetPatch": 1, "aws:eks/accessEntry:AccessEntry": 1,
             "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": 1},
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


# Each shipped stack's resources as main registered them before logical names stopped following the
# cluster's name (URN; digests of the inputs without tags, and of the tags; subnets' CIDR and zone).
BEFORE = json.loads((Path(__file__).parent / "fixtures" / "urns-before-stable-identities.json").read_text())
STATEFUL = {"eks:index:Cluster", "aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:kms/key:Key",
            "aws:cloudwatch/logGroup:LogGroup"}


# What this release changes on purpose in the shipped stacks (each named in the README's upgrade notes):
# static EFA pools list their EFA interfaces (issue 13, item 1), an update of the Karpenter EC2NodeClass
# in place and, in Auto Mode, a new NodeClass (its name is a digest of its configuration).
# The NVIDIA DRA driver release moves from 0.4.1 to 0.5.0 (docs/upgrading.md): its version input changes.
_DRA_PIN = {"platform-nvidia-dra-driver": "version: the 0.5.0 pin"}
UPDATED_BY_DESIGN = {"staging": {"platform-gpu-mig-class": "networkInterfaces", "platform-trn-static-class":
                                 "networkInterfaces", **_DRA_PIN},
                     "prod": _DRA_PIN,
                     "dev": {"platform-train-efa": "nodeClassRef: the new NodeClass"}}
REPLACED_BY_DESIGN = {"dev": {"ml-dev-eks-devices-d4b9d3": "the train-efa pool's NodeClass, now with its interfaces"}}
# the node roles no longer carry the CNI policy (aws-node has its own role) nor SSM (opt-in)
DELETED_BY_DESIGN = {"prod": {"ml-prod-node-AmazonEKS_CNI_Policy", "ml-prod-node-AmazonSSMManagedInstanceCore",
                              "ml-prod-p5-node-gpu-efa"},  # 40 devices: over the claim limit of 32
                     "staging": {f"ml-staging-{role}-{policy}" for role in ("system-node", "karpenter-node")
                                 for policy in ("AmazonEKS_CNI_Policy", "AmazonSSMManagedInstanceCore")}}
# aws-node's own identity: its role and policy, the association, its roll onto it (and, for node groups, the agent);
# in every stack the deployer's declared admin access (on these clusters, the creator's bootstrap entry, adopted)
DEPLOYER = {"platform-deployer", "platform-deployer-policy"}
CREATED_BY_DESIGN = {"prod": {"platform-vpc-cni", "platform-vpc-cni-AmazonEKS_CNI_Policy", "platform-vpc-cni-identity",
                              "platform-aws-node-identity", "platform-pod-identity-agent", "platform-p5-half-gpu-efa",
                              *DEPLOYER},
                     "staging": {"platform-vpc-cni", "platform-vpc-cni-AmazonEKS_CNI_Policy",
                                 "platform-vpc-cni-identity", "platform-aws-node-identity", *DEPLOYER},
                     "dev": DEPLOYER}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def _as_before(value: Any, cluster: str, ids: dict[str, str]) -> Any:
    """Inputs as they read when the program's names were the cluster's: the mock engine makes ids,
    ARNs and generated names from logical names, where AWS keeps those of the aliased resource."""
    if isinstance(value, dict):
        return {k: _as_before(v, cluster, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_before(v, cluster, ids) for v in value]
    return ids.get(value, value).replace(PROGRAM_NAME, cluster) if isinstance(value, str) else value


def test_stacks_deployed_before_stable_identities_see_no_replacement(shipped: tuple[str, engine.Recording]) -> None:
    """Upgrading: every resource a shipped stack had is matched, one to one, by its URN or an alias,
    with the same inputs and tags; the only update is EKS deletion protection on the cluster."""
    stack, rec = shipped
    cluster = stacks.shipped(stack)["eks-devices:cluster"]["name"]
    by_urn: dict[str, engine.Registered] = {}
    for r in rec.resources:
        for urn in (r.urn, *r.aliases):
            assert urn not in by_urn
            by_urn[urn] = r
    before = BEFORE["stacks"][stack]
    assert before
    replaced = REPLACED_BY_DESIGN.get(stack, {})
    deleted, created = DELETED_BY_DESIGN.get(stack, set()), CREATED_BY_DESIGN.get(stack, set())
    missing = {e["urn"].rsplit("::", 1)[1] for e in before if e["urn"] not in by_urn}
    assert missing == set(replaced) | deleted, f"would be created anew: {missing - set(replaced) - deleted}"
    kept = [e for e in before if e["urn"] in by_urn]
    assert len({by_urn[e["urn"]].urn for e in kept}) == len(kept)
    matched = {by_urn[e["urn"]].urn for e in kept}
    new = {r.name for r in rec.resources if r.urn not in matched}
    assert created <= new and len(new - created) == len(replaced)  # each replaced one has exactly one successor
    assert len(rec.resources) == len(before) - len(deleted) + len(created)
    ids = {aws_id(r.type, r.name): aws_id(r.type, alias.rsplit("::", 1)[1]) for r in rec.resources for alias in r.aliases}
    changed = set()
    for entry in kept:
        now = by_urn[entry["urn"]]
        # recorded as the program sent them: the engine's addition to a provider's (its plugin's version) left out
        engine_added = {"version"} if now.type.startswith(PROVIDER_TYPE_PREFIX) else set()
        inputs = {k: v for k, v in now.inputs.items() if k != "tags" and k not in engine_added}
        if now.type == "eks:index:Cluster":
            assert inputs.pop("deletionProtection") is (stack != "dev")
        if _digest(_as_before(inputs, cluster, ids)) != entry["inputs"]:
            changed.add(now.name)
        assert _digest(now.inputs.get("tags")) == entry["tags"], now.name
        if now.type == "aws:ec2/subnet:Subnet":
            assert (now.inputs["cidrBlock"], now.inputs["availabilityZone"]) == (
                entry["cidrBlock"], entry["availabilityZone"])
    assert changed == set(UPDATED_BY_DESIGN.get(stack, {})), changed


def test_stateful_resources_are_protected_unless_the_stack_says_not(shipped: tuple[str, engine.Recording]) -> None:
    """The EKS cluster (with EKS deletion protection), VPC, subnets, KMS key and log group are
    protected; the dev stack says `cluster.protect: false`. The key and the log group are never
    deleted by Pulumi either way (retainOnDelete)."""
    stack, rec = shipped
    protect = stacks.shipped(stack)["eks-devices:cluster"].get("protect", True)
    assert protect is (stack != "dev")
    stateful = [r for r in rec.resources if r.type in STATEFUL]
    assert {r.type for r in stateful} == STATEFUL
    assert {r.name: r.protect for r in stateful} == {r.name: protect for r in stateful}
    assert [r.name for r in rec.resources if r.protect and r.type not in STATEFUL] == []
    assert engine.one(rec.of_type("eks:index:Cluster")).inputs["deletionProtection"] is protect
    kept = rec.of_type("aws:kms/key:Key") + rec.of_type("aws:cloudwatch/logGroup:LogGroup")
    assert len(kept) == 2 and all(r.retain_on_delete for r in kept)


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
