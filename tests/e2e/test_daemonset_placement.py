"""The real DaemonSet controller and scheduler as the oracle for the overlap proof's placement model.

For each stack, every node the toolkit plans (a node per pool x instance type x zone, and the system
nodes: `scope.pool_nodes`, `scope.system_nodes`) is registered as a real Node with the labels and
taints the toolkit says it carries, Ready and with room for pods; every device agent's DaemonSet, as
the toolkit's chart model renders it (`scope.rendered`: nodeSelector, affinity, tolerations,
hostNetwork), is created; then kube-controller-manager's DaemonSet controller creates the pods and
kube-scheduler binds them. Where the pods are bound must equal, node by node and DaemonSet by
DaemonSet, where the model says they land (`DaemonSet.lands_on`); and the proof's verdicts
(`one-manager-per-node`, `device-software-unserved`) computed from the real placement must equal the
plan's.

Cases run in batches: each case's nodes carry a label of their own, which the case's DaemonSets also
select (an extra nodeSelector key every node of the case has, so it changes nothing within the case),
and each case has its own namespace.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from e2e.controlplane import ApiError, ControlPlane
from e2e.settling import settle
from eks_devices.core.config.errors import ConfigError
from eks_devices.core.derive import daemonsets, scope
from eks_devices.core.knowledge import charts
from eks_devices.core.model import Plan
from support import stacks

CASE_LABEL = "e2e.eks-devices.io/case"
POD_LABEL = "e2e.eks-devices.io/placement"
VERDICTS = ("one-manager-per-node", "device-software-unserved")
BATCH = 40


@dataclass
class Case:
    """One stack's planned nodes and rendered DaemonSets, under the names they get on the server."""

    id: str
    plan: Plan
    nodes: dict[str, scope.Node]
    agents: dict[str, tuple[scope.Running, daemonsets.DaemonSet]]
    refused: set[str] = field(default_factory=set)  # DaemonSets the API server refused

    @property
    def namespace(self) -> str:
        return f"placement-{self.id}"

    def invalid(self) -> set[str]:
        """The DaemonSets the model says the API server refuses (`daemonsets.invalid_fields`)."""
        return {name for name, (running, ds) in self.agents.items()
                if daemonsets.invalid_fields(ds.agent, self.plan.releases[running.source].values)}

    def modelled(self) -> set[tuple[str, str]]:
        """(node, DaemonSet) cells where the toolkit's answer (`scope.agents_on`) puts a pod, of the
        DaemonSets the API server accepts."""
        names = {running: name for name, (running, _) in self.agents.items()}
        invalid = self.invalid()
        rendered = [agent for name, agent in self.agents.items() if name not in invalid]
        return {(n, names[r]) for n, node in self.nodes.items()
                for r in scope.agents_on(self.plan, node, agents=rendered)}


def case_of(ident: str, plan: Plan) -> Case:
    planned = [node for pool in plan.pools.values() for node in scope.pool_nodes(plan, pool)]
    nodes = {f"{ident}-n{i}": node for i, node in enumerate([*planned, *scope.system_nodes(plan)])}
    agents = {f"{running.source}-{running.family}-{running.manager}": (running, ds)
              for running, ds in scope.rendered(plan)}
    return Case(ident, plan, nodes, agents)


def daemonset(case: Case, name: str, ds: daemonsets.DaemonSet) -> dict[str, Any]:
    """The agent's DaemonSet with the scheduling fields the model rendered."""
    pod: dict[str, Any] = {
        "nodeSelector": {**{k: str(v) for k, v in ds.node_selector.items()}, CASE_LABEL: case.id},
        "tolerations": ds.tolerations, "hostNetwork": ds.agent.host_network,
        "containers": [{"name": "agent", "image": "registry.k8s.io/pause:3.10"}]}
    if ds.affinity is not None:
        pod["affinity"] = ds.affinity
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": case.namespace},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name, POD_LABEL: case.id}}, "spec": pod}}}


def placed(plane: ControlPlane, cases: list[Case], timeout: float = 180) -> dict[str, set[tuple[str, str]]]:
    """Create the cases' nodes and DaemonSets; once the controller and the scheduler have settled, the
    (node, DaemonSet) cells of each case where a pod is bound."""
    for case in cases:
        for name, node in case.nodes.items():
            plane.add_node(name, {**node.labels, CASE_LABEL: case.id}, node.taints)
    for case in cases:
        plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": case.namespace}})
        for name, (_, ds) in case.agents.items():
            if ds.enabled:
                try:
                    plane.apply(daemonset(case, name, ds))
                except ApiError as exc:
                    if exc.status != 422:
                        raise
                    case.refused.add(name)
    ids = {c.id for c in cases}
    return settle(lambda: _snapshot(plane, ids), timeout, f"the DaemonSets of {sorted(ids)}")


