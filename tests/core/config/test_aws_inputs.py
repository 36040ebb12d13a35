"""Inputs AWS, EKS or the Karpenter chart would refuse are configuration problems at their path
(exit 2), found before anything runs (issue 26, "Bad input that reaches AWS or crashes")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eks_devices.core.config import stack_file
from eks_devices.core.config.bottlerocket import bottlerocket_toml
from eks_devices.core.config.stack import ConfigError, parse
from support import stacks


def paths(cfg: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigError) as info:
        parse(cfg)
    return {p.path: f"{p.given} | {p.accepted}" for p in info.value.problems}


P = {"instanceTypes": ["g6.xlarge"]}


@pytest.mark.parametrize(("cluster", "path"), [
    ({"version": "１.３６"}, "cluster.version"),  # fullwidth digits
    ({"version": "1.3٦"}, "cluster.version"),  # an Arabic-Indic six
    ({"version": "1.31"}, "cluster.version"),  # past EKS extended support
    ({"version": "1.40"}, "cluster.version"),  # newer than the toolkit knows
    ({"admins": ["arn:aws:iam::１２３456789012:role/x"]}, "cluster.admins.0"),
    ({"systemNodeGroup": {"instanceType": "m7i-large"}}, "cluster.systemNodeGroup.instanceType"),
    ({"systemNodeGroup": {"instanceType": "ｍ7i.large"}}, "cluster.systemNodeGroup.instanceType"),
    ({"kmsKeyArn": "arn:aws:kms:us-west-2:123456789012:key/nope"}, "cluster.kmsKeyArn"),
    ({"kmsKeyArn": "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"},
     "cluster.kmsKeyArn"),  # another region's key
    ({"tags": {"team": "ml;drop"}}, "cluster.tags"),
    ({"tags": {"a\tb": "x"}}, "cluster.tags"),
    ({"endpoint": {"publicAccessCidrs": ["2001:db8::/32"]}}, "cluster.endpoint.publicAccessCidrs.0"),
    ({"endpoint": {"publicAccessCidrs": [f"203.0.{i}.0/24" for i in range(41)]}},
     "cluster.endpoint.publicAccessCidrs"),
])
def test_cluster_values_aws_refuses(cluster: dict[str, Any], path: str) -> None:
    assert path in paths(stacks.config(cluster=cluster))


@pytest.mark.parametrize("cluster", [
    {"kmsKeyArn": "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"},
    {"kmsKeyArn": "arn:aws:kms:us-west-2:123456789012:alias/eks-secrets"},
    {"tags": {"Team name": "ML: training/é=+@-_."}},  # letters of any script, spaces and the allowed marks
    {"systemNodeGroup": {"instanceType": "c7gn.16xlarge"}},
    {"systemNodeGroup": {"instanceType": "m7i.metal-24xl"}},
    {"endpoint": {"publicAccessCidrs": [f"203.0.{i}.0/24" for i in range(40)]}},
    {"version": "1.32"},
])
def test_cluster_values_aws_accepts(cluster: dict[str, Any]) -> None:
    parse(stacks.config(cluster=cluster))


@pytest.mark.parametrize(("network", "path"), [
    ({"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": [""]}, "network.privateSubnetIds.0"),
    ({"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": ["subnet-xyz12345"]}, "network.privateSubnetIds.0"),
    ({"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": ["subnet-0123456789"]}, "network.privateSubnetIds.0"),
    ({"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": ["subnet-01234567", "subnet-01234567"]},
     "network.privateSubnetIds"),
    ({"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": ["subnet-01234567"], "publicSubnetIds": ["x"]},
     "network.publicSubnetIds.0"),
    ({"vpcId": "my-vpc", "privateSubnetIds": ["subnet-01234567"]}, "network.vpcId"),
])
def test_brought_network_ids(network: dict[str, Any], path: str) -> None:
    assert path in paths(stacks.config(network=network))


def test_each_list_entry_aws_refuses_is_blamed_at_its_index() -> None:
    """The entry to edit, not the list; a list's own limits (duplicates, counts) stay at the list."""
    found = paths(stacks.config(
        network={"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": ["subnet-01234567", "subnet-xyz"]},
        cluster={"admins": ["arn:aws:iam::123456789012:role/a", "arn:aws:sts::123456789012:assumed-role/a/me"],
                 "endpoint": {"publicAccessCidrs": ["203.0.113.0/24", "2001:db8::/32"]}}))
    assert {"network.privateSubnetIds.1", "cluster.admins.1", "cluster.endpoint.publicAccessCidrs.1"} <= set(found)
    assert not {"network.privateSubnetIds", "cluster.admins", "cluster.endpoint.publicAccessCidrs"} & set(found)


