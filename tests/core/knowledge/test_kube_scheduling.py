"""Kubernetes' scheduling semantics and API validation (knowledge/kube_scheduling.py,
knowledge/kube_validation.py), the labels nodes carry (knowledge/node_labels.py) and Helm's merge
of an affinity value into a chart default (derive/daemonsets.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eks_devices.core.derive import daemonsets
from eks_devices.core.knowledge import catalog, charts, kube_scheduling, kube_validation, node_labels
from eks_devices.core.values import merge

K = kube_scheduling


def term(*exprs: dict) -> dict:
    return {"matchExpressions": list(exprs)}


def affinity(*terms: dict) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def test_empty_and_null_terms_match_no_node_and_no_terms_admit_none() -> None:
    labels = {"a": "1"}
    assert not K.affinity_matches(affinity(term()), labels)
    assert not K.affinity_matches(affinity({"matchExpressions": None}), labels)
    assert not K.affinity_matches(affinity(None), labels)  # type: ignore[arg-type]
    assert not K.affinity_matches(affinity(), labels)
    assert K.affinity_matches(affinity(term(), term({"key": "a", "operator": "Exists"})), labels)  # terms are ORed
    assert K.affinity_matches(None, labels) and K.affinity_matches({}, labels)
    assert K.affinity_matches({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}, labels)


def test_matchfields_on_the_node_name_cannot_be_proven() -> None:
    fields = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
              "matchExpressions": [{"key": "a", "operator": "Exists"}]}
    assert not K.term_matches(fields, {"a": "1"})


def test_operators() -> None:
    labels = {"n": "8", "s": "x"}
    cases = [("In", "s", ["x"], True), ("In", "missing", ["x"], False), ("NotIn", "s", ["x"], False),
             ("NotIn", "missing", ["x"], True), ("Exists", "s", [], True), ("DoesNotExist", "s", [], False),
             ("DoesNotExist", "missing", [], True), ("Gt", "n", ["4"], True), ("Gt", "n", ["8"], False),
             ("Lt", "n", ["10"], True), ("Lt", "n", ["08"], False), ("Gt", "s", ["1"], False),
             ("Gt", "n", ["x"], False), ("Gt", "missing", ["1"], False), ("Gt", "n", ["1", "2"], False),
             ("Bogus", "s", ["x"], False)]
    for op, key, values, want in cases:
        assert K.expression_matches({"key": key, "operator": op, "values": values}, labels) is want, (op, key, values)


@given(st.dictionaries(st.sampled_from("abc"), st.sampled_from("xyz")), st.sampled_from("abc"),
       st.lists(st.sampled_from("xyz"), min_size=1))
def test_notin_is_the_negation_of_in_and_exists_of_doesnotexist(labels: dict, key: str, values: list) -> None:
    def m(op: str) -> bool:
        return K.expression_matches({"key": key, "operator": op, "values": values}, labels)
    assert m("NotIn") is not m("In")
    assert K.expression_matches({"key": key, "operator": "Exists"}, labels) is not K.expression_matches(
        {"key": key, "operator": "DoesNotExist"}, labels)


def test_toleration_matching() -> None:
    taint = {"key": "k", "value": "v", "effect": "NoExecute"}
    assert K.tolerates({"key": "k", "operator": "Exists"}, taint)  # empty effect: every effect
    assert K.tolerates({"operator": "Exists"}, taint)  # empty key with Exists: every key
    assert K.tolerates({"key": "k", "value": "v"}, taint)  # no operator is Equal
    assert not K.tolerates({"key": "k", "value": "w"}, taint)
    assert not K.tolerates({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, taint)
    assert not K.tolerates({"key": "k", "operator": "Gt", "value": "1"}, taint)
    assert K.blocking_taints([], [{"key": "p", "effect": "PreferNoSchedule"}]) == []


def test_daemon_pods_tolerate_what_the_controller_adds() -> None:
    unschedulable = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    network = {"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}
    assert K.blocking_taints(K.daemonset_tolerations([], host_network=False), [unschedulable]) == []
    assert K.blocking_taints(K.daemonset_tolerations([], host_network=False), [network]) == [network]
    assert K.blocking_taints(K.daemonset_tolerations([], host_network=True), [network]) == []


def test_toleration_validation() -> None:
    problems = dict(kube_validation.toleration_problems([
        {"key": "nvidia.com/gpu", "operator": "Exists", "value": "true"},
        {"operator": "Equal", "value": "x"},
        {"key": "k", "operator": "Exists", "effect": "NoRun"},
        {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5},
        {"key": "bad key", "operator": "Exists"},
        {"key": "k", "operator": "Gt", "value": "1"},
        {"key": "k", "value": "not valid!"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"operator": "Exists"},
    ]))
    assert problems == {
        "[0].value": "value must be empty when `operator` is 'Exists' (got 'true')",
        "[1].operator": "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
        "[2].effect": "'NoRun' is not supported: NoSchedule, PreferNoSchedule, NoExecute or empty",
        "[3].effect": "effect must be 'NoExecute' when `tolerationSeconds` is set",
        "[4].key": problems["[4].key"], "[5].operator": "'Gt' is not supported: Equal or Exists",
        "[6].value": problems["[6].value"]}
    assert "'bad key'" in problems["[4].key"] and "'not valid!'" in problems["[6].value"]


def test_affinity_and_selector_validation() -> None:
    bad = affinity(term({"key": "a", "operator": "In", "values": []}, {"key": "b", "operator": "Exists",
                                                                        "values": ["x"]},
                        {"key": "c", "operator": "Gt", "values": ["1", "2"]}, {"key": "d", "operator": "Has"}),
                   {"key": "x", "operator": "In", "values": ["y"]})
    found = dict(kube_validation.affinity_problems(bad))
    at = "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    assert set(found) == {f"{at}[0].matchExpressions[0].values", f"{at}[0].matchExpressions[1].values",
                          f"{at}[0].matchExpressions[2].values", f"{at}[0].matchExpressions[3].operator", f"{at}[1]"}
    assert kube_validation.affinity_problems(affinity()) == [(at, "must have at least one node selector term")]
    assert kube_validation.affinity_problems(affinity(term())) == []  # valid, matches nothing
    assert kube_validation.affinity_problems(charts.NVIDIA_DRA_AFFINITY) == []
    assert kube_validation.node_selector_problems({"eks-devices.io/pool": "a", "x/y/z": "b", "k": "-bad"})
    assert kube_validation.node_selector_problems({"eks-devices.io/pool": "gpu-1"}) == []


def test_affinity_of_the_wrong_shape_is_a_problem_at_its_path_not_a_crash() -> None:
    at = "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    assert kube_validation.affinity_problems({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": True}}}) == [(at, "True: must be a list of node selector terms")]
    assert kube_validation.affinity_problems(affinity({"matchExpressions": {"key": "a"}, "matchFields": "x"})) == [
        (f"{at}[0].matchExpressions", "{'key': 'a'}: must be a list"), (f"{at}[0].matchFields", "'x': must be a list")]
    preferred = "nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    assert kube_validation.affinity_problems({"nodeAffinity": {preferred.split(".")[1]: {"weight": 1}}}) == [
        (preferred, "{'weight': 1}: must be a list of weighted node selector terms")]


def test_helm_merges_an_affinity_value_into_the_charts_default() -> None:
    agent = charts.CHARTS["nvidia-dra-driver"].agents[0]
    own = affinity(term({"key": "a", "operator": "Exists"}))
    assert daemonsets.affinity(agent, {}) == charts.NVIDIA_DRA_AFFINITY
    assert daemonsets.affinity(agent, {"kubeletPlugin": {"affinity": own}}) == own  # the list of terms replaces
    assert daemonsets.affinity(agent, {"kubeletPlugin": {"affinity": None}}) is None
    assert daemonsets.affinity(agent, {"kubeletPlugin": {"affinity": {}}}) == charts.NVIDIA_DRA_AFFINITY
    pod = {"podAntiAffinity": {"x": 1}}
    assert daemonsets.affinity(agent, {"kubeletPlugin": {"affinity": pod}}) == {**charts.NVIDIA_DRA_AFFINITY, **pod}
    assert daemonsets.affinity(agent, {"kubeletPlugin": {"affinity": {"nodeAffinity": None}}}) is None


def test_eks_charts_build_terms_from_keys_and_values() -> None:
    agent = charts.CHARTS["aws-efa-k8s-device-plugin"].agents[0]
    values = {"supportedInstanceLabels": {"keys": ["k1", "k2"], "values": ["p5.48xlarge"]}}
    terms = K.required_terms(daemonsets.affinity(agent, values))
    auto = {"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["auto"]}
    assert terms == [term({"key": "k1", "operator": "In", "values": ["p5.48xlarge"]}),
                     term({"key": "k2", "operator": "In", "values": ["p5.48xlarge"]}, auto)]


def test_node_labels() -> None:
    g5g, p5 = catalog.instance_types()["g5g.xlarge"], catalog.instance_types()["p5.48xlarge"]
    assert node_labels.common("g5g.xlarge", g5g.architecture, "us-west-2", None) == {
        "kubernetes.io/arch": "arm64", "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "g5g.xlarge",
        "topology.kubernetes.io/region": "us-west-2"}
    karpenter = node_labels.karpenter(p5, "gpu", "on-demand")
    assert {k: karpenter[k] for k in ("karpenter.k8s.aws/instance-family", "karpenter.k8s.aws/instance-category",
                                      "karpenter.k8s.aws/instance-generation", "karpenter.k8s.aws/instance-size",
                                      "karpenter.k8s.aws/instance-gpu-count", "karpenter.sh/nodepool")} == {
        "karpenter.k8s.aws/instance-family": "p5", "karpenter.k8s.aws/instance-category": "p",
        "karpenter.k8s.aws/instance-generation": "5", "karpenter.k8s.aws/instance-size": "48xlarge",
        "karpenter.k8s.aws/instance-gpu-count": "8", "karpenter.sh/nodepool": "gpu"}
    trn = node_labels.karpenter(catalog.instance_types()["trn1.32xlarge"], "trn", "reserved")
    assert (trn["karpenter.k8s.aws/instance-accelerator-count"], trn["karpenter.k8s.aws/instance-category"],
            trn["karpenter.sh/capacity-type"]) == ("16", "trn", "reserved")
    assert "karpenter.k8s.aws/instance-gpu-count" not in trn
    assert node_labels.node_group("gpu-abc", "CAPACITY_BLOCK") == {
        "eks.amazonaws.com/nodegroup": "gpu-abc", "eks.amazonaws.com/capacityType": "CAPACITY_BLOCK"}
    assert node_labels.image("al2023", p5) == {"nvidia.com/gpu.present": "true"}
    assert node_labels.image("bottlerocket", p5) == {}
    assert node_labels.image("al2023", catalog.instance_types()["trn1.32xlarge"]) == {}
    assert node_labels.architecture_of("m7g.large") == "arm64" and node_labels.architecture_of("m7i.large") == "x86_64"


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                                          "nodeSelectorTerms", "matchExpressions", "matchFields", "key", "operator",
                                          "values", "value", "effect", "weight", "preference"]), inner, max_size=3),
                     max_leaves=12)


AGENTS = [a for c in charts.CHARTS.values() for a in c.agents]


def at(path: str | None, value: object) -> dict:
    if not path:
        return {}
    *parents, leaf = path.split(".")
    out: dict = {leaf: value}
    for part in reversed(parents):
        out = {part: out}
    return out


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(AGENTS), _json, _json, _json)
def test_any_override_shape_renders_and_validates_without_a_traceback(agent: charts.Agent, affinity_value: object,
                                                                      tolerations: object, keys: object) -> None:
    """Whatever the overrides hold, the proof answers (placed or not, valid or not) instead of crashing."""
    values = merge(merge(at(agent.affinity, affinity_value), at(agent.tolerations, tolerations)),
                   merge(at(agent.instance_label_keys, keys), at(agent.enabled, True)))
    rendered = daemonsets.render(agent, values)
    rendered.lands_on({"nvidia.com/gpu.present": "true"}, ({"key": "nvidia.com/gpu", "effect": "NoSchedule"},))
    assert all(isinstance(path, str) and isinstance(problem, str)
               for path, problem in daemonsets.invalid_fields(agent, values))


@pytest.mark.parametrize(("label", "op", "bound", "want"), [
    ("007", "Gt", "2", True), ("+7", "Gt", "2", True), ("-7", "Lt", "-2", True),
    ("1_000", "Gt", "2", False), ("1_000", "Lt", "2000", False),  # Go's ParseInt takes no underscore
    (" 7", "Gt", "2", False),
    ("9223372036854775807", "Gt", "2", True), ("9223372036854775808", "Gt", "2", False),  # past int64
    ("7", "Gt", "1_0", False), ("7", "Lt", "99999999999999999999", False),
])
def test_gt_and_lt_read_int64s_as_go_parses_them(label: str, op: str, bound: str, want: bool) -> None:
    """The scheduler's `strconv.ParseInt(s, 10, 64)`; `test_daemonset_placement.py` holds it against the real one."""
    assert K.expression_matches({"key": "rank", "operator": op, "values": [bound]}, {"rank": label}) is want
