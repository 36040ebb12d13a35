"""The Helm values the toolkit reads back, and the shape each must have.

Per-chart overrides (`eks-devices:helmValues`) are free-form, but the toolkit reads some of them
to prove one manager per node and to list DeviceClasses: each agent's nodeSelector, affinity,
tolerations and instance-type list (`charts.Agent`), the NVIDIA driver's featureGates and
resourceApiVersion, the DRANET DeviceClass name, and Karpenter's settings. Those keys must have
the Kubernetes shape the chart templates render (a null deletes a key, as in Helm); anything else
is a config problem with its path, not a crash later.
"""

from __future__ import annotations

from typing import Any

from pydantic.alias_generators import to_camel

from eks_devices.core.config.errors import ConfigProblem, did_you_mean, show
from eks_devices.core.knowledge import charts, versions
from eks_devices.core.knowledge.charts import karpenter as karpenter_chart
from eks_devices.core.names import KARPENTER_SERVICE_ACCOUNT

ACCEPTED = {
    "mapping": "a mapping",
    "text": "text",
    "label-keys": "a list of node label keys",
    "texts": "a non-empty list of instance type names (the chart renders it into an `In` term, which needs a value)",
    "node-selector": "a mapping of label keys to text values (null removes a key)",
    "tolerations": "a list of tolerations, each a mapping with text key, operator, value and effect",
    "affinity": "a Kubernetes affinity: nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                ".nodeSelectorTerms is a list of terms whose matchExpressions list mappings with text key "
                "and operator and a list of values (the Neuron chart's instance-list placeholder allowed)",
}
TOLERATION_FIELDS = ("key", "operator", "value", "effect")


def read_paths(key: str) -> dict[str, str]:
    """Dotted value paths of one chart the toolkit reads, and their shapes."""
    out: dict[str, str] = {}
    for agent in charts.CHARTS[key].agents if key in charts.CHARTS else ():
        out[agent.node_selector] = "node-selector"
        if agent.affinity:
            out[agent.affinity] = "affinity"
        if agent.tolerations:
            out[agent.tolerations] = "tolerations"
        if agent.instance_types:
            out[agent.instance_types] = "texts"
        if agent.instance_label_keys:
            out[agent.instance_label_keys] = "label-keys"
    return {**out, **dict(charts.CHARTS[key].read_values if key in charts.CHARTS else ())}


def _fits(shape: str, value: Any) -> bool:
    if shape == "mapping":
        return isinstance(value, dict)
    if shape == "text":
        return isinstance(value, str)
    if shape == "label-keys":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if shape == "texts":
        return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    if shape == "node-selector":
        return isinstance(value, dict) and all(isinstance(k, str) and (v is None or isinstance(v, str))
                                               for k, v in value.items())
    if shape == "tolerations":
        return isinstance(value, list) and all(
            isinstance(t, dict) and all(t.get(f) is None or isinstance(t.get(f), str) for f in TOLERATION_FIELDS)
            for t in value)
    return _affinity_fits(value)


def _affinity_fits(value: Any) -> bool:
    node: Any = value
    for step in ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"):
        if not isinstance(node, dict):
            return False
        node = node.get(step)
        if node is None:
            return True
    if not isinstance(node, dict):
        return False
    terms = node.get("nodeSelectorTerms")
    if terms is None:
        return True
    if not isinstance(terms, list) or not all(isinstance(t, dict) for t in terms):
        return False
    for term in terms:
        expressions = term.get("matchExpressions")
        if expressions is None:
            continue
        if not isinstance(expressions, list):
            return False
        for e in expressions:
            if not (isinstance(e, dict) and isinstance(e.get("key"), str) and isinstance(e.get("operator"), str)
                    and (e.get("values") is None or isinstance(e.get("values"), list)
                         or e.get("values") == charts.NEURON_INSTANCES)):
                return False
    return True


