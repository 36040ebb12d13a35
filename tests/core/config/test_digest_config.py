"""`eks-devices:digests` as configuration: pins in the `<version or tag>@sha256:<hex>` shape, charts
only from OCI registries (Helm checks no digest of an HTTP repository's chart), repositories as image
references name them; every problem at its path."""

from __future__ import annotations

import pytest

from eks_devices.core.config.errors import ConfigError
from support import stacks

DIGEST = "sha256:" + "ab" * 32


def problems(digests: object) -> dict[str, str]:
    """Each problem's accepted text by path (a value of the wrong type is blamed at its key, a bad pin
    at its section)."""
    with pytest.raises(ConfigError) as caught:
        stacks.build(stacks.config("karpenter", digests=digests))
    return {p.path: p.accepted for p in caught.value.problems}


def test_an_http_chart_cannot_be_pinned_and_the_error_says_what_can() -> None:
    found = problems({"charts": {"nvidia-device-plugin": f"0.20.0@{DIGEST}"}})
    assert "HTTP Helm repository" in found["digests.charts"] and "pin their images instead" in found["digests.charts"]
    assert "karpenter" in found["digests.charts"]


@pytest.mark.parametrize("pin", ["0.5.0", f"0.5.0@{DIGEST.upper()}", "0.5.0@sha256:abc", f"@{DIGEST}",
                                 f"0.5.0@sha512:{'ab' * 64}"])
def test_a_pin_needs_a_version_and_a_sha256_digest(pin: object) -> None:
    assert "@sha256:<64 lower-case hex digits>" in problems({"charts": {"nvidia-dra-driver": pin}})["digests.charts"]


def test_a_pin_that_is_not_text_is_blamed_at_its_key() -> None:
    assert "digests.charts.nvidia-dra-driver" in problems({"charts": {"nvidia-dra-driver": 5}})


def test_image_keys_are_repositories_and_unknown_keys_are_refused_all_at_once() -> None:
    found = problems({"images": {"nvcr.io/nvidia/k8s-device-plugin:v0.20.0": f"v0.20.0@{DIGEST}"},
                      "charts": {"no-such-chart": f"1.0.0@{DIGEST}"}, "layers": {}})
    assert "without tag or digest" in found["digests.images"]
    assert "chart keys: karpenter-crd, karpenter," in found["digests.charts"] and "digests.layers" in found


def test_well_formed_pins_are_accepted() -> None:
    spec = stacks.build(stacks.config("karpenter", digests={
        "charts": {"karpenter": f"1.15.0@{DIGEST}"},
        "images": {"registry.example.com:5000/mirror/k8s-device-plugin": f"v0.20.0@{DIGEST}"}})).spec
    assert spec.digests.charts == {"karpenter": f"1.15.0@{DIGEST}"}
