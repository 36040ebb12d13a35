"""What the Kubernetes API server refuses in a pod template's scheduling fields.

The checks of kubernetes v1.34.0 `pkg/apis/core/validation/validation.go` for `nodeSelector`
(`ValidateLabels`), tolerations (`ValidateTolerations`) and node affinity (`ValidateNodeSelector`,
`ValidateNodeSelectorRequirement`, `ValidatePreferredSchedulingTerms`), with label names and values
as apimachinery `pkg/util/validation/validation.go` defines them. A DaemonSet that fails any of
them is refused when the release installs: the whole release fails, not one pool. Each problem is
returned as (sub-path, what is wrong), the sub-path relative to the field checked.
"""

from __future__ import annotations

import re
from typing import Any

from eks_devices.core import names
from eks_devices.core.vocabulary import NO_EXECUTE, TAINT_EFFECTS

_NAME = re.compile(names.QUALIFIED_NAME)
_SUBDOMAIN = re.compile(names.DNS_SUBDOMAIN)
_LABEL = re.compile(names.DNS_LABEL)
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
TOLERATION_OPERATORS = ("Equal", "Exists")
TERM_FIELDS = ("matchExpressions", "matchFields")

Problem = tuple[str, str]


def label_key_problem(key: Any) -> str | None:
    """Why `key` is not a qualified name (an optional DNS-subdomain prefix and `/`, then a name of
    at most 63 characters), or None."""
    if not isinstance(key, str) or not key:
        return "a label key must be non-empty text"
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)):
        return f"{key!r}: the prefix must be a DNS subdomain (lower-case, at most 253 characters)"
    if len(name) > 63 or not _NAME.fullmatch(name):
        return (f"{key!r}: the name must be at most 63 characters, alphanumerics, '-', '_' or '.', "
                "beginning and ending with an alphanumeric")
    return None


def label_value_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"{value!r}: a label value must be text"
    if value and (len(value) > 63 or not _NAME.fullmatch(value)):
        return (f"{value!r}: a label value must be empty or at most 63 characters, alphanumerics, '-', '_' "
                "or '.', beginning and ending with an alphanumeric")
    return None


def metadata_problems(obj: dict[str, Any]) -> list[Problem]:
    """What the API server refuses in an object's name and labels (apimachinery
    `pkg/api/validation/objectmeta.go` ValidateObjectMeta: most kinds are named by a DNS subdomain of at
    most 253 characters, a Namespace by a DNS label of at most 63; `ValidateLabels` for the labels)."""
    meta = obj.get("metadata") or {}
    out: list[Problem] = []
    name = meta.get("name")
    label_only = obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1"
    limit, pattern = (63, _LABEL) if label_only else (253, _SUBDOMAIN)
    if not isinstance(name, str) or len(name) > limit or not pattern.fullmatch(name):
        what = "a DNS label" if label_only else "a DNS subdomain"
        out.append(("metadata.name", f"{name!r} is not {what} (lower-case alphanumerics, '-'"
                                     f"{'' if label_only else ', ' + repr('.')}, at most {limit} characters)"))
    for key, value in (meta.get("labels") or {}).items():
        for found in (label_key_problem(key), label_value_problem(value)):
            if found:
                out.append((f"metadata.labels.{key}", found))
    return out


def node_selector_problems(selector: dict[str, Any]) -> list[Problem]:
    out: list[Problem] = []
    for key, value in selector.items():
        for problem in (label_key_problem(key), label_value_problem(value)):
            if problem:
                out.append((key, problem))
    return out


