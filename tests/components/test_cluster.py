"""The Cluster component in each mode, through the real program (`__main__.py`) under Pulumi's mock
engine: the inputs pulumi-eks receives, the secure defaults, Auto Mode's roles and access, the
system node group, and Karpenter's AWS side and Helm releases."""

from __future__ import annotations

import json
import re
from typing import Any

import pulumi
import pytest

from eks_devices import iam, testing
from eks_devices.cluster import kubeconfig_with_profile
from eks_devices.core import planner as planning
from eks_devices.core.config.stack import parse
from eks_devices.karpenter import INTERRUPTION_EVENTS, controller_values
from eks_devices.network import DISCOVERY_TAG
from eks_devices.platform import PROGRAM_NAME
from support import engine, stacks

NAME = "t"
PREFIX = PROGRAM_NAME  # the program's resources are named after the platform, not the cluster
OFFICE = "203.0.113.0/24"
GPU_POOL = {"instanceTypes": ["g6e.xlarge"]}


def config(mode: str, pools: dict[str, Any] | None = None, **cluster: Any) -> dict[str, Any]:
    """A stack named NAME (one GPU pool unless `pools`); `cluster` keys go to the cluster section."""
    helm_values = cluster.pop("helm_values", None)
    return stacks.config(mode, pools=pools if pools is not None else {"gpu": GPU_POOL}, name=NAME,
                         cluster=cluster, **({"helmValues": helm_values} if helm_values else {}))


def run(cfg: dict[str, Any]) -> engine.Recording:
    """Run the program; also export, as `probe`, what pulumi-eks's EKS cluster (read through the
    component's `eks_cluster` reference) says about Auto Mode."""

    def probe(program: dict[str, Any]) -> None:
        eks_cluster = program["cluster"].eks.eks_cluster
        pulumi.export("probe", pulumi.Output.all(
            compute=eks_cluster.compute_config.apply(lambda c: c and c.enabled),
            block_storage=eks_cluster.storage_config.apply(lambda c: c and c.block_storage.enabled),
            load_balancing=eks_cluster.kubernetes_network_config.apply(
                lambda c: c and c.elastic_load_balancing and c.elastic_load_balancing.enabled),
            bootstrap_self_managed_addons=eks_cluster.bootstrap_self_managed_addons,
            name=eks_cluster.name))

    return engine.main(cfg, then=probe)


def in_cluster(rec: engine.Recording, type_: str) -> list[engine.Registered]:
    """Resources of a type that the Cluster component made (the node pools make node groups too)."""
    return [r for r in rec.of_type(type_) if "eks-devices:index:Cluster$" in r.urn]


def one(rec: engine.Recording, type_: str) -> engine.Registered:
    return engine.one(in_cluster(rec, type_) or rec.of_type(type_))


def eks_inputs(rec: engine.Recording) -> dict[str, Any]:
    return one(rec, "eks:index:Cluster").inputs


def policies_of(rec: engine.Recording, role: engine.Registered) -> set[str]:
    return {a.inputs["policyArn"].rsplit("/", 1)[-1]
            for a in rec.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
            if a.inputs["role"] == role.outputs["name"]}


# --- auto-mode ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def auto() -> engine.Recording:
    return run(config("auto-mode", endpoint={"publicAccessCidrs": [OFFICE]}, logging=["api", "audit"],
                      tags={"team": "ml"}))


@pytest.fixture(scope="module")
def auto_general_purpose() -> engine.Recording:
    return run(config("auto-mode", autoMode={"generalPurposePool": True},
                      kmsKeyArn="arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"))


def test_auto_mode_is_on_with_self_managed_add_ons_off_and_api_access(auto: engine.Recording) -> None:
    inputs = eks_inputs(auto)
    assert inputs["autoMode"]["enabled"] is True
    assert inputs["bootstrapSelfManagedAddons"] is False
    assert inputs["authenticationMode"] == "API"


def test_no_mode_lets_pulumi_eks_make_an_unused_instance_role(auto: engine.Recording,
                                                              karpenter: engine.Recording) -> None:
    """pulumi-eks makes its default-node-group instance role (plus an instance profile and an EC2_LINUX
    access entry) unless `skipDefaultNodeGroup` is *given* true or `createInstanceRole` is false; its
    Auto Mode check does not cover that role (nodejs/eks/cluster/cluster.ts, createCore)."""
    for rec in (auto, karpenter):
        inputs = eks_inputs(rec)
        assert inputs["skipDefaultNodeGroup"] is True
        assert inputs["createInstanceRole"] is False