def _snapshot(plane: ControlPlane, ids: set[str]) -> dict[str, set[tuple[str, str]]] | None:
    """Bound cells per case, or None while a DaemonSet is unobserved or a pod of it is unbound."""
    for ds in plane.list_all("apps/v1", "DaemonSet"):
        meta, status = ds["metadata"], ds.get("status") or {}
        if not meta["namespace"].startswith("placement-") or meta["namespace"][len("placement-"):] not in ids:
            continue
        if status.get("observedGeneration") != meta.get("generation"):
            return None
        if status.get("currentNumberScheduled") != status.get("desiredNumberScheduled"):
            return None
    out: dict[str, set[tuple[str, str]]] = {i: set() for i in ids}
    for pod in plane.list_all("v1", "Pod", selector=POD_LABEL):
        case = pod["metadata"]["labels"][POD_LABEL]
        if case not in ids:
            continue
        node = pod["spec"].get("nodeName")
        if not node:
            return None
        out[case].add((node, pod["metadata"]["ownerReferences"][0]["name"]))
    return out


def clean(plane: ControlPlane, cases: list[Case]) -> None:
    for case in cases:
        plane.delete("v1", "Namespace", case.namespace)
        for name in case.nodes:
            plane.delete("v1", "Node", name)


def verdicts(plan: Plan) -> set[tuple[str, str]]:
    return {(f.slug, f.message) for f in plan.findings if f.slug in VERDICTS}


def real_verdicts(case: Case, cells: set[tuple[str, str]], monkeypatch: pytest.MonkeyPatch) -> set[tuple[str, str]]:
    """The proof's verdicts with the model's placement replaced by the real one."""
    by_node = {(n.pool, n.instance_type, n.labels.get("topology.kubernetes.io/zone")): name
               for name, n in case.nodes.items()}

    def real_agents_on(plan: Plan, node: scope.Node, releases: Any = None, agents: Any = None) -> list[scope.Running]:
        name = by_node[(node.pool, node.instance_type, node.labels.get("topology.kubernetes.io/zone"))]
        return [case.agents[d][0] for n, d in sorted(cells) if n == name]

    with monkeypatch.context() as m:
        m.setattr(scope, "agents_on", real_agents_on)
        return verdicts(stacks.planning.build(case.plan.spec))


# -- the stacks -------------------------------------------------------------------------------------
TYPES = ["g6e.xlarge", "g6e.12xlarge", "p5.48xlarge", "p4d.24xlarge", "trn1.32xlarge", "inf2.xlarge",
         "trn2.48xlarge", "m7i.large"]
MANAGERS = ["auto", "dra", "device-plugin", "none"]
TAINTS = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
          {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
          {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
          {"key": "aws.amazon.com/neuron", "effect": "NoSchedule"},
          {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
          # condition keys the DaemonSet controller tolerates by itself (network-unavailable: host-network pods only)
          {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
          {"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]
TOLERATIONS = [[], [{"operator": "Exists"}], [{"key": "dedicated", "operator": "Equal", "value": "ml",
                                                "effect": "NoSchedule"}],
               [{"key": "dedicated", "operator": "Exists"}], [{"operator": "Exists", "effect": "NoExecute"}],
               [{"key": "nvidia.com/gpu", "operator": "Exists"}, {"key": "aws.amazon.com/neuron", "operator": "Exists"}],
               # no operator is Equal; an empty effect matches every effect; a value must match exactly
               [{"key": "dedicated", "value": "ml"}, {"key": "aws.amazon.com/neuron", "operator": "Equal", "value": ""}],
               [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "absent", "effect": "NoSchedule"}],
               [{"operator": "Exists", "effect": "NoSchedule"}],
               None]


def _affinity(expressions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": expressions}]}}}


AFFINITIES = [None, {},
              _affinity([{"key": "node.kubernetes.io/instance-type", "operator": "In",
                          "values": ["p5.48xlarge", "g6e.12xlarge"]}]),
              _affinity([{"key": "node.kubernetes.io/instance-type", "operator": "NotIn", "values": ["g6e.xlarge"]}]),
              _affinity([{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["1"]}]),
              # integers, not text: "8" < "10" is false as text
              _affinity([{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Lt", "values": ["10"]}]),
              _affinity([]),  # a term without expressions matches no node
              # no required part: Helm merges it into the chart's default affinity, which stays
              {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                  {"weight": 1, "preference": {"matchExpressions": [{"key": "team", "operator": "Exists"}]}}]}},
              _affinity([{"key": "team", "operator": "Exists"}]),
              _affinity([{"key": "eks-devices.io/device-manager-nvidia", "operator": "In",
                          "values": ["dra", "device-plugin"]}]),
              _affinity([{"key": "team", "operator": "NotIn", "values": ["ml"]},
                         {"key": "node.kubernetes.io/instance-type", "operator": "Exists"}]),
              # terms are ORed, a term's expressions ANDed
              {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                  {"matchExpressions": [{"key": "team", "operator": "In", "values": ["infer"]}]},
                  {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"},
                                        {"key": "eks-devices.io/device-manager-neuron", "operator": "Exists"},
                                        {"key": "eks-devices.io/device-manager-efa", "operator": "NotIn",
                                         "values": ["dra"]}]}]}}},
              # a term on the node's name only: no planned node's name is known, so it places nowhere
              {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                  {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["no-such-node"]}]}]}}}]