@pytest.mark.parametrize(("limits", "region"), [({"memory": "１０Gi"}, None), ({}, "us-west-２")])
def test_unicode_digits_are_not_digits(limits: dict[str, Any], region: str | None) -> None:
    cfg = stacks.config(pools={"p": {**P, "limits": limits}}, **({"region": region} if region else {}))
    found = paths(cfg)
    assert ("nodePools.p.limits.memory" if limits else "aws:region") in found


@pytest.mark.parametrize(("values", "path"), [
    ({"serviceAccount": {"create": False}}, "helmValues.karpenter.serviceAccount.create"),
    ({"serviceAccount": {"name": "other"}}, "helmValues.karpenter.serviceAccount.name"),
    ({"fullnameOverride": "kp"}, "helmValues.karpenter.fullnameOverride"),
    ({"nameOverride": "controller"}, "helmValues.karpenter.nameOverride"),  # the account becomes karpenter-controller
])
def test_karpenter_overrides_that_drop_its_identity(values: dict[str, Any], path: str) -> None:
    assert path in paths(stacks.config(helmValues={"karpenter": values}))


@pytest.mark.parametrize("values", [
    {"serviceAccount": {"create": True, "name": "karpenter", "annotations": {}}},
    {"nameOverride": "karp"},  # contained in the release name: the chart keeps "karpenter"
    {"fullnameOverride": "karpenter"},
])
def test_karpenter_overrides_that_keep_its_identity(values: dict[str, Any]) -> None:
    parse(stacks.config(helmValues={"karpenter": values}))


@pytest.mark.parametrize("settings", [
    {"kubernetes": {"max-pods": 2 ** 64}},
    {"kubernetes": {"node-labels": {"a": "\ud800"}}},
])
def test_bottlerocket_settings_without_a_toml_form(settings: dict[str, Any]) -> None:
    cfg = stacks.config(pools={"p": {**P, "ami": "bottlerocket", "bottlerocketSettings": settings}})
    assert "nodePools.p.bottlerocketSettings" in paths(cfg)


def test_bottlerocket_settings_toml_parses() -> None:
    import tomllib

    settings = {"kubernetes": {"node-labels": {"a.b/c": "x\"\\\n\u00e9"}, "max-pods": 2 ** 63 - 1, "x y": [1, "a"]}}
    assert tomllib.loads(bottlerocket_toml(settings))["settings"] == settings


@pytest.mark.parametrize("line", ["name: !!bool maybe", "name: !!timestamp soon", "name: !!timestamp 2020-13-45"])
def test_yaml_tags_that_cannot_hold_their_value(tmp_path: Path, line: str) -> None:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(f"config:\n  eks-devices:cluster:\n    {line}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        stack_file.read_config(path)
    [problem] = caught.value.problems
    assert problem.path == "line 3" and "YAML tag" in problem.given


def test_an_object_section_stored_as_json_text_is_read_as_pulumi_up_reads_it() -> None:
    cfg = stacks.config(pools={"p": P})
    text = {key: json.dumps(value) if key != "aws:region" else value for key, value in cfg.items()}
    assert parse(text) == parse(cfg)


def test_json_text_that_is_not_an_object_stays_a_problem() -> None:
    cfg = stacks.config()
    cfg["eks-devices:nodePools"] = '{"p": '
    assert "nodePools" in paths(cfg)


@pytest.mark.parametrize("entries", [["ml:NoSchedule"], "ml:NoExecute"])
def test_a_bottlerocket_taint_no_agent_tolerates_leaves_the_pool_unserved(entries: Any) -> None:
    pool = {"instanceTypes": ["g6.xlarge"], "ami": "bottlerocket", "devices": {"nvidia": "dra"},
            "bottlerocketSettings": {"kubernetes": {"node-taints": {"dedicated": entries}}}}
    found = stacks.findings(stacks.plan("karpenter", pools={"p": pool}), "device-software-unserved")
    assert found and all(f.severity == "error" and f.path.startswith("nodePools.p") for f in found)
    quiet = {**pool, "bottlerocketSettings": {"kubernetes": {"max-pods": 110}}}
    assert not stacks.findings(stacks.plan("karpenter", pools={"p": quiet}), "device-software-unserved")
