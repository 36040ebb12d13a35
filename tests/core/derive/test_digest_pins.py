"""`eks-devices:digests` in the plan: Helm pulls pinned OCI charts by digest, and each pinned image's
tag value carries its digest, after the stack's helmValues (so nothing but the pin decides what runs)."""

from __future__ import annotations

from typing import Any

from eks_devices.core.knowledge import charts
from eks_devices.core.values import dig
from support import stacks

DIGEST = "sha256:" + "ab" * 32
OTHER = "sha256:" + "cd" * 32
EFA_PLUGIN_US_WEST_2 = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin"
POOLS = {"gpu": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "device-plugin", "efa": "device-plugin"}},
         "dra": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "device-plugin"}}}


def plan(digests: dict[str, Any], **sections: Any) -> Any:
    return stacks.build(stacks.config("karpenter", "1.36", POOLS, digests=digests, **sections))


def test_nothing_is_pinned_unless_the_stack_says() -> None:
    p = plan({})
    assert p.releases["nvidia-dra-driver"].chart == charts.CHARTS["nvidia-dra-driver"].reference
    assert dig(p.releases["nvidia-device-plugin"].values, "image") is None
    assert p.karpenter is not None and p.karpenter.charts["karpenter"] == charts.CHARTS["karpenter"].reference


def test_pinned_oci_charts_are_pulled_by_digest_at_their_version() -> None:
    p = plan({"charts": {"nvidia-dra-driver": f"0.5.0@{DIGEST}", "karpenter": f"1.15.0@{OTHER}"}})
    release = p.releases["nvidia-dra-driver"]
    assert release.chart == f"oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu@{DIGEST}"
    assert release.version == "0.5.0"
    assert p.karpenter is not None
    assert p.karpenter.charts == {"karpenter": f"oci://public.ecr.aws/karpenter/karpenter@{OTHER}",
                                  "karpenter-crd": charts.CHARTS["karpenter-crd"].reference}


def test_pinned_images_carry_their_digest_in_the_charts_tag_value_over_the_stacks_overrides() -> None:
    p = plan({"images": {"nvcr.io/nvidia/k8s-device-plugin": f"v0.20.0@{DIGEST}",
                         EFA_PLUGIN_US_WEST_2: f"v0.5.20@{OTHER}",
                         "public.ecr.aws/karpenter/controller": f"1.15.0@{DIGEST}"}},
             helmValues={"nvidia-device-plugin": {"image": {"pullPolicy": "Always"}}})
    plugin = p.releases["nvidia-device-plugin"].values["image"]
    assert plugin == {"tag": f"v0.20.0@{DIGEST}", "pullPolicy": "Always"}
    efa = p.releases["aws-efa-k8s-device-plugin"].values["image"]
    assert efa == {"repository": EFA_PLUGIN_US_WEST_2, "tag": f"v0.5.20@{OTHER}"}
    assert p.karpenter is not None
    assert dig(p.karpenter.values, "controller.image") == {"tag": "1.15.0", "digest": DIGEST}
    assert dig(p.releases["nvidia-dra-driver"].values, "image") is None  # not pinned: left to the chart


def test_a_mirrored_repository_is_pinned_under_its_own_name() -> None:
    mirror = "registry.example.com/mirror/k8s-device-plugin"
    p = plan({"images": {mirror: f"v0.20.0@{DIGEST}"}},
             helmValues={"nvidia-device-plugin": {"image": {"repository": mirror}}})
    assert p.releases["nvidia-device-plugin"].values["image"] == {"repository": mirror, "tag": f"v0.20.0@{DIGEST}"}