SELECTORS = [{}, None, {"team": "ml"}, {"kubernetes.io/os": "linux"}]


def _set(values: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        values = values.setdefault(key, {})
    values[last] = copy.deepcopy(value)


@st.composite
def overrides(draw: st.DrawFn) -> dict[str, Any]:
    """helmValues that move a device agent's scheduling fields (or switch it)."""
    out: dict[str, Any] = {}
    keys = sorted(k for k, c in charts.CHARTS.items() if c.agents)
    for key in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=3, unique=True)):
        values: dict[str, Any] = {}
        for agent in charts.CHARTS[key].agents:
            fields = draw(st.sets(st.sampled_from(["nodeSelector", "tolerations", "affinity", "enabled"]), min_size=1,
                                max_size=2))
            if "nodeSelector" in fields:
                _set(values, agent.node_selector, draw(st.sampled_from(SELECTORS)))
            if "tolerations" in fields and agent.tolerations:
                _set(values, agent.tolerations, draw(st.sampled_from(TOLERATIONS)))
            if "affinity" in fields and agent.affinity:
                _set(values, agent.affinity, draw(st.sampled_from(AFFINITIES)))
            if "enabled" in fields and agent.enabled:
                _set(values, agent.enabled, draw(st.booleans()))
        if values:
            out[key] = values
    return out


@st.composite
def placement_stacks(draw: st.DrawFn) -> dict[str, Any]:
    mode = draw(st.sampled_from(["karpenter", "managed-node-groups"]))
    pools: dict[str, Any] = {}
    for i in range(draw(st.integers(1, 3))):
        pool: dict[str, Any] = {"instanceTypes": draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=2,
                                                               unique=True))}
        if mode == "managed-node-groups" or draw(st.booleans()):
            pool.update(provisioning="static", replicas=1)
        devices = draw(st.dictionaries(st.sampled_from(["nvidia", "efa", "neuron"]), st.sampled_from(MANAGERS)))
        if devices:
            pool["devices"] = devices
        if draw(st.integers(0, 3)) == 0:
            pool["ami"] = "bottlerocket"
        if draw(st.booleans()):
            pool["labels"] = {"team": draw(st.sampled_from(["ml", "infer"]))}
        taints = draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique_by=lambda t: (t["key"], t["effect"])))
        if taints:
            pool["taints"] = taints
        pools[f"pool-{i}"] = pool
    zones = draw(st.sampled_from([None, ["us-west-2a", "us-west-2b"]]))
    extra: dict[str, Any] = {"helmValues": draw(overrides())}
    if zones:
        extra["network"] = {"availabilityZones": zones}
    return stacks.config(mode, "1.36", pools, name="placement", **extra)