def toleration_problems(tolerations: list[Any]) -> list[Problem]:
    out: list[Problem] = []
    for i, tol in enumerate(tolerations):
        at = f"[{i}]"
        if not isinstance(tol, dict):
            out.append((at, "a toleration must be a mapping"))
            continue
        key, op, value = tol.get("key") or "", tol.get("operator") or "", tol.get("value") or ""
        if key and (problem := label_key_problem(key)):
            out.append((f"{at}.key", problem))
        if not key and op != "Exists":
            out.append((f"{at}.operator", "operator must be Exists when `key` is empty, which means "
                                          "\"match all values and all keys\""))
        if tol.get("tolerationSeconds") is not None and tol.get("effect") != NO_EXECUTE:
            out.append((f"{at}.effect", "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("", "Equal"):
            if problem := label_value_problem(value):
                out.append((f"{at}.value", problem))
        elif op == "Exists":
            if value:
                out.append((f"{at}.value", f"value must be empty when `operator` is 'Exists' (got {value!r})"))
        else:
            out.append((f"{at}.operator", f"{op!r} is not supported: Equal or Exists"))
        effect = tol.get("effect") or ""
        if effect and effect not in TAINT_EFFECTS:
            out.append((f"{at}.effect", f"{effect!r} is not supported: {', '.join(TAINT_EFFECTS)} or empty"))
    return out


def requirement_problems(expr: Any, at: str) -> list[Problem]:
    if not isinstance(expr, dict):
        return [(at, "a node selector requirement must be a mapping with key, operator and values")]
    out: list[Problem] = []
    op, values = expr.get("operator"), expr.get("values") or []
    if op in ("In", "NotIn") and not values:
        out.append((f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist") and values:
        out.append((f"{at}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt") and len(values) != 1:
        out.append((f"{at}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    elif op not in OPERATORS:
        out.append((f"{at}.operator", f"{op!r} is not a valid selector operator: {', '.join(OPERATORS)}"))
    if problem := label_key_problem(expr.get("key")):
        out.append((f"{at}.key", problem))
    return out


def _term_problems(term: Any, at: str) -> list[Problem]:
    if not isinstance(term, dict):
        return [(at, "a node selector term must be a mapping of matchExpressions and matchFields")]
    unknown = [k for k in term if k not in TERM_FIELDS]
    out = [(at, f"unknown field(s) {', '.join(repr(k) for k in unknown)}: a node selector term has only "
                "matchExpressions and matchFields")] if unknown else []
    for key in ("matchExpressions", "matchFields"):
        if not isinstance(term.get(key) or [], list):
            out.append((f"{at}.{key}", f"{term[key]!r}: must be a list"))
    expressions, fields = (term.get(key) if isinstance(term.get(key), list) else [] for key in TERM_FIELDS)
    for i, expr in enumerate(expressions):
        out += requirement_problems(expr, f"{at}.matchExpressions[{i}]")
    for i, field in enumerate(fields):
        where = f"{at}.matchFields[{i}]"
        if not isinstance(field, dict) or field.get("key") != "metadata.name":
            out.append((where, "the only supported field key is metadata.name"))
        elif field.get("operator") not in ("In", "NotIn") or len(field.get("values") or []) != 1:
            out.append((where, "metadata.name takes operator In or NotIn with exactly one value"))
    return out


def affinity_problems(affinity: Any) -> list[Problem]:
    """The node-affinity part of a pod's affinity (pod affinity is not the device software's)."""
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    if not isinstance(node, dict):
        return []
    out: list[Problem] = []
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        at = "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = required.get("nodeSelectorTerms") or []
        if not isinstance(terms, list):
            out.append((at, f"{terms!r}: must be a list of node selector terms"))
        elif not terms:
            out.append((at, "must have at least one node selector term"))
        else:
            for i, term in enumerate(terms):
                out += _term_problems(term, f"{at}[{i}]")
    preferred = node.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    if not isinstance(preferred, list):
        out.append(("nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
                    f"{preferred!r}: must be a list of weighted node selector terms"))
        preferred = []
    for i, pref in enumerate(preferred):
        at = f"nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        weight = pref.get("weight") if isinstance(pref, dict) else None
        if not isinstance(weight, int) or not 1 <= weight <= 100:
            out.append((f"{at}.weight", f"{weight!r}: must be in the range 1-100"))
        if isinstance(pref, dict):
            out += _term_problems(pref.get("preference") or {}, f"{at}.preference")
    return out
