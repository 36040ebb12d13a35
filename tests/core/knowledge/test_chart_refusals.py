"""Each render refusal of the upstream charts (each chart descriptor's `refusals`, `knowledge/charts/`) is an
error at its config path; the toolkit's own values never hit one."""

from __future__ import annotations

from typing import Any

import pytest

from eks_devices.core.knowledge import charts
from eks_devices.core.rules import RULES
from support import stacks

GPU = {"instanceTypes": ["g6.xlarge"]}
DRA = {"p": {**GPU, "devices": {"nvidia": "dra"}}}
CD = {"p": {**GPU, "provisioning": "static", "replicas": 1, "devices": {"nvidia": "dra"}, "computeDomains": True}}
PLUGIN = {"p": {**GPU, "devices": {"nvidia": "device-plugin"}}}
SLICED = {"p": {**GPU, "devices": {"nvidia": "device-plugin"}, "gpuSharing": {"strategy": "time-slicing",
                                                                               "replicas": 4}}}
EFA = {"p": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "device-plugin", "efa": "dra"}}}
WEBHOOK = {"enabled": True}

# (pools, chart key, override, blamed path, chart version or None for the pin) — one case per refusal
REFUSED: dict[str, tuple[dict[str, Any], str, dict[str, Any], str, str | None]] = {
    "dra-namespace": (DRA, "nvidia-dra-driver", {"namespace": "gpu"}, "namespace", None),
    "dra-gpu-override": (DRA, "nvidia-dra-driver", {"gpuResourcesEnabledOverride": False},
                         "gpuResourcesEnabledOverride", None),
    "dra-gpu-override-null": (DRA, "nvidia-dra-driver", {"gpuResourcesEnabledOverride": None},
                              "gpuResourcesEnabledOverride", None),
    "dra-ctk-path": (DRA, "nvidia-dra-driver", {"nvidiaCtkPath": "/usr/bin/nvidia-ctk"}, "nvidiaCtkPath", None),
    "dra-webhook-mode": (DRA, "nvidia-dra-driver", {"webhook": {**WEBHOOK, "tls": {"mode": "acme"}}},
                         "webhook.tls.mode", None),
    "dra-webhook-issuer-type": (DRA, "nvidia-dra-driver", {"webhook": {**WEBHOOK, "tls": {
        "certManager": {"issuerType": "vault"}}}}, "webhook.tls.certManager.issuerType", None),
    "dra-webhook-issuer-name": (DRA, "nvidia-dra-driver", {"webhook": {**WEBHOOK, "tls": {
        "certManager": {"issuerType": "clusterissuer"}}}}, "webhook.tls.certManager.issuerType", None),
    "dra-webhook-secret": (DRA, "nvidia-dra-driver", {"webhook": {**WEBHOOK, "tls": {"mode": "secret"}}},
                           "webhook.tls.mode", None),
    "dra-imex-mode": (CD, "nvidia-dra-driver", {"resources": {"computeDomains": {"imex": {"mode": "hostManaged"}}}},
                      "resources.computeDomains.imex.mode", "0.5.0"),
    "dra-imex-isolation": (CD, "nvidia-dra-driver", {"resources": {"computeDomains": {
        "imex": {"isolation": "channel"}}}}, "resources.computeDomains.imex.isolation", "0.5.0"),
    "plugin-namespace": (PLUGIN, "nvidia-device-plugin", {"namespace": "gpu"}, "namespace", None),
    "plugin-config-both": (SLICED, "nvidia-device-plugin", {"config": {"name": "my-configs"}}, "config.name", None),
    "plugin-config-default": (SLICED, "nvidia-device-plugin", {"config": {"default": "", "fallbackStrategies": [
        "single"]}}, "config.default", None),
    "dranet-image-tag": (EFA, "aws-dranet", {"image": {"tag": ""}}, "image.tag", None),
}