def karpenter_identity_problems(values: dict[str, Any]) -> list[ConfigProblem]:
    """Overrides that take the Karpenter controller off the service account its Pod Identity association
    names (KARPENTER_SERVICE_ACCOUNT): without AWS credentials it launches no node. The chart names the
    account `serviceAccount.name`, else its full name (`fullnameOverride`, else the release name unless
    `nameOverride` is not part of it), and runs as `default` when `serviceAccount.create` is false
    (aws/karpenter-provider-aws v1.15.0 charts/karpenter/templates/_helpers.tpl)."""
    at = "helmValues.karpenter"
    why = (f"the controller gets its AWS identity through an EKS Pod Identity association for service account "
           f"{KARPENTER_SERVICE_ACCOUNT!r}")
    out: list[ConfigProblem] = []
    account = values.get("serviceAccount")
    account = account if isinstance(account, dict) else {}
    if "create" in account and account["create"] is not True and account["create"] is not None:
        out.append(ConfigProblem(f"{at}.serviceAccount.create", show(account["create"]),
                                 f"true or no override ({why}, which the chart creates)"))
    name = account.get("name")
    if name not in (None, "", KARPENTER_SERVICE_ACCOUNT):
        out.append(ConfigProblem(f"{at}.serviceAccount.name", show(name),
                                 f"{KARPENTER_SERVICE_ACCOUNT!r} or no override ({why})"))
    if not name:
        full, short = values.get("fullnameOverride"), values.get("nameOverride")
        if full not in (None, "", KARPENTER_SERVICE_ACCOUNT):
            out.append(ConfigProblem(f"{at}.fullnameOverride", show(full),
                                     f"no override ({why}; the chart names the account after its full name)"))
        elif not full and short not in (None, "") and not (isinstance(short, str)
                                                           and short in KARPENTER_SERVICE_ACCOUNT):
            out.append(ConfigProblem(f"{at}.nameOverride", show(short),
                                     f"no override ({why}; the chart names the account after its full name)"))
    return out


def karpenter_settings_problems(settings: Any, at: str, version: str) -> list[ConfigProblem]:
    """Keys of a Karpenter release's `settings` (at config path `at`) its chart does not read, each at its own
    path with the nearest key it reads: Karpenter drops them without a word, so `enable_dra` leaves DRA off
    and a rule would only say that DRA is off. A gate given one level up (`staticCapacity`) is named in its
    mapping (`featureGates.staticCapacity`). Only for a release of the minor whose chart was read
    (`version`): another minor may read keys this one does not, and a valid stack must not be refused."""
    if versions.semver(version)[:2] != versions.semver(karpenter_chart.SETTINGS_VERSION)[:2]:
        return []
    out: list[ConfigProblem] = []
    nested = {k.lower(): f"{section}.{k}" for section, keys in karpenter_chart.SETTINGS_KEYS.items() if section
              for k in keys}
    for section, keys in karpenter_chart.SETTINGS_KEYS.items():
        node = settings.get(section) if section else settings
        if not isinstance(node, dict):
            continue
        where = f"{at}.{section}" if section else at
        for key in sorted((k for k in node if k not in keys), key=str):
            folded = str(key).replace("_", "").replace("-", "").lower()
            same = [k for k in keys if k.lower() == folded] or ([nested[folded]] if not section and folded in nested
                                                                else [])
            hint = f"did you mean {same[0]!r}? " if same else did_you_mean(to_camel(str(key)), keys)
            out.append(ConfigProblem(
                f"{where}.{key}", f"unknown key {str(key)!r}",
                f"{hint}a key Karpenter's chart {karpenter_chart.SETTINGS_VERSION} reads under "
                f"{'settings.' + section if section else 'settings'} (it drops any other without a word): "
                f"{', '.join(keys)}"))
    return out


def problems(helm_values: dict[str, dict[str, Any]], karpenter_version: str) -> list[ConfigProblem]:
    """Every read value of the overrides that lacks its shape (or sits under a non-mapping), Karpenter
    overrides that leave its controller without an AWS identity, and settings its chart (the release
    `karpenter_version`) does not read."""
    karpenter = helm_values.get("karpenter") or {}
    out: list[ConfigProblem] = karpenter_identity_problems(karpenter)
    if isinstance(karpenter.get("settings"), dict):
        out += karpenter_settings_problems(karpenter["settings"], "helmValues.karpenter.settings", karpenter_version)
    for key, values in helm_values.items():
        for path, shape in read_paths(key).items():
            node: Any = values
            parts = path.split(".")
            for i, part in enumerate(parts):
                if not isinstance(node, dict) or part not in node or node[part] is None:
                    break
                node = node[part]
                here = ".".join(parts[: i + 1])
                if i < len(parts) - 1 and not isinstance(node, dict):
                    problem = ConfigProblem(f"helmValues.{key}.{here}", show(node),
                                            f"a mapping (the toolkit reads {path} inside it)")
                    if problem not in out:
                        out.append(problem)
                    break
                if i == len(parts) - 1 and not _fits(shape, node):
                    out.append(ConfigProblem(f"helmValues.{key}.{here}", show(node), ACCEPTED[shape]))
    return out