def test_pulumi_eks_makes_no_coredns_add_on_in_any_mode(auto: engine.Recording, karpenter: engine.Recording,
                                                       mng: engine.Recording) -> None:
    """pulumi-eks makes a CoreDNS add-on in Auto Mode unless told not to (its issue #1726); EKS
    serves DNS on Auto Mode nodes, and elsewhere the toolkit installs CoreDNS after the system nodes."""
    for rec in (auto, karpenter, mng):
        assert eks_inputs(rec)["corednsAddonOptions"]["enabled"] is False
    assert not [a for a in auto.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "coredns"]
    for rec in (karpenter, mng):
        assert [a.inputs["addonName"] for a in rec.of_type("aws:eks/addon:Addon")].count("coredns") == 1


def test_auto_mode_turns_compute_storage_and_load_balancing_on_together(auto: engine.Recording) -> None:
    """pulumi-eks sets all three on the EKS cluster from autoMode.enabled (pulumi-eks v4.3.0); read back
    through the component's `eks_cluster`, as the offline mocks answer it."""
    assert auto.exports["probe"] == {"compute": True, "block_storage": True, "load_balancing": True,
                                     "bootstrap_self_managed_addons": False, "name": NAME}


def test_other_modes_leave_all_three_auto_mode_flags_off(karpenter: engine.Recording) -> None:
    probe = karpenter.exports["probe"]
    assert not probe["compute"] and not probe["block_storage"] and not probe["load_balancing"]
    assert probe["bootstrap_self_managed_addons"] is False


def test_auto_mode_keeps_only_the_system_pool_by_default(auto: engine.Recording,
                                                         auto_general_purpose: engine.Recording) -> None:
    compute = eks_inputs(auto)["autoMode"]["computeConfig"]
    assert compute["nodePools"] == ["system"]
    assert eks_inputs(auto_general_purpose)["autoMode"]["computeConfig"]["nodePools"] == ["system", "general-purpose"]


def test_auto_mode_built_in_pools_use_a_role_the_toolkit_made(auto: engine.Recording) -> None:
    auto_mode = eks_inputs(auto)["autoMode"]
    assert auto_mode["createNodeRole"] is False
    role = auto.named(f"{PREFIX}-auto-node")
    assert auto_mode["computeConfig"]["nodeRoleArn"] == role.outputs["arn"]
    assert json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}
    assert policies_of(auto, role) == {"AmazonEKSWorkerNodeMinimalPolicy", "AmazonEC2ContainerRegistryPullOnly"}


