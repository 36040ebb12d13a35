"""What the upstream charts refuse to render: their own `fail` calls, as data.

A release whose merged values hit one of these never installs (`helm install` stops at the template), so
every pool it serves is left without its device manager. Each refusal names the chart (a key of
`charts.CHARTS`), the values it reads, the condition as the template writes it (Go template truthiness:
unset, null, false, 0, "" and empty maps and lists are false; a chart default applies while a value is
unset), and the template it comes from at the chart version read:

- dra-driver-nvidia-gpu `deployments/helm/dra-driver-nvidia-gpu/templates/validation.yaml` at v0.4.1
  (kubernetes-sigs/dra-driver-nvidia-gpu; unchanged on main at 95932046, the 0.5.0 development line),
  and `templates/_helpers.tpl` `validateIMEXConfig` (main at 95932046, released in 0.5.0, PR #1367);
- nvidia-device-plugin `deployments/helm/nvidia-device-plugin/templates/validation.yml` at v0.20.0
  (NVIDIA/k8s-device-plugin), with `hasDefaultConfig` from `templates/_helpers.tpl`;
- aws-dranet `stable/aws-dranet/templates/daemonset.yaml` at chart 1.0.0 (aws/eks-charts).

Refusals the toolkit cannot reach are left out: the charts' `default`-namespace checks (the toolkit
installs into `nvidia` / `kube-system`, not `default`) and the DRA chart's resource.k8s.io API check
(the toolkit sets `resourceApiVersion`, and every supported Kubernetes version serves resource.k8s.io/v1).
The Karpenter chart's `enableDRA` refusal is `karpenter-dra-gates-exclusive`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eks_devices.core.knowledge import versions
from eks_devices.core.values import chart_value

Values = dict[str, Any]

NVIDIA_DRA_VALIDATION = "dra-driver-nvidia-gpu v0.4.1 templates/validation.yaml"
NVIDIA_DRA_IMEX = "dra-driver-nvidia-gpu v0.5.0 templates/_helpers.tpl (validateIMEXConfig)"
NVIDIA_PLUGIN_VALIDATION = "nvidia-device-plugin v0.20.0 templates/validation.yml"
DRANET_DAEMONSET = "aws-dranet 1.0.0 templates/daemonset.yaml"


def truthy(value: Any) -> bool:
    """Go template truthiness, as `if` / `and` / `not` judge a value."""
    return value not in (None, False, 0, "") and not (isinstance(value, dict | list) and not value)


@dataclass(frozen=True)
class Refusal:
    """One `fail` of a chart: `refuses(values)` is true when the template stops rendering.

    `paths` are the values the condition reads, the one to blame first (the finding names the first of
    them the stack overrides, else the first). `since` is the first chart version whose template has it."""

    chart: str
    paths: tuple[str, ...]
    refuses: Callable[[Values], bool]
    problem: str
    accepted: str
    source: str
    since: str = "0.0.0"

    def applies(self, version: str) -> bool:
        try:
            return versions.semver(version) >= versions.semver(self.since)
        except ValueError:
            return True  # a version the spec let through but semver cannot read: judge by the newest template


def _webhook_on(values: Values) -> bool:
    return truthy(chart_value(values, "webhook.enabled", False))


def _tls_mode(values: Values) -> Any:
    return chart_value(values, "webhook.tls.mode", "cert-manager")


def _issuer_type(values: Values) -> Any:
    return chart_value(values, "webhook.tls.certManager.issuerType", "selfsigned")


def _imex(values: Values, field: str, default: str) -> str:
    """`dig <field> <default> imex` as the 0.5.0 helper reads it (a null imex map is an empty one)."""
    if not truthy(chart_value(values, "resources.computeDomains.enabled", True)):
        return default  # the kubelet plugin template validates IMEX only with ComputeDomains on
    imex = chart_value(values, "resources.computeDomains.imex", None) or {}
    value = imex.get(field) if isinstance(imex, dict) else None
    return default if value is None else str(value)  # Helm drops a null key: the default applies


def _plugin_has_default(values: Values) -> bool:
    """nvidia-device-plugin's `hasDefaultConfig`: `config.default`, or a fallback strategy that finds one."""
    if truthy(chart_value(values, "config.default", "")):
        return True
    config_map = chart_value(values, "config.map", {}) or {}
    strategies = chart_value(values, "config.fallbackStrategies", ["named", "single"]) or []
    return bool(config_map) and (("named" in strategies and "default" in config_map)
                                 or ("single" in strategies and len(config_map) == 1) or "empty" in strategies)


