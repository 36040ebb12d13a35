"""The digest rules: a pin must be of what the stack installs, at its version and tag (else Helm refuses
the chart, or the kubelet runs another release's image under this chart), and a stack that pins some of
what it installs is told what it left to tags."""

from __future__ import annotations

from typing import Any

from support import stacks

DIGEST = "sha256:" + "ab" * 32
PLUGIN = "nvcr.io/nvidia/k8s-device-plugin"
EFA_PLUGIN = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin"
POOLS = {"gpu": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "device-plugin", "efa": "device-plugin"}}}


def findings(digests: dict[str, Any], slug: str, **sections: Any) -> list[tuple[str, str, str]]:
    p = stacks.build(stacks.config("karpenter", "1.36", POOLS, digests=digests, **sections))
    return [(f.path, f.message, f.fix) for f in stacks.findings(p, slug)]


def test_a_complete_set_of_pins_is_quiet() -> None:
    pins = {"charts": {"karpenter": f"1.15.0@{DIGEST}", "karpenter-crd": f"1.15.0@{DIGEST}"},
            "images": {PLUGIN: f"v0.20.0@{DIGEST}", EFA_PLUGIN: f"v0.5.20@{DIGEST}",
                       "public.ecr.aws/karpenter/controller": f"1.15.0@{DIGEST}"}}
    assert findings(pins, "digest-pins-installed") == []
    assert findings(pins, "digests-complete") == []


def test_a_chart_pinned_at_another_version_or_not_installed_is_an_error() -> None:
    found = findings({"charts": {"karpenter": f"1.14.1@{DIGEST}", "nvidia-dra-driver": f"0.5.0@{DIGEST}"}},
                     "digest-pins-installed")
    by_path = {path: (message, fix) for path, message, fix in found}
    assert set(by_path) == {"digests.charts.karpenter", "digests.charts.nvidia-dra-driver"}
    assert "pins karpenter 1.14.1, but the stack installs 1.15.0" in by_path["digests.charts.karpenter"][0]
    assert "helm pull oci://public.ecr.aws/karpenter/karpenter --version 1.15.0" in by_path["digests.charts.karpenter"][1]
    assert "does not install" in by_path["digests.charts.nvidia-dra-driver"][0]


def test_an_image_no_release_runs_or_at_another_releases_tag_is_an_error() -> None:
    found = findings({"images": {PLUGIN: f"v0.19.0@{DIGEST}", "nvcr.io/nvidia/k8s-dra-driver-gpu": f"v25@{DIGEST}"}},
                     "digest-pins-installed")
    by_path = {path: (message, fix) for path, message, fix in found}
    assert "pins tag v0.19.0, but nvidia-device-plugin 0.20.0 runs v0.20.0" in by_path[f"digests.images.{PLUGIN}"][0]
    stray = by_path["digests.images.nvcr.io/nvidia/k8s-dra-driver-gpu"]
    assert "none of the stack's releases runs" in stray[0] and PLUGIN in stray[1] and EFA_PLUGIN in stray[1]


def test_an_override_of_a_pinned_images_tag_is_an_error_at_the_override() -> None:
    found = findings({"images": {PLUGIN: f"v0.20.0@{DIGEST}"}}, "digest-pins-installed",
                     helmValues={"nvidia-device-plugin": {"image": {"tag": "v0.20.1"}}})
    assert [(path, "the pin writes it" in message) for path, message, _ in found] == [
        ("helmValues.nvidia-device-plugin.image.tag", True)]


def test_partial_pinning_names_what_is_left_to_tags() -> None:
    found = findings({"images": {PLUGIN: f"v0.20.0@{DIGEST}"}}, "digests-complete")
    paths = [path for path, _, _ in found]  # each at the key to add, which its message and fix name
    assert set(paths) >= {"digests.charts.karpenter", "digests.charts.karpenter-crd", f"digests.images.{EFA_PLUGIN}",
                          "digests.images.public.ecr.aws/karpenter/controller"}
    assert all(path in message and path in fix for path, message, fix in found)
    assert "digests.charts.nvidia-device-plugin" not in paths  # an HTTP chart cannot be pinned
    assert findings({}, "digests-complete") == []