def test_custom_nodeclass_role_has_an_ec2_access_entry_with_the_auto_node_policy(auto: engine.Recording) -> None:
    role = auto.named(f"{PREFIX}-nodeclass")
    assert policies_of(auto, role) == {"AmazonEKSWorkerNodeMinimalPolicy", "AmazonEC2ContainerRegistryPullOnly"}
    entry = auto.named(f"{PREFIX}-nodeclass-access")
    assert entry.inputs["type"] == "EC2" and entry.inputs["principalArn"] == role.outputs["arn"]
    association = auto.named(f"{PREFIX}-nodeclass-auto-node-policy")
    assert association.inputs["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSAutoNodePolicy"
    assert association.inputs["accessScope"] == {"type": "cluster"}
    assert association.inputs["principalArn"] == role.outputs["arn"]
    assert auto.exports["nodeRoleArn"] == role.outputs["arn"]
    assert auto.exports["nodeRoleName"] == role.outputs["name"]


def test_auto_mode_launches_no_nodes_and_installs_no_charts(auto: engine.Recording) -> None:
    for absent in ("aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate",
                   "kubernetes:helm.sh/v3:Release", "aws:sqs/queue:Queue"):
        assert not auto.of_type(absent), absent
    assert "interruptionQueueName" not in auto.exports


def test_logging_endpoint_and_tags_as_configured(auto: engine.Recording) -> None:
    inputs = eks_inputs(auto)
    assert inputs["enabledClusterLogTypes"] == ["api", "audit"]
    assert inputs["endpointPrivateAccess"] is True
    assert inputs["endpointPublicAccess"] is True
    assert inputs["publicAccessCidrs"] == [OFFICE]
    assert inputs["tags"] == {"team": "ml"}


def test_public_endpoint_is_off_without_cidrs_and_logging_defaults_to_every_type(
        auto_general_purpose: engine.Recording) -> None:
    inputs = eks_inputs(auto_general_purpose)
    assert inputs["endpointPrivateAccess"] is True
    assert inputs["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in inputs
    assert inputs["enabledClusterLogTypes"] == ["api", "audit", "authenticator", "controllerManager", "scheduler"]


def test_control_plane_logs_have_a_retention(auto: engine.Recording) -> None:
    group = one(auto, "aws:cloudwatch/logGroup:LogGroup")
    assert group.inputs["name"] == f"/aws/eks/{NAME}/cluster" and group.inputs["retentionInDays"] == 90
    assert group.urn in one(auto, "eks:index:Cluster").depends_on  # it exists before EKS writes to it


def test_secrets_are_encrypted_with_a_new_rotating_key(auto: engine.Recording) -> None:
    key = one(auto, "aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    assert eks_inputs(auto)["encryptionConfigKeyArn"] == key.outputs["arn"]
    assert one(auto, "aws:kms/alias:Alias").inputs["name"] == f"alias/eks/{NAME}"


def test_the_control_plane_log_group_is_encrypted_with_the_generated_key(auto: engine.Recording) -> None:
    key = one(auto, "aws:kms/key:Key")
    assert one(auto, "aws:cloudwatch/logGroup:LogGroup").inputs["kmsKeyId"] == key.outputs["arn"]
    statements = {s["Sid"]: s for s in json.loads(key.inputs["policy"])["Statement"]}
    assert statements["AccountAdministers"]["Principal"] == {"AWS": "arn:aws:iam::123456789012:root"}
    logs = statements["ControlPlaneLogs"]
    assert logs["Principal"] == {"Service": "logs.us-west-2.amazonaws.com"}
    assert logs["Condition"]["ArnEquals"]["kms:EncryptionContext:aws:logs:arn"] == (
        f"arn:aws:logs:us-west-2:123456789012:log-group:/aws/eks/{NAME}/cluster")


def test_a_configured_key_is_used_and_none_is_created(auto_general_purpose: engine.Recording) -> None:
    assert not auto_general_purpose.of_type("aws:kms/key:Key")
    assert eks_inputs(auto_general_purpose)["encryptionConfigKeyArn"] == "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    # the brought key's policy is not ours to extend for CloudWatch Logs
    assert "kmsKeyId" not in one(auto_general_purpose, "aws:cloudwatch/logGroup:LogGroup").inputs


def test_cluster_runs_in_the_private_subnets_of_the_network(auto: engine.Recording) -> None:
    inputs = eks_inputs(auto)
    assert inputs["vpcId"] == auto.exports["vpcId"]
    assert inputs["subnetIds"] == auto.exports["privateSubnetIds"]


def test_cluster_security_group_carries_the_discovery_tag(auto: engine.Recording) -> None:
    """The discovery tag, and the toolkit's security-group tag NodeClasses select the group by."""
    sg = one(auto, "eks:index:Cluster").outputs["clusterSecurityGroupId"]
    assert sorted((t.inputs["resourceId"], t.inputs["key"], t.inputs["value"]) for t in auto.of_type("aws:ec2/tag:Tag")
                  if t.inputs["resourceId"] == sg) == sorted([(sg, DISCOVERY_TAG, NAME),
                                                             (sg, "eks-devices.io/security-group", "cluster")])


def test_kubernetes_provider_uses_the_cluster_kubeconfig(auto: engine.Recording) -> None:
    provider = one(auto, "pulumi:providers:kubernetes")
    assert json.loads(provider.inputs["kubeconfig"])["clusters"][0]["cluster"]["server"].startswith(f"https://{NAME}.")


def test_no_endpoint_at_all_is_refused_before_any_resource() -> None:
    rec, error = engine.refused(config("auto-mode", endpoint={"privateAccess": False}), pulumi.RunError)
    assert re.search(r"cluster\.endpoint", str(error))
    assert rec.resources == []


# --- karpenter ------------------------------------------------------------------------------------------------

DRA_POOLS = {
    "both": {"p5": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "dra"}}},
    "nvidia": {"g": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"}}},
    "efa": {"p5": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "device-plugin", "efa": "dra"}}},
    "none": {"g": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}}},
}
EXPECTED_DRA = {
    "both": {"enableDRA": True},
    "nvidia": {"awsFeatureGates": {"draNVIDIAGPU": True}},
    "efa": {"awsFeatureGates": {"draEFA": True}},
    "none": {},
}


@pytest.fixture(scope="module")
def karpenter_runs() -> dict[str, engine.Recording]:
    return {gates: run(config("karpenter", pools)) for gates, pools in DRA_POOLS.items()}


@pytest.fixture(scope="module")
def karpenter(karpenter_runs: dict[str, engine.Recording]) -> engine.Recording:
    return karpenter_runs["both"]


def controller_release(rec: engine.Recording) -> engine.Registered:
    return rec.named(f"{PREFIX}-karpenter-release")


def crd_release(rec: engine.Recording) -> engine.Registered:
    return rec.named(f"{PREFIX}-karpenter-crd-release")


@pytest.mark.parametrize("gates", sorted(DRA_POOLS))
def test_karpenter_values_carry_exactly_the_plans_dra_settings(
        karpenter_runs: dict[str, engine.Recording], gates: str) -> None:
    rec = karpenter_runs[gates]
    queue = one(rec, "aws:sqs/queue:Queue").outputs["name"]
    assert controller_release(rec).inputs["values"] == {
        "settings": {**EXPECTED_DRA[gates], "clusterName": NAME, "interruptionQueue": queue}}
    assert queue == NAME