REFUSALS: tuple[Refusal, ...] = (
    Refusal("nvidia-dra-driver", ("namespace",), lambda v: truthy(chart_value(v, "namespace")),
            "an explicit `namespace` value is no longer supported", "no `namespace` value (the release's "
            "namespace is the toolkit's)", NVIDIA_DRA_VALIDATION),
    Refusal("nvidia-dra-driver", ("gpuResourcesEnabledOverride", "resources.gpus.enabled"),
            lambda v: truthy(chart_value(v, "resources.gpus.enabled", True))
            and not truthy(chart_value(v, "gpuResourcesEnabledOverride", False)),
            "GPU resources are on (resources.gpus.enabled) without gpuResourcesEnabledOverride: true",
            "gpuResourcesEnabledOverride: true while resources.gpus.enabled is on (the toolkit sets both)",
            NVIDIA_DRA_VALIDATION),
    Refusal("nvidia-dra-driver", ("nvidiaCtkPath",), lambda v: truthy(chart_value(v, "nvidiaCtkPath")),
            "a user-defined nvidiaCtkPath is no longer supported", "no nvidiaCtkPath value",
            NVIDIA_DRA_VALIDATION),
    Refusal("nvidia-dra-driver", ("webhook.tls.mode", "webhook.enabled"),
            lambda v: _webhook_on(v) and _tls_mode(v) not in ("cert-manager", "secret"),
            "the webhook is on without a valid webhook.tls.mode",
            "webhook.tls.mode: cert-manager or secret", NVIDIA_DRA_VALIDATION),
    Refusal("nvidia-dra-driver", ("webhook.tls.certManager.issuerType", "webhook.enabled"),
            lambda v: _webhook_on(v) and _tls_mode(v) == "cert-manager"
            and _issuer_type(v) not in ("selfsigned", "clusterissuer", "issuer"),
            "the webhook's cert-manager mode has no valid issuer type",
            "webhook.tls.certManager.issuerType: selfsigned, clusterissuer or issuer", NVIDIA_DRA_VALIDATION),
    Refusal("nvidia-dra-driver", ("webhook.tls.certManager.issuerName", "webhook.tls.certManager.issuerType"),
            lambda v: _webhook_on(v) and _tls_mode(v) == "cert-manager"
            and _issuer_type(v) in ("clusterissuer", "issuer")
            and not truthy(chart_value(v, "webhook.tls.certManager.issuerName", "")),
            "the webhook's cert-manager issuer is not self-signed but has no name",
            "webhook.tls.certManager.issuerName: the name of your issuer (or issuerType: selfsigned)",
            NVIDIA_DRA_VALIDATION),
    Refusal("nvidia-dra-driver", ("webhook.tls.secret.name", "webhook.tls.mode"),
            lambda v: _webhook_on(v) and _tls_mode(v) == "secret"
            and not truthy(chart_value(v, "webhook.tls.secret.name", "")),
            "the webhook's secret mode names no TLS secret",
            "webhook.tls.secret.name: the secret holding tls.crt and tls.key", NVIDIA_DRA_VALIDATION),
    Refusal("nvidia-dra-driver", ("resources.computeDomains.imex.mode", "featureGates.HostManagedIMEXDaemon"),
            lambda v: _imex(v, "mode", "driverManaged") not in ("driverManaged", "hostManaged")
            or (_imex(v, "mode", "driverManaged") == "hostManaged"
                and not truthy(chart_value(v, "featureGates.HostManagedIMEXDaemon", False))),
            "ComputeDomains' IMEX mode is unknown, or hostManaged without the HostManagedIMEXDaemon gate",
            "resources.computeDomains.imex.mode: driverManaged, or hostManaged with "
            "featureGates.HostManagedIMEXDaemon: true", NVIDIA_DRA_IMEX, since="0.5.0"),
    Refusal("nvidia-dra-driver", ("resources.computeDomains.imex.isolation",),
            lambda v: _imex(v, "isolation", "domain") not in ("", "domain"),
            "ComputeDomains' IMEX isolation is not `domain` (channel isolation is not implemented)",
            "resources.computeDomains.imex.isolation: domain", NVIDIA_DRA_IMEX, since="0.5.0"),
    Refusal("nvidia-device-plugin", ("namespace",), lambda v: truthy(chart_value(v, "namespace")),
            "an explicit `namespace` value is no longer supported", "no `namespace` value (the release's "
            "namespace is the toolkit's)", NVIDIA_PLUGIN_VALIDATION),
    Refusal("nvidia-device-plugin", ("config.name", "config.map"),
            lambda v: truthy(chart_value(v, "config.name", "")) and truthy(chart_value(v, "config.map", {})),
            "both config.name and config.map are set (the toolkit sets config.map for time-slicing pools)",
            "only one of config.name or config.map", NVIDIA_PLUGIN_VALIDATION),
    Refusal("nvidia-device-plugin", ("config.default", "config.map", "config.fallbackStrategies"),
            lambda v: truthy(chart_value(v, "config.map", {})) and not _plugin_has_default(v),
            "config.map has no default config and no fallback strategy finds one",
            "config.default naming an entry of config.map (or a map with a `default` entry)",
            NVIDIA_PLUGIN_VALIDATION),
    Refusal("aws-dranet", ("image.tag",), lambda v: not truthy(chart_value(v, "image.tag", "v1.2.0-eksbuild.2")),
            "image.tag is empty", "an image tag, or no image.tag value (the chart's default)", DRANET_DAEMONSET),
)


def refusals(chart: str, version: str, values: Values) -> list[Refusal]:
    """The refusals a release of `chart` at `version` with these merged values runs into."""
    return [r for r in REFUSALS if r.chart == chart and r.applies(version) and r.refuses(values)]