def generated(count: int) -> list[Case]:
    """`count` generated stacks that plan (error findings allowed: overlaps are what is wanted), drawn by
    hypothesis with a fixed seed, each with at least one device agent."""
    drawn: list[dict[str, Any]] = []

    @settings(max_examples=count * 4, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(placement_stacks())
    def collect(cfg: dict[str, Any]) -> None:
        drawn.append(cfg)

    collect()
    out: list[Case] = []
    for cfg in drawn:
        try:
            plan = stacks.build(cfg)
        except ConfigError:
            continue
        if scope.rendered(plan) and plan.pools:
            out.append(case_of(f"g{len(out)}", plan))
        if len(out) == count:
            break
    return out


RANKS = ["3", "007", "1_000", "99999999999999999999"]  # a label Gt/Lt reads as an int64, as Go parses one


def edges() -> list[Case]:
    """Node labels at the edges of what `Gt` reads as an integer: leading zeros, an underscore, past int64."""
    pools = {f"rank-{i}": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"},
                           "provisioning": "static", "replicas": 1, "labels": {"rank": rank}}
             for i, rank in enumerate(RANKS)}
    above = _affinity([{"key": "rank", "operator": "Gt", "values": ["2"]}])
    below = _affinity([{"key": "rank", "operator": "Lt", "values": ["2000"]}])
    return [case_of(f"e{i}", stacks.build(stacks.config(
        "karpenter", "1.36", pools, name="placement", helmValues={"nvidia-device-plugin": {"affinity": affinity}})))
        for i, affinity in enumerate((above, below))]


def shipped() -> list[Case]:
    return [case_of(f"s-{name}", plan) for name in stacks.SHIPPED
            if (plan := stacks.shipped_plan(name)).releases]


@pytest.fixture(scope="module")
def outcomes(control_plane: ControlPlane) -> Iterator[list[tuple[Case, set[tuple[str, str]]]]]:
    cases = [*shipped(), *edges(), *generated(120)]
    results: list[tuple[Case, set[tuple[str, str]]]] = []
    for i in range(0, len(cases), BATCH):
        batch = cases[i:i + BATCH]
        try:
            real = placed(control_plane, batch)
        finally:
            clean(control_plane, batch)
        results.extend((case, real[case.id]) for case in batch)
    yield results


def test_the_shipped_stacks_are_placed_as_the_model_says(outcomes: list[tuple[Case, set[tuple[str, str]]]]) -> None:
    shipped_cases = [(c, real) for c, real in outcomes if c.id.startswith("s-")]
    assert shipped_cases, "no shipped stack installs device software"
    for case, real in shipped_cases:
        assert real == case.modelled(), case.id
        assert real, f"{case.id}: no agent placed at all"


def test_generated_stacks_are_placed_as_the_model_says(outcomes: list[tuple[Case, set[tuple[str, str]]]]) -> None:
    generated_cases = [(c, real) for c, real in outcomes if c.id.startswith("g")]
    assert len(generated_cases) >= 100
    wrong = {c.id: {"only real": sorted(real - c.modelled()), "only model": sorted(c.modelled() - real)}
             for c, real in generated_cases if real != c.modelled()}
    assert not wrong, wrong


def test_labels_read_as_integers_are_placed_as_the_model_says(outcomes: list[tuple[Case, set[tuple[str, str]]]]) -> None:
    edge = [(c, real) for c, real in outcomes if c.id.startswith("e")]
    assert len(edge) == 2
    wrong = {c.id: {"only real": sorted(real - c.modelled()), "only model": sorted(c.modelled() - real)}
             for c, real in edge if real != c.modelled()}
    assert not wrong, wrong
    assert all(real for _, real in edge)


def test_the_api_server_refuses_the_daemonsets_the_model_says_it_refuses(
        outcomes: list[tuple[Case, set[tuple[str, str]]]]) -> None:
    wrong = {c.id: {"refused": sorted(c.refused), "model": sorted(c.invalid())}
             for c, _ in outcomes if c.refused != c.invalid()}
    assert not wrong, wrong


def test_the_cases_exercise_both_outcomes(outcomes: list[tuple[Case, set[tuple[str, str]]]]) -> None:
    """Not a vacuous agreement: cells where a pod lands and where none does, and plans with each verdict."""
    cells = sum(len(c.nodes) * len(c.agents) for c, _ in outcomes)
    landed = sum(len(real) for _, real in outcomes)
    assert 100 <= landed <= cells - 100, (landed, cells)
    slugs = [{f.slug for f in c.plan.findings} for c, _ in outcomes]
    for slug in VERDICTS:
        assert sum(slug in s for s in slugs) >= 5, slug
    assert sum(not (set(VERDICTS) & s) for s in slugs) >= 20


def test_the_proofs_verdicts_follow_from_the_real_placement(outcomes: list[tuple[Case, set[tuple[str, str]]]],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = {}
    for case, real in outcomes:
        mine, theirs = verdicts(case.plan), real_verdicts(case, real, monkeypatch)
        if mine != theirs:
            wrong[case.id] = {"plan only": sorted(mine - theirs), "real only": sorted(theirs - mine)}
    assert not wrong, wrong