def test_karpenter_values_keep_the_static_gate_and_the_stacks_overrides() -> None:
    pools = {"g": {"instanceTypes": ["g6e.xlarge"], "provisioning": "static", "replicas": 1,
                   "devices": {"nvidia": "device-plugin"}}}
    overrides = {"karpenter": {"replicas": 1, "settings": {"batchMaxDuration": "20s"}}}
    cfg = config("karpenter", pools, helm_values=overrides)
    plan = planning.build(parse(cfg))
    values = controller_release(run(cfg)).inputs["values"]
    assert values == controller_values(plan.karpenter.values, NAME, NAME)
    assert values["replicas"] == 1
    assert values["settings"]["featureGates"] == {"staticCapacity": True}
    assert values["settings"]["batchMaxDuration"] == "20s"


def test_karpenter_releases_reset_values_instead_of_reusing_them(karpenter: engine.Recording) -> None:
    for release in (crd_release(karpenter), controller_release(karpenter)):
        assert release.inputs["resetValues"] is True
        assert release.inputs["reuseValues"] is False


def test_karpenter_charts_come_from_the_chart_table_at_the_plans_version(karpenter: engine.Recording) -> None:
    crd, controller = crd_release(karpenter), controller_release(karpenter)
    assert (crd.inputs["chart"], crd.inputs["name"]) == ("oci://public.ecr.aws/karpenter/karpenter-crd",
                                                         "karpenter-crd")
    assert (controller.inputs["chart"], controller.inputs["name"]) == ("oci://public.ecr.aws/karpenter/karpenter",
                                                                       "karpenter")
    assert crd.inputs["version"] == controller.inputs["version"] == "1.15.0"
    assert crd.inputs["namespace"] == controller.inputs["namespace"] == "kube-system"
    assert controller.inputs["skipCrds"] is True and crd.inputs["skipCrds"] is False


def test_controller_release_waits_for_crds_identity_and_system_nodes(karpenter: engine.Recording) -> None:
    depends = controller_release(karpenter).depends_on
    for needed in (crd_release(karpenter), karpenter.named(f"{PREFIX}-karpenter-controller-identity"),
                   one(karpenter, "aws:eks/nodeGroup:NodeGroup"), karpenter.named(f"{PREFIX}-coredns"),
                   karpenter.named(f"{PREFIX}-pod-identity-agent")):
        assert needed.urn in depends, needed.name
    provider = one(karpenter, "pulumi:providers:kubernetes")
    assert controller_release(karpenter).provider.startswith(provider.urn)
    assert crd_release(karpenter).provider.startswith(provider.urn)


