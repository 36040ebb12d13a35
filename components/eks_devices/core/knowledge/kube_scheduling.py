"""Kubernetes' own scheduling semantics, as the scheduler and the DaemonSet controller apply them.

Pure functions over plain dicts shaped like the API objects, so the overlap proof can place a
DaemonSet on a node the way Kubernetes would:

- required node affinity (kubernetes/component-helpers v0.34.0
  `scheduling/corev1/nodeaffinity/nodeaffinity.go`): the terms are ORed, a term's expressions
  ANDed; a selector with no terms, and a null or empty term (no `matchExpressions`, no
  `matchFields`), match no node; `NotIn` and `DoesNotExist` match a node without the label;
  `Gt`/`Lt` compare the label's value and the single value as int64s parsed as Go parses them
  (no `1_000`, nothing past int64), and match nothing when either is not one or the label is missing
  (apimachinery `pkg/labels/selector.go`);
- taints and tolerations (kubernetes/api v0.34.0 `core/v1/toleration.go` `ToleratesTaint`): an
  empty effect matches every effect, an empty key with `Exists` every key, `Equal` (or no
  operator) compares values; only `NoSchedule` and `NoExecute` keep a pod off
  (`PreferNoSchedule` never blocks);
- the tolerations the DaemonSet controller adds to every daemon pod (kubernetes v1.34.0
  `pkg/controller/daemon/util/daemonset_util.go` `AddOrUpdateDaemonPodTolerations`).
"""

from __future__ import annotations

import re
from typing import Any

from eks_devices.core.names import NODE_CONDITION_TAINT_PREFIX
from eks_devices.core.vocabulary import NO_EXECUTE, NO_SCHEDULE

BLOCKING_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)

# What the DaemonSet controller adds to every daemon pod (condition, effect), and to host-network
# ones the last.
_AUTOMATIC = (("not-ready", NO_EXECUTE), ("unreachable", NO_EXECUTE), ("disk-pressure", NO_SCHEDULE),
              ("memory-pressure", NO_SCHEDULE), ("pid-pressure", NO_SCHEDULE), ("unschedulable", NO_SCHEDULE))
DAEMONSET_TOLERATIONS: tuple[dict[str, str], ...] = tuple(
    {"key": f"{NODE_CONDITION_TAINT_PREFIX}{condition}", "operator": "Exists", "effect": effect}
    for condition, effect in _AUTOMATIC)
HOST_NETWORK_TOLERATION = {"key": f"{NODE_CONDITION_TAINT_PREFIX}network-unavailable", "operator": "Exists",
                           "effect": NO_SCHEDULE}


def daemonset_tolerations(tolerations: list[dict[str, Any]], host_network: bool) -> list[dict[str, Any]]:
    """A daemon pod's tolerations: its template's plus the controller's automatic ones."""
    extra = list(DAEMONSET_TOLERATIONS) + ([HOST_NETWORK_TOLERATION] if host_network else [])
    return list(tolerations) + extra


_INT64 = re.compile(r"[+-]?[0-9]+")


def _integer(text: Any) -> int | None:
    """The label or bound as Go's `strconv.ParseInt(s, 10, 64)` reads it (apimachinery
    `pkg/labels/selector.go`): an optional sign and ASCII digits within int64, else None. Python's
    `int()` also takes `1_000`, surrounding spaces and any size, which the scheduler never matches."""
    value = str(text)
    if not _INT64.fullmatch(value):
        return None
    number = int(value, 10)
    return number if -(2**63) <= number < 2**63 else None


def expression_matches(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    """One node selector requirement against a node's labels."""
    key, op = expr.get("key"), expr.get("operator")
    wanted = [str(v) for v in expr.get("values") or []]
    present = key in labels
    if op == "In":
        return present and labels[key] in wanted
    if op == "NotIn":
        return not present or labels[key] not in wanted
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(wanted) == 1:
        have, bound = _integer(labels[key]), _integer(wanted[0])
        if have is None or bound is None:
            return False
        return have > bound if op == "Gt" else have < bound
    return False


def term_matches(term: Any, labels: dict[str, str]) -> bool:
    """A node selector term: all its expressions. A null or empty term matches no node, and a
    `matchFields` requirement (on the node's name, which the plan cannot know) none either."""
    if not isinstance(term, dict):
        return False
    expressions = term.get("matchExpressions") or []
    if not expressions or term.get("matchFields"):
        return False
    return all(isinstance(e, dict) and expression_matches(e, labels) for e in expressions)


def required_terms(affinity: Any) -> list[Any] | None:
    """The required node selector terms of an affinity, or None when it requires nothing."""
    node: Any = affinity
    for step in ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"):
        if not isinstance(node, dict) or node.get(step) is None:
            return None
        node = node[step]
    terms = node.get("nodeSelectorTerms") if isinstance(node, dict) else None
    return list(terms) if isinstance(terms, list) else []


def affinity_matches(affinity: Any, labels: dict[str, str]) -> bool:
    """Required node affinity: no requirement admits every node; otherwise any term must match
    (so an empty list of terms admits none)."""
    terms = required_terms(affinity)
    return terms is None or any(term_matches(t, labels) for t in terms)


def node_selector_matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """Whether one toleration tolerates one taint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def blocking_taints(tolerations: list[dict[str, Any]], taints: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The taints that keep a pod with these tolerations off the node."""
    return [t for t in taints if t.get("effect") in BLOCKING_EFFECTS
            and not any(tolerates(tol, t) for tol in tolerations)]
