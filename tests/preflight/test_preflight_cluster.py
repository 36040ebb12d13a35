"""Existing-cluster checks under moto: a missing cluster, versions below / at / above the plan's
minimum, node-group labels against the plan, Bottlerocket's bundled plugin, device-plugin add-ons
(ListAddons / DescribeAddon answered by `support.aws.addons`: moto 5.2.5 lacks them)."""

from __future__ import annotations

import itertools
from typing import Any

import boto3
import pytest

from eks_devices.core.names import POOL_LABEL, manager_label
from eks_devices.preflight import CheckResult, run_preflight
from eks_devices.preflight import cluster as checks
from support import aws

DRA_POOL = {"replicas": 1, "instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}}
PLUGIN_POOL = {"replicas": 1, "instanceTypes": ["g6e.2xlarge"], "devices": {"nvidia": "device-plugin"}}
NVIDIA_DRA = {manager_label("nvidia"): "dra"}
OFF = "[settings.kubelet-device-plugins.nvidia]\nenabled = false\n"


CLUSTERS = itertools.count()


@pytest.fixture
def name() -> str:
    """A cluster name of this test's own (the mocked account is shared by the module)."""
    return f"cluster-{next(CLUSTERS)}"


def run(session: boto3.Session, name: str, check: str, pools: dict[str, Any] | None = None,
        version: str = "1.36", mode: str = "managed-node-groups") -> list[CheckResult]:
    plan = aws.stack(mode=mode, version=version, pools=pools or {"train": DRA_POOL}, name=name)
    return aws.check(session, plan, check)


def test_missing_cluster_reports_every_cluster_check_as_not_run(session: boto3.Session, name: str) -> None:
    results = [r for r in run_preflight(aws.stack(pools={"train": DRA_POOL}, name=name), session)
               if r.check.startswith("cluster.")]
    assert {r.check for r in results} == {checks.VERSION, checks.NODE_GROUPS, checks.BOTTLEROCKET, checks.ADDONS,
                                          checks.DAEMONSETS, checks.CAPACITY_BLOCK_UPGRADE}
    assert all(r.status == "not-run" and "does not exist yet" in r.detail for r in results)


@pytest.mark.parametrize(("live", "status", "words"), [
    ("1.32", "fail", "below 1.36"),
    ("1.35", "warn", "upgrades the control plane to 1.36"),
    ("1.36", "pass", "the plan needs 1.36"),
    ("1.37", "fail", "cannot downgrade"),
])
def test_cluster_version_against_the_plan(session: boto3.Session, name: str, live: str, status: str,
                                          words: str) -> None:
    aws.create_cluster(session, name, live)
    [result] = run(session, name, checks.VERSION)
    assert result.status == status and words in result.detail


def test_dra_minimum_above_the_stack_version_fails_even_one_step_behind(session: boto3.Session, name: str) -> None:
    # aws-dranet is gated on 1.35: a 1.34 stack that forces EFA DRA needs a 1.35 cluster.
    pools = {"train": {**DRA_POOL, "devices": {"efa": "dra"}}}
    plan = aws.stack(version="1.34", pools=pools, name=name)
    assert checks.minimum_version(plan) == ((1, 35), "efa DRA needs it")
    aws.create_cluster(session, name, "1.34")
    [result] = aws.check(session, plan, checks.VERSION)
    assert result.status == "fail" and "below 1.35 (efa DRA needs it)" in result.detail


def test_auto_mode_dra_needs_1_36() -> None:
    plan = aws.stack(mode="auto-mode", version="1.35", pools={"gpu": {"instanceTypes": ["g6.xlarge"],
                                                                       "devices": {"nvidia": "dra"}}})
    assert checks.minimum_version(plan) == ((1, 36), "nvidia DRA in Auto Mode needs it")


def test_node_group_labelled_device_plugin_where_the_plan_says_dra_warns(session: boto3.Session, name: str) -> None:
    aws.create_cluster(session, name)
    aws.create_nodegroup(session, "train-ng", {POOL_LABEL: "train", manager_label("nvidia"): "device-plugin",
                                               manager_label("efa"): "dra"}, cluster=name)
    [result] = run(session, name, checks.NODE_GROUPS)
    assert result.status == "warn" and result.subject == "node group train-ng"
    assert "nvidia device-plugin → dra" in result.detail and "efa" not in result.detail.split("(")[1]


def test_node_group_matching_the_plan_passes_and_unrelated_groups_are_named(session: boto3.Session,
                                                                            name: str) -> None:
    aws.create_cluster(session, name)
    aws.create_nodegroup(session, "train-ng", {POOL_LABEL: "train", manager_label("nvidia"): "dra",
                                               manager_label("efa"): "dra"}, cluster=name)
    aws.create_nodegroup(session, "system", {"role": "system"}, cluster=name, ami="AL2023_x86_64_STANDARD")
    results = {r.subject: r for r in run(session, name, checks.NODE_GROUPS)}
    assert results["node group train-ng"].status == "pass"
    assert results["other node groups"].status == "pass" and "(system)" in results["other node groups"].detail


def test_foreign_node_group_with_toolkit_labels_warns(session: boto3.Session, name: str) -> None:
    aws.create_cluster(session, name)
    aws.create_nodegroup(session, "legacy", NVIDIA_DRA, cluster=name)
    aws.create_nodegroup(session, "old-plugin", {manager_label("neuron"): "device-plugin"}, cluster=name)
    results = {r.subject: r for r in run(session, name, checks.NODE_GROUPS)}
    assert results["node group legacy"].status == "warn"
    assert "software will run on its nodes too" in results["node group legacy"].detail
    assert results["node group old-plugin"].status == "warn"
    assert "installs no such software" in results["node group old-plugin"].detail


@pytest.mark.parametrize(("user_data", "status", "words"), [
    (None, "fail", "has no launch template"),
    ("[settings.kubernetes]\nmax-pods = 110\n", "fail", "leaves Bottlerocket's bundled"),
    (OFF, "pass", "switches the bundled device plugin off"),
    ("#!/bin/bash\necho not toml = [\n", "warn", "is not Bottlerocket settings TOML"),
    # foreign account state of unexpected shapes: a warning, never a traceback
    ("settings = 3\n", "warn", "is not Bottlerocket settings TOML"),
    ("[settings]\nkubelet-device-plugins = \"off\"\n", "warn", "is not Bottlerocket settings TOML"),
    ("[settings.kubelet-device-plugins]\nnvidia = [1, 2]\n", "warn", "is not Bottlerocket settings TOML"),
    ("[settings.kubelet-device-plugins.nvidia]\nenabled = \"no\"\n", "warn", "is not Bottlerocket settings TOML"),
])
def test_bottlerocket_nvidia_node_group_on_dra(session: boto3.Session, name: str, user_data: str | None,
                                               status: str, words: str) -> None:
    aws.create_cluster(session, name)
    aws.create_nodegroup(session, "br", NVIDIA_DRA, cluster=name, ami="BOTTLEROCKET_x86_64_NVIDIA",
                         user_data=user_data)
    [result] = run(session, name, checks.BOTTLEROCKET)
    assert result.status == status and words in result.detail


@pytest.mark.parametrize("ami", ["BOTTLEROCKET_x86_64_NVIDIA_FIPS", "BOTTLEROCKET_ARM_64_NVIDIA_FIPS"])
def test_fips_bottlerocket_nvidia_node_groups_bundle_the_plugin_too(session: boto3.Session, name: str,
                                                                    ami: str) -> None:
    aws.create_cluster(session, name)
    aws.create_nodegroup(session, "br-fips", NVIDIA_DRA, cluster=name, ami=ami, user_data="[settings]\n")
    [result] = run(session, name, checks.BOTTLEROCKET)
    assert result.subject == "node group br-fips"
    assert result.status == "fail" and "leaves Bottlerocket's bundled" in result.detail


def test_bottlerocket_nvidia_node_group_on_the_plugin_passes(session: boto3.Session, name: str) -> None:
    aws.create_cluster(session, name)
    aws.create_nodegroup(session, "br", {}, cluster=name, ami="BOTTLEROCKET_ARM_64_NVIDIA")
    aws.create_nodegroup(session, "al", NVIDIA_DRA, cluster=name)
    [result] = run(session, name, checks.BOTTLEROCKET)
    assert result.status == "pass" and result.subject == "node group br"


@pytest.mark.parametrize(("addon", "config", "pools", "status"), [
    ("nvidia-device-plugin", "", {"train": DRA_POOL}, "fail"),
    ("nvidia-gpu-operator", "", {"train": DRA_POOL}, "fail"),
    ("nvidia-device-plugin", '{"nodeSelector": {"eks-devices.io/device-manager-nvidia": "device-plugin"}}',
     {"train": DRA_POOL}, "warn"),
    ("nvidia-device-plugin", "", {"serve": PLUGIN_POOL}, "warn"),
    ("aws-efa-k8s-device-plugin", "", {"serve": PLUGIN_POOL}, "pass"),
    ("aws-efa-k8s-device-plugin", "", {"train": DRA_POOL}, "fail"),
])
def test_device_plugin_add_ons(session: boto3.Session, name: str, addon: str, config: str,
                               pools: dict[str, Any], status: str) -> None:
    aws.create_cluster(session, name)
    aws.addons(session, {"vpc-cni": {}, addon: {"configurationValues": config}})
    [result] = run(session, name, checks.ADDONS, pools=pools)
    assert (result.subject, result.status) == (f"add-on {addon}", status)


def test_add_ons_without_device_plugins_pass(session: boto3.Session, name: str) -> None:
    aws.create_cluster(session, name)
    aws.addons(session, {"vpc-cni": {}, "coredns": {}})
    [result] = run(session, name, checks.ADDONS)
    assert result.status == "pass" and "coredns, vpc-cni" in result.detail


def test_daemonsets_are_not_guessed(session: boto3.Session, name: str) -> None:
    """On an existing cluster the check cannot run from AWS APIs: it blocks a clean pass (exit 3)."""
    aws.create_cluster(session, name)
    [result] = run(session, name, checks.DAEMONSETS)
    assert result.status == "not-run" and "kubectl get daemonsets -A" in result.fix and result.iam_action is None
    assert result.blocked


def test_launch_template_user_data_that_is_not_base64_is_a_warning(session: boto3.Session, name: str) -> None:
    aws.create_cluster(session, name)
    aws.create_nodegroup(session, "br", NVIDIA_DRA, cluster=name, ami="BOTTLEROCKET_x86_64_NVIDIA", user_data="")
    aws.fake(session, "ec2", "DescribeLaunchTemplateVersions", lambda _: {"LaunchTemplateVersions": [
        {"LaunchTemplateData": {"UserData": "[settings] not base64!"}}]})  # an answer to survive, never a traceback
    [result] = run(session, name, checks.BOTTLEROCKET)
    assert result.status == "warn" and "is not Bottlerocket settings TOML" in result.detail


def test_a_cluster_being_deleted_fails(session: boto3.Session, name: str) -> None:
    aws.fake(session, "eks", "DescribeCluster", lambda params: {"cluster": {
        "name": params["name"], "version": "1.36", "status": "DELETING"}})
    [result] = run(session, name, checks.VERSION)
    assert result.status == "fail" and f"cluster {name} is DELETING" in result.detail


def capacity_block_group(session: boto3.Session, name: str, version: str, desired: int) -> None:
    aws.create_nodegroup(session, "train-cb", {POOL_LABEL: "train", **NVIDIA_DRA, manager_label("efa"): "dra"},
                         cluster=name, capacityType="CAPACITY_BLOCK", version=version,
                         scalingConfig={"minSize": desired, "maxSize": max(desired, 1), "desiredSize": desired})


@pytest.mark.parametrize(("control_plane", "group", "desired", "status", "words"), [
    ("1.36", "1.36", 2, "pass", "already runs Kubernetes 1.36"),
    ("1.35", "1.35", 0, "pass", "at desired size 0: pulumi up can upgrade it to 1.36"),
    ("1.35", "1.35", 2, "fail", 'replicas: 0 and cluster.version "1.35", then with cluster.version "1.36"'),
    ("1.36", "1.35", 2, "fail", "--nodegroup-name train-cb --scaling-config minSize=0,maxSize=1,desiredSize=0"),
])
def test_capacity_block_node_group_is_upgraded_only_without_nodes(session: boto3.Session, name: str,
                                                                   control_plane: str, group: str, desired: int,
                                                                   status: str, words: str) -> None:
    aws.create_cluster(session, name, control_plane)
    capacity_block_group(session, name, group, desired)
    aws.create_nodegroup(session, "other", {"role": "system"}, cluster=name, version="1.34")  # not a pool: ignored
    [result] = run(session, name, checks.CAPACITY_BLOCK_UPGRADE)
    assert (result.subject, result.status) == ("node group train-cb", status)
    assert words in (result.fix if status == "fail" else result.detail)
    if status == "fail":
        assert "with 2 node(s); pulumi up would upgrade it to 1.36" in result.detail


def test_no_capacity_block_node_group_passes(session: boto3.Session, name: str) -> None:
    aws.create_cluster(session, name, "1.35")
    aws.create_nodegroup(session, "train-ng", {POOL_LABEL: "train", **NVIDIA_DRA}, cluster=name, version="1.35")
    [result] = run(session, name, checks.CAPACITY_BLOCK_UPGRADE)
    assert result.status == "pass" and result.detail == "no Capacity Block node group of the stack"