def test_interruption_queue_is_encrypted_tls_only_and_fed_by_five_rules(karpenter: engine.Recording) -> None:
    queue = one(karpenter, "aws:sqs/queue:Queue")
    assert queue.inputs["sqsManagedSseEnabled"] is True
    assert queue.inputs["messageRetentionSeconds"] == 300
    policy = json.loads(one(karpenter, "aws:sqs/queuePolicy:QueuePolicy").inputs["policy"])
    deny = [s for s in policy["Statement"] if s["Effect"] == "Deny"]
    assert deny == [{"Sid": "DenyHTTP", "Effect": "Deny", "Action": "sqs:*", "Resource": queue.outputs["arn"],
                     "Principal": "*", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]
    patterns = sorted((p["source"][0], p["detail-type"][0]) for p in (
        json.loads(r.inputs["eventPattern"]) for r in karpenter.of_type("aws:cloudwatch/eventRule:EventRule")))
    assert patterns == sorted((source, detail) for _, source, detail in INTERRUPTION_EVENTS)
    targets = karpenter.of_type("aws:cloudwatch/eventTarget:EventTarget")
    assert len(targets) == 5 and {t.inputs["arn"] for t in targets} == {queue.outputs["arn"]}


def test_controller_role_is_assumed_through_pod_identity_with_six_policies(karpenter: engine.Recording) -> None:
    role = karpenter.named(f"{PREFIX}-karpenter-controller")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert trust["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    # only Karpenter's service account of this cluster: the session tags Pod Identity sets must match
    assert trust["Condition"] == {"StringEquals": {"aws:RequestTag/eks-cluster-name": NAME,
                                                   "aws:RequestTag/kubernetes-namespace": "kube-system",
                                                   "aws:RequestTag/kubernetes-service-account": "karpenter"}}
    policies = karpenter.of_type("aws:iam/policy:Policy")
    attached = {a.inputs["policyArn"] for a in karpenter.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                if a.inputs["role"] == role.outputs["name"]}
    assert attached == {p.outputs["arn"] for p in policies} and len(policies) == 6
    association = karpenter.named(f"{PREFIX}-karpenter-controller-identity")
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == ("kube-system", "karpenter")
    assert association.inputs["roleArn"] == role.outputs["arn"]
    assert karpenter.exports["karpenterControllerRoleArn"] == role.outputs["arn"]
    addons = {a.inputs["addonName"] for a in karpenter.of_type("aws:eks/addon:Addon")}
    assert addons == {"eks-pod-identity-agent", "coredns"}


def test_controller_policies_are_scoped_to_this_cluster_queue_and_node_role(karpenter: engine.Recording) -> None:
    docs = {p.name: json.loads(p.inputs["policy"]) for p in karpenter.of_type("aws:iam/policy:Policy")}
    queue_arn = one(karpenter, "aws:sqs/queue:Queue").outputs["arn"]
    node_role_arn = karpenter.named(f"{PREFIX}-karpenter-node").outputs["arn"]
    (interruption,) = docs[f"{PREFIX}-karpenter-Interruption"]["Statement"]
    assert interruption["Resource"] == queue_arn
    pass_role = docs[f"{PREFIX}-karpenter-IAMIntegration"]["Statement"][0]
    assert (pass_role["Action"], pass_role["Resource"]) == ("iam:PassRole", node_role_arn)
    (describe,) = docs[f"{PREFIX}-karpenter-EKSIntegration"]["Statement"]
    assert describe["Resource"] == f"arn:aws:eks:us-west-2:{engine.ACCOUNT_ID}:cluster/{NAME}"
    delete = docs[f"{PREFIX}-karpenter-NodeLifecycle"]["Statement"][-1]
    assert delete["Action"] == ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"]
    assert delete["Condition"]["StringEquals"] == {f"aws:ResourceTag/kubernetes.io/cluster/{NAME}": "owned"}


def test_every_controller_policy_document_is_well_formed() -> None:
    docs = iam.karpenter_controller_policies("c", "eu-west-1", "111122223333", "arn:aws:iam::111122223333:role/n",
                                             "arn:aws:sqs:eu-west-1:111122223333:c")
    assert set(docs) == set(iam.KARPENTER_POLICY_NAMES)
    sids = [s["Sid"] for doc in docs.values() for s in doc["Statement"]]
    assert len(sids) == len(set(sids))
    for doc in docs.values():
        assert doc["Version"] == "2012-10-17" and doc["Statement"]
        for statement in doc["Statement"]:
            assert statement["Effect"] == "Allow" and statement["Action"] and statement["Resource"]
            assert set(statement.get("Condition", {})) <= {"StringEquals", "StringLike", "StringEqualsIfExists",
                                                           "ForAllValues:StringEquals"}
    assert all("eu-west-1" in r for r in docs["NodeLifecycle"]["Statement"][0]["Resource"])
    assert iam.partition("cn-north-1") == "aws-cn" and iam.partition("us-gov-west-1") == "aws-us-gov"


def test_karpenter_node_role_has_its_access_entry(karpenter: engine.Recording) -> None:
    role = karpenter.named(f"{PREFIX}-karpenter-node")
    assert policies_of(karpenter, role) == {"AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly"}
    [entry] = [r for r in karpenter.of_type("aws:eks/accessEntry:AccessEntry") if r.inputs["type"] != "STANDARD"]
    assert (entry.inputs["type"], entry.inputs["principalArn"]) == ("EC2_LINUX", role.outputs["arn"])
    assert karpenter.exports["nodeRoleArn"] == karpenter.exports["karpenterNodeRoleArn"] == role.outputs["arn"]
    assert karpenter.exports["interruptionQueueName"] == NAME


def test_karpenter_mode_cluster_has_no_default_node_group(karpenter: engine.Recording) -> None:
    inputs = eks_inputs(karpenter)
    assert inputs["skipDefaultNodeGroup"] is True and inputs["skipDefaultSecurityGroups"] is True
    assert inputs["authenticationMode"] == "API" and inputs["bootstrapSelfManagedAddons"] is False
    assert "autoMode" not in inputs


def test_system_nodes_require_imdsv2_with_hop_limit_one(karpenter: engine.Recording) -> None:
    template = one(karpenter, "aws:ec2/launchTemplate:LaunchTemplate")
    assert template.inputs["metadataOptions"] == {"httpEndpoint": "enabled", "httpTokens": "required",
                                                  "httpPutResponseHopLimit": 1}
    assert template.inputs["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"
    group = one(karpenter, "aws:eks/nodeGroup:NodeGroup")
    assert group.inputs["launchTemplate"]["id"] == template.outputs["id"]
    assert group.inputs["scalingConfig"] == {"desiredSize": 2, "minSize": 2, "maxSize": 2}
    assert group.inputs["instanceTypes"] == ["m7i.large"]
    assert group.inputs["version"] == one(karpenter, "eks:index:Cluster").inputs["version"]  # nodes follow the control plane
    assert group.inputs["subnetIds"] == karpenter.exports["privateSubnetIds"]
    system_role = karpenter.named(f"{PREFIX}-system-node")
    assert group.inputs["nodeRoleArn"] == system_role.outputs["arn"] != karpenter.exports["nodeRoleArn"]


# --- managed-node-groups --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mng() -> engine.Recording:
    pools = {"gpu": {**GPU_POOL, "replicas": 1}}
    return run(config("managed-node-groups", pools, systemNodeGroup={"instanceType": "m7g.large", "size": 3}))


def test_managed_node_groups_mode_has_one_node_role_for_every_group(mng: engine.Recording) -> None:
    role = mng.named(f"{PREFIX}-node")
    assert policies_of(mng, role) == {"AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly"}
    group = one(mng, "aws:eks/nodeGroup:NodeGroup")
    assert group.inputs["nodeRoleArn"] == role.outputs["arn"] == mng.exports["nodeRoleArn"]
    # EKS makes node groups' entries itself: the only one is the deployer's
    assert [r.name for r in mng.of_type("aws:eks/accessEntry:AccessEntry")] == [f"{PREFIX}-deployer"]


def test_managed_node_groups_system_group_follows_its_config(mng: engine.Recording) -> None:
    group = one(mng, "aws:eks/nodeGroup:NodeGroup")
    assert group.inputs["instanceTypes"] == ["m7g.large"]
    assert group.inputs["amiType"] == "AL2023_ARM_64_STANDARD"
    assert group.inputs["scalingConfig"] == {"desiredSize": 3, "minSize": 3, "maxSize": 3}
    coredns = mng.named(f"{PREFIX}-coredns")
    assert coredns.inputs["addonName"] == "coredns" and group.urn in coredns.depends_on


def test_managed_node_groups_mode_installs_nothing_on_the_cluster(mng: engine.Recording) -> None:
    assert not in_cluster(mng, "kubernetes:helm.sh/v3:Release")
    inputs = eks_inputs(mng)
    assert inputs["skipDefaultNodeGroup"] is True and "autoMode" not in inputs
    assert "interruptionQueueName" not in mng.exports


def test_karpenter_controller_values_survive_a_null_settings_override() -> None:
    values = controller_values({"settings": None, "replicas": 1}, NAME, "queue")
    assert values["settings"] == {"clusterName": NAME, "interruptionQueue": "queue"}


def test_the_kubeconfig_uses_the_stack_s_aws_profile() -> None:
    """With `aws:profile` set, the cluster's kubeconfig asks for tokens with that profile, so the
    Kubernetes provider reaches the same account as the AWS provider; without it, the default chain."""
    cfg = {**config("managed-node-groups", {"gpu": {**GPU_POOL, "replicas": 1}}), "aws:profile": "ml-prod"}
    with_profile = run(cfg)
    assert eks_inputs(with_profile)["providerCredentialOpts"] == {"profileName": "ml-prod"}
    without = run(config("managed-node-groups", {"gpu": {**GPU_POOL, "replicas": 1}}))
    assert "providerCredentialOpts" not in eks_inputs(without)

    def token_env(rec: engine.Recording) -> list[list[dict[str, str]]]:
        """The token command's env in the kubeconfig of the toolkit's own Kubernetes provider (the
        releases and objects authenticate through it; pulumi-eks's kubeconfigJson has no profile)."""
        (provider,) = [r for r in rec.resources if r.type == "pulumi:providers:kubernetes" and r.parent
                       and "eks-devices:index:Cluster" in r.parent]
        users = json.loads(provider.inputs["kubeconfig"])["users"]
        return [u["user"]["exec"].get("env") or [] for u in users]

    assert token_env(with_profile) == [[{"name": "AWS_PROFILE", "value": "ml-prod"}]]
    assert token_env(without) == [[]]


def test_a_kubeconfig_gets_the_profile_once() -> None:
    base = {"users": [{"name": "aws", "user": {"exec": {"command": "aws", "env": [
        {"name": "AWS_PROFILE", "value": "old"}, {"name": "X", "value": "1"}]}}}]}
    out = json.loads(kubeconfig_with_profile(json.dumps(base), "new"))
    assert out["users"][0]["user"]["exec"]["env"] == [{"name": "X", "value": "1"}, {"name": "AWS_PROFILE", "value": "new"}]


# --- security (EKS Best Practices): the VPC CNI's own identity, SSM opt-in, declared admins ---------------------

@pytest.mark.parametrize("mode", ["karpenter", "managed-node-groups"])
def test_aws_node_gets_its_own_pod_identity_role_and_no_node_role_carries_the_cni_policy(
        mode: str, karpenter: engine.Recording, mng: engine.Recording) -> None:
    """The CNI policy is on a role only kube-system/aws-node of this cluster can assume (Pod Identity,
    with the agent add-on); the system nodes wait for the association, and aws-node is rolled onto
    it (a pod-template annotation, after the association) before the old attachment goes."""
    rec = karpenter if mode == "karpenter" else mng
    cni = rec.named(f"{PREFIX}-vpc-cni")
    assert policies_of(rec, cni) == {"AmazonEKS_CNI_Policy"}
    trust = json.loads(cni.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert trust["Condition"]["StringEquals"] == {"aws:RequestTag/eks-cluster-name": NAME,
                                                  "aws:RequestTag/kubernetes-namespace": "kube-system",
                                                  "aws:RequestTag/kubernetes-service-account": "aws-node"}
    nodes = [r for r in rec.of_type("aws:iam/role:Role") if r.inputs["assumeRolePolicy"].count("ec2.amazonaws.com")]
    assert nodes and all("AmazonEKS_CNI_Policy" not in policies_of(rec, r) for r in nodes)
    association = rec.named(f"{PREFIX}-vpc-cni-identity")
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == ("kube-system", "aws-node")
    assert association.inputs["roleArn"] == cni.outputs["arn"]
    agent = rec.named(f"{PREFIX}-pod-identity-agent")
    assert agent.inputs["addonName"] == "eks-pod-identity-agent" and agent.urn in association.depends_on
    system = rec.named(f"{PREFIX}-system")
    assert association.urn in system.depends_on
    patch = rec.named(f"{PREFIX}-aws-node-identity")
    assert patch.type == "kubernetes:apps/v1:DaemonSetPatch" and association.urn in patch.depends_on
    assert patch.inputs["metadata"] == {"name": "aws-node", "namespace": "kube-system"}
    assert patch.inputs["spec"]["template"]["metadata"]["annotations"] == {"eks-devices.io/aws-credentials":
                                                                          "pod-identity"}


def test_karpenter_keeps_its_pod_identity_agent_through_an_alias(karpenter: engine.Recording) -> None:
    """The agent add-on moved from the Karpenter component to the cluster: an alias keeps it (no
    delete and create of the add-on that serves the controller's credentials)."""
    agent = karpenter.named(f"{PREFIX}-pod-identity-agent")
    assert any(a.endswith(f"eks-devices:index:Karpenter$aws:eks/addon:Addon::{PREFIX}-karpenter-pod-identity-agent")
               for a in agent.aliases)
    assert len(karpenter.of_type("aws:eks/addon:Addon")) == 2  # the agent and CoreDNS, no second agent


def test_ssm_is_opt_in() -> None:
    rec = run(config("managed-node-groups", {"gpu": {**GPU_POOL, "replicas": 1}}, ssmAccess=True))
    assert "AmazonSSMManagedInstanceCore" in policies_of(rec, rec.named(f"{PREFIX}-node"))


def test_declared_admins_get_access_entries_with_the_cluster_admin_policy() -> None:
    admins = ["arn:aws:iam::123456789012:role/platform-admins", "arn:aws:iam::123456789012:user/ops"]
    rec = run(config("auto-mode", admins=admins))
    entries = {r.inputs["principalArn"]: r for r in rec.of_type("aws:eks/accessEntry:AccessEntry")
               if r.inputs["type"] == "STANDARD"}
    assert set(entries) == {*admins, testing.CALLER_ARN}  # and the deployer's
    policies = {r.inputs["principalArn"]: r for r in rec.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
                if r.inputs["principalArn"] in admins}
    for arn in admins:
        assert policies[arn].inputs["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
        assert policies[arn].inputs["accessScope"] == {"type": "cluster"}
        assert entries[arn].urn in policies[arn].depends_on


ROLE = "arn:aws:iam::123456789012:role/platform-ci"
SESSION = "arn:aws:sts::123456789012:assumed-role/platform-ci/pipeline-42"
ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def access(rec: engine.Recording, principal: str) -> tuple[engine.Registered, engine.Registered]:
    """The STANDARD access entry of `principal` and its policy association."""
    [entry] = [r for r in rec.of_type("aws:eks/accessEntry:AccessEntry") if r.inputs["principalArn"] == principal]
    [association] = [r for r in rec.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
                     if r.inputs["principalArn"] == principal]
    return entry, association


def bootstrap_probe(program: dict[str, Any]) -> None:
    access_config = program["cluster"].eks.eks_cluster.access_config
    pulumi.export("bootstrap", access_config.apply(lambda c: c.bootstrap_cluster_creator_admin_permissions))


@pytest.mark.parametrize("mode", ["auto-mode", "karpenter", "managed-node-groups"])
def test_the_cluster_has_no_bootstrap_admin_and_the_deployer_is_declared_first(mode: str) -> None:
    """pulumi-eks's EKS cluster goes through the component's transform (the mocks run it on the
    child, as the engine does); the deployer is the role behind the session, given cluster-admin in
    the state, and the toolkit's Kubernetes provider waits for it."""
    pools = {"gpu": {**GPU_POOL, "replicas": 1}} if mode == "managed-node-groups" else None
    rec = engine.main(config(mode, pools), then=bootstrap_probe, mocks=testing.Mocks(caller_arn=SESSION))
    assert rec.exports["bootstrap"] is False
    entry, association = access(rec, ROLE)
    assert entry.inputs["type"] == "STANDARD" and "tags" not in entry.inputs and not entry.import_id
    assert association.inputs["policyArn"] == ADMIN_POLICY and association.inputs["accessScope"] == {"type": "cluster"}
    assert entry.urn in association.depends_on and not association.import_id
    provider = one(rec, "pulumi:providers:kubernetes")
    assert {entry.urn, association.urn} <= set(provider.depends_on)


def test_the_transform_touches_only_the_eks_cluster() -> None:
    from eks_devices.cluster import without_creator_bootstrap

    props = {"name": "x", "accessConfig": {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True}}
    opts = pulumi.ResourceOptions()
    result = without_creator_bootstrap(pulumi.ResourceTransformArgs(True, "aws:eks/cluster:Cluster", "c", props, opts))
    assert result is not None and result.opts is opts
    assert result.props == {"name": "x", "accessConfig": {"authenticationMode": "API",
                                                          "bootstrapClusterCreatorAdminPermissions": False}}
    assert props["accessConfig"]["bootstrapClusterCreatorAdminPermissions"] is True  # not changed in place
    for other in ("aws:iam/role:Role", "aws:eks/addon:Addon"):
        assert without_creator_bootstrap(pulumi.ResourceTransformArgs(True, other, "c", props, opts)) is None


def test_a_cluster_created_with_the_bootstrap_admin_adopts_the_deployers_entry() -> None:
    """EKS already has the creator's entry (every cluster the toolkit made before): the deployer's
    entry and association are imported with the ids EKS gives them, not created a second time."""
    mocks = testing.Mocks(caller_arn=SESSION, access_entries=[(NAME, ROLE)])
    entry, association = access(engine.main(config("karpenter"), mocks=mocks), ROLE)
    assert entry.import_id == f"{NAME}:{ROLE}"
    assert association.import_id == f"{NAME}#{ROLE}#{ADMIN_POLICY}"
    # another principal's entry on the same cluster is nothing to adopt
    other = testing.Mocks(caller_arn=SESSION, access_entries=[(NAME, "arn:aws:iam::123456789012:role/creator")])
    entry, association = access(engine.main(config("karpenter"), mocks=other), ROLE)
    assert not entry.import_id and not association.import_id


def test_a_deployer_listed_as_admin_has_one_entry_which_the_provider_waits_for() -> None:
    rec = engine.main(config("managed-node-groups", {"gpu": {**GPU_POOL, "replicas": 1}}, admins=[ROLE]),
                      mocks=testing.Mocks(caller_arn=SESSION))
    entry, association = access(rec, ROLE)
    assert entry.name == f"{PREFIX}-admin-0"
    assert {entry.urn, association.urn} <= set(one(rec, "pulumi:providers:kubernetes").depends_on)


def test_admin_arns_are_checked() -> None:
    from eks_devices.core.config.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        stacks.build(config("auto-mode", admins=["arn:aws:sts::123456789012:assumed-role/admin/me"]))
    [problem] = caught.value.problems
    assert problem.path == "cluster.admins.0" and "an IAM role or user ARN" in problem.accepted


def test_pinned_charts_and_images_reach_the_helm_releases_by_digest() -> None:
    """What `pulumi up` sends Helm: pinned OCI charts by `@sha256:` reference (Karpenter's two and a
    device driver), pinned images in the charts' tag and digest values."""
    pin = "sha256:" + "ab" * 32
    pools = {"gpu": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "device-plugin"}}}
    rec = engine.main(stacks.config("karpenter", "1.36", pools, name=NAME, digests={
            "charts": {"karpenter": f"1.15.0@{pin}", "karpenter-crd": f"1.15.0@{pin}",
                       "nvidia-dra-driver": f"0.5.0@{pin}"},
            "images": {"public.ecr.aws/karpenter/controller": f"1.15.0@{pin}",
                       "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu": f"v0.5.0@{pin}"}}))
    releases = {r.inputs["name"]: r.inputs for r in rec.of_type("kubernetes:helm.sh/v3:Release")}
    assert releases["karpenter"]["chart"] == f"oci://public.ecr.aws/karpenter/karpenter@{pin}"
    assert releases["karpenter-crd"]["chart"] == f"oci://public.ecr.aws/karpenter/karpenter-crd@{pin}"
    assert releases["karpenter"]["values"]["controller"]["image"] == {"tag": "1.15.0", "digest": pin}
    driver = releases["nvidia-dra-driver"]
    assert driver["chart"] == f"oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu@{pin}"
    assert driver["version"] == "0.5.0" and driver["values"]["image"] == {"tag": f"v0.5.0@{pin}"}
    assert releases["aws-efa-k8s-device-plugin"]["chart"] == "aws-efa-k8s-device-plugin"  # HTTP: by version only
