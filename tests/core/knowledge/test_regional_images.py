"""The EFA charts' images come from the EKS add-on registry of the stack's region (EKS User Guide, "View
Amazon container image registries for Amazon EKS add-ons"); a region without a known registry is a
configuration problem (exit 2) for a stack that installs those charts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from eks_devices.cli.app import app
from eks_devices.core.config.stack import ConfigError, parse
from eks_devices.core.knowledge import registries
from support import stacks

STATIC = {"provisioning": "static", "replicas": 1}
EFA_POOLS = {
    "dra": {"instanceTypes": ["p5.48xlarge"], **STATIC, "devices": {"efa": "dra"}},
    "plugin": {"instanceTypes": ["p5.48xlarge"], **STATIC, "devices": {"efa": "device-plugin"}},
}


def images(region: str) -> dict[str, str]:
    p = stacks.plan("managed-node-groups", pools=EFA_POOLS, region=region)
    return {key: p.releases[key].values["image"]["repository"] for key in ("aws-dranet", "aws-efa-k8s-device-plugin")}


@pytest.mark.parametrize(("region", "registry"), [
    ("us-west-2", "602401143452.dkr.ecr.us-west-2.amazonaws.com"),
    ("af-south-1", "877085696533.dkr.ecr.af-south-1.amazonaws.com"),
    ("me-central-1", "759879836304.dkr.ecr.me-central-1.amazonaws.com"),
    ("us-gov-west-1", "013241004608.dkr.ecr.us-gov-west-1.amazonaws.com"),
    ("us-gov-east-1", "151742754352.dkr.ecr.us-gov-east-1.amazonaws.com"),
    ("cn-north-1", "918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn"),
    ("cn-northwest-1", "961992271922.dkr.ecr.cn-northwest-1.amazonaws.com.cn"),
])
def test_efa_images_come_from_the_regions_registry(region: str, registry: str) -> None:
    assert images(region) == {"aws-dranet": f"{registry}/eks/dranet",
                              "aws-efa-k8s-device-plugin": f"{registry}/eks/aws-efa-k8s-device-plugin"}


def test_the_shipped_stacks_keep_the_us_west_2_registry() -> None:
    for name in stacks.SHIPPED:
        for key, release in stacks.shipped_plan(name).releases.items():
            if key in ("aws-dranet", "aws-efa-k8s-device-plugin"):
                assert release.values["image"]["repository"].startswith(
                    "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/"), (name, key)


def test_a_user_image_still_wins() -> None:
    p = stacks.plan("managed-node-groups", pools=EFA_POOLS, region="af-south-1",
                    helmValues={"aws-dranet": {"image": {"repository": "mirror.example.com/dranet"}}})
    assert p.releases["aws-dranet"].values["image"]["repository"] == "mirror.example.com/dranet"


def test_a_region_without_a_known_registry_is_a_config_problem_listing_the_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        parse(stacks.config("managed-node-groups", pools=EFA_POOLS, region="xx-mars-1"))
    [problem] = [p for p in caught.value.problems if p.path == "aws:region"]
    assert "'xx-mars-1'" in problem.given
    for known in ("us-west-2", "af-south-1", "us-gov-west-1", "cn-north-1"):
        assert known in problem.accepted


@pytest.mark.parametrize("cfg", [
    stacks.config("managed-node-groups", pools={"g": {"instanceTypes": ["g6.xlarge"], **STATIC}},
                  region="xx-mars-1"),  # no EFA hardware: no EFA chart
    stacks.config("auto-mode", pools={"p": {"instanceTypes": ["p5.48xlarge"]}},
                  region="xx-mars-1"),  # Auto Mode runs EFA itself
    stacks.config("managed-node-groups", pools={"p": {"instanceTypes": ["p5.48xlarge"], **STATIC,
                                                      "devices": {"efa": "none"}}}, region="xx-mars-1"),
    stacks.config("managed-node-groups", pools=EFA_POOLS, region="xx-mars-1", helmValues={
        key: {"image": {"repository": f"mirror.example.com/{key}"}}
        for key in ("aws-dranet", "aws-efa-k8s-device-plugin")}),
])
def test_the_region_check_is_only_for_stacks_that_pull_the_efa_images(cfg: dict) -> None:
    parse(cfg)


def test_every_known_region_has_a_registry_and_china_its_own_domain() -> None:
    assert all(registries.eks_registry(r) for r in registries.known_regions())
    assert registries.eks_registry("xx-mars-1") is None
    assert all(registries.eks_registry(r).endswith(".amazonaws.com.cn")  # type: ignore[union-attr]
               for r in registries.known_regions() if r.startswith("cn-"))


def test_check_exits_2_for_an_unknown_region(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: ck\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.mars.yaml").write_text(
        "config:\n  aws:region: xx-mars-1\n"
        '  eks-devices:cluster: {name: ml, version: "1.36", mode: managed-node-groups}\n'
        "  eks-devices:nodePools:\n"
        "    efa: {instanceTypes: [p5.48xlarge], provisioning: static, replicas: 1}\n")
    result = CliRunner().invoke(app, ["check", "mars", "--project-dir", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 2
    assert "aws:region" in result.stdout + (result.stderr if result.stderr_bytes is not None else "")