# the nearest accepted override for each case
ACCEPTED: dict[str, dict[str, Any]] = {
    "dra-namespace": {"namespaceOverride": ""},
    "dra-gpu-override": {"gpuResourcesEnabledOverride": True},
    "dra-gpu-override-null": {"gpuResourcesEnabledOverride": True},
    "dra-ctk-path": {"nvidiaCDIHookPath": ""},
    "dra-webhook-mode": {"webhook": {**WEBHOOK, "tls": {"mode": "cert-manager"}}},
    "dra-webhook-issuer-type": {"webhook": {**WEBHOOK, "tls": {"certManager": {"issuerType": "issuer",
                                                                                "issuerName": "ca"}}}},
    "dra-webhook-issuer-name": {"webhook": {**WEBHOOK, "tls": {"certManager": {"issuerType": "clusterissuer",
                                                                                "issuerName": "ca"}}}},
    "dra-webhook-secret": {"webhook": {**WEBHOOK, "tls": {"mode": "secret", "secret": {"name": "tls"}}}},
    "dra-imex-mode": {"resources": {"computeDomains": {"imex": {"mode": "hostManaged"}}},
                      "featureGates": {"HostManagedIMEXDaemon": True}},
    "dra-imex-isolation": {"resources": {"computeDomains": {"imex": {"isolation": "domain"}}}},
    "plugin-namespace": {"namespaceOverride": "gpu"},
    "plugin-config-both": {"config": {"name": "my-configs", "map": None, "default": None}},
    "plugin-config-default": {"config": {"default": "", "fallbackStrategies": ["named"]}},
    "dranet-image-tag": {"image": {"tag": "v1.2.0-eksbuild.2"}},
}


def _plan(pools: dict[str, Any], key: str, override: dict[str, Any], version: str | None):
    return stacks.plan("karpenter", "1.36", pools, helmValues={key: override},
                       **({"chartVersions": {key: version}} if version else {}))


def test_every_refusal_has_a_case() -> None:
    """Each modelled refusal is hit by exactly the cases naming its chart and path, and the rule is registered."""
    assert "chart-render-refused" in RULES
    hit = set()
    for pools, key, override, _, version in REFUSED.values():
        release = _plan(pools, key, override, version).releases[key]
        hit |= {(r.chart, r.paths) for r in charts.refusals(key, release.version, release.values)}
    assert hit == {(r.chart, r.paths) for r in charts.REFUSALS}
    assert set(ACCEPTED) == set(REFUSED)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_override_is_an_error_at_its_path(name: str) -> None:
    pools, key, override, path, version = REFUSED[name]
    found = stacks.findings(_plan(pools, key, override, version), "chart-render-refused")
    assert [(f.severity, f.path) for f in found] == [("error", f"helmValues.{key}.{path}")]
    assert "refuses to render" in found[0].message and "its pools (p) get no" in found[0].message
    assert found[0].fix.startswith("accepted: ")


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_override_renders(name: str) -> None:
    pools, key, _, _, version = REFUSED[name]
    assert not stacks.findings(_plan(pools, key, ACCEPTED[name], version), "chart-render-refused")


def test_imex_checks_only_from_0_5_0() -> None:
    """0.4.1 has no IMEX settings and no check on them: the same override passes there."""
    pools, key, override, _, _ = REFUSED["dra-imex-isolation"]
    assert not stacks.findings(_plan(pools, key, override, "0.4.1"), "chart-render-refused")


def test_toolkit_values_never_refused() -> None:
    """The toolkit's own values render, for every release of the shipped stacks and of the cases above."""
    plans = [stacks.shipped_plan(f.name.split(".")[1]) for f in sorted(stacks.STACKS.glob("Pulumi.*.yaml"))]
    plans += [_plan(pools, key, {}, version) for pools, key, _, _, version in REFUSED.values()]
    checked = [(r.key, r.version) for p in plans for r in p.releases.values()]
    assert {key for key, _ in checked} >= {"nvidia-dra-driver", "nvidia-device-plugin", "aws-dranet"}
    for plan in plans:
        for release in plan.releases.values():
            assert not charts.refusals(release.key, release.version, release.toolkit_values), release.key


def test_go_truthiness() -> None:
    assert [charts.truthy(v) for v in (None, False, 0, "", {}, [], "x", 1, {"a": 1}, [0], True)] == [
        False] * 6 + [True] * 5


def test_host_managed_imex_renders_no_daemon_class() -> None:
    """0.5.0 skips the compute-domain-daemon DeviceClass when the host runs IMEX (with its gate on)."""
    pools, key, _, _, version = REFUSED["dra-imex-mode"]
    names = {c.name for c in _plan(pools, key, ACCEPTED["dra-imex-mode"], version).device_classes}
    assert "compute-domain-default-channel.nvidia.com" in names
    assert "compute-domain-daemon.nvidia.com" not in names
    assert "compute-domain-daemon.nvidia.com" in {c.name for c in _plan(pools, key, {}, version).device_classes}
