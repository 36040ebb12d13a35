"""The overlap proof (`core/derive/scope.py`), both sides: on the shipped stacks and on mixed stacks,
every node runs at most one manager per device family, and every pool with a manager runs exactly
that one — computed from the releases' rendered values, not from the configuration. And the proof
fails when the values stop scoping the releases, or stop reaching a pool."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from eks_devices.core import planner as plan
from eks_devices.core.config.stack import FAMILIES, parse
from eks_devices.core.derive import scope
from eks_devices.core.knowledge import catalog, charts, kube_scheduling
from eks_devices.core.model import Release
from support import stacks


def config(mode: str, pools: dict[str, Any], version: str = "1.36", **extra: Any) -> dict[str, Any]:
    karpenter = {"cluster": {"karpenter": {"version": "1.15.0"}}} if mode == "karpenter" else {}
    return stacks.config(mode, version, pools, name="t", **karpenter, **extra)


build = stacks.build


def static(types: list[str], **fields: Any) -> dict[str, Any]:
    return {"provisioning": "static", "replicas": 1, "instanceTypes": types, **fields}


MIXED: dict[str, dict[str, Any]] = {
    "karpenter-nvidia-dra-and-plugin": config("karpenter", {
        "gpu-dra": {"instanceTypes": ["g6e.xlarge", "g6e.2xlarge"], "devices": {"nvidia": "dra"}},
        "gpu-plugin": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"},
                       "gpuSharing": {"strategy": "time-slicing", "replicas": 2}},
    }),
    "karpenter-efa-dra-and-plugin": config("karpenter", {
        "efa-dra": {"instanceTypes": ["p5.48xlarge"], "devices": {"efa": "dra", "nvidia": "dra"}},
        "efa-plugin": static(["p4d.24xlarge"], devices={"efa": "device-plugin", "nvidia": "device-plugin"}),
        "cpu-efa-none": static(["g6e.8xlarge"], devices={"efa": "none", "nvidia": "dra"}),
    }),
    "mng-neuron-both-modes": config("managed-node-groups", {
        "trn-dra": static(["trn2.48xlarge"], devices={"neuron": "dra", "efa": "dra"}),
        "trn-plugin": static(["trn1.32xlarge"], devices={"neuron": "device-plugin", "efa": "device-plugin"}),
        "inf-plugin": static(["inf2.xlarge", "inf2.8xlarge"], devices={"neuron": "device-plugin"}),
    }),
    "mng-bottlerocket": config("managed-node-groups", {
        "br-dra": static(["g6e.xlarge"], ami="bottlerocket", devices={"nvidia": "dra"}),
        "br-plugin": static(["g6e.2xlarge"], ami="bottlerocket", devices={"nvidia": "device-plugin"}),
        "al-plugin": static(["g5.xlarge"], devices={"nvidia": "device-plugin"}),
        "al-dra": static(["g5.2xlarge"], devices={"nvidia": "dra"},
                         taints=[{"key": "team", "value": "ml", "effect": "NoSchedule"}]),
    }),
    "mng-mixed-types-and-families": config("managed-node-groups", {
        "gpu-some-efa": static(["g6e.xlarge", "g6e.8xlarge", "g6e.48xlarge"], devices={"efa": "device-plugin"}),
        "p5-dra": static(["p5.48xlarge"], gpuSharing={"strategy": "mig", "profile": "1g.10gb"}),
        "p4-plugin": static(["p4d.24xlarge"], devices={"nvidia": "device-plugin", "efa": "dra"},
                            gpuSharing={"strategy": "mig", "profile": "1g.5gb"}),
    }),
    "karpenter-bottlerocket-neuron-and-consumable": config("karpenter", {
        "trn-br": static(["trn2.48xlarge"], ami="bottlerocket"),
        "gpu-shares": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"},
                       "gpuSharing": {"strategy": "time-slicing", "replicas": 4}},
    }),
    "auto-mode-mixed": config("auto-mode", {
        "gpu-dra": {"instanceTypes": ["g6.xlarge"]},
        "gpu-plugin": {"instanceTypes": ["g6.2xlarge"], "devices": {"nvidia": "device-plugin"}},
        "p5-static": static(["p5.48xlarge"], devices={"efa": "device-plugin"}),
        "neuron": {"instanceTypes": ["inf2.xlarge"]},
    }),
}


PLANS = {**{f"stack-{s}": (lambda s=s: stacks.shipped_plan(s)) for s in stacks.SHIPPED},
         **{name: (lambda cfg=cfg: build(cfg)) for name, cfg in MIXED.items()}}


def assert_one_manager_per_node(p: plan.Plan) -> None:
    """For a node of every instance type of every pool: one manager per family it has, the planned one."""
    for pool in p.pools.values():
        for itype in pool.instance_types:
            running = scope.running_on(p, pool, instance_type=itype)
            for family in FAMILIES:
                managers = [r for r in running if r.family == family]
                assert len(managers) <= 1, (pool.name, itype, managers)
                expected = pool.manager(family)
                if expected != "none" and catalog.instance_types()[itype].has(family):
                    assert [r.manager for r in managers] == [expected], (pool.name, itype, family, managers)


@pytest.mark.parametrize("name", sorted(PLANS))
def test_every_node_runs_one_manager_per_family(name: str) -> None:
    p = PLANS[name]()
    assert_one_manager_per_node(p)
    assert scope.overlaps(p) == []
    assert not [f for f in p.findings if f.slug == "one-manager-per-node"]


def test_mixed_stacks_really_mix_managers() -> None:
    """The mixed stacks exercise DRA on one pool and the plugin on another, for every family."""
    both = {f: set() for f in FAMILIES}
    for name, cfg in MIXED.items():
        if "auto-mode" in name:
            continue
        for pool in build(cfg).pools.values():
            for family in FAMILIES:
                both[family].add(pool.manager(family))
    assert all({"dra", "device-plugin"} <= managers for managers in both.values()), both


def test_neuron_modes_are_two_releases_never_one() -> None:
    p = build(MIXED["mng-neuron-both-modes"])
    dra, plugin = p.releases["neuron-dra-driver"], p.releases["neuron-device-plugin"]
    assert (dra.values["draDriver"]["enabled"], dra.values["devicePlugin"]["enabled"]) == (True, False)
    assert (plugin.values["draDriver"]["enabled"], plugin.values["devicePlugin"]["enabled"]) == (False, True)
    # both in kube-system under their own names; the chart puts its DRA driver in a namespace it creates
    assert (dra.key, dra.namespace, plugin.key, plugin.namespace) == (
        "neuron-dra-driver", "kube-system", "neuron-device-plugin", "kube-system")
    assert set(dra.pools) == {"trn-dra"} and set(plugin.pools) == {"trn-plugin", "inf-plugin"}


def test_bottlerocket_plugin_pools_run_the_bundled_plugin_only() -> None:
    p = build(MIXED["mng-bottlerocket"])
    assert p.pools["br-plugin"].releases["nvidia"] == "bottlerocket"
    assert p.pools["br-dra"].bottlerocket_settings["kubelet-device-plugins"]["nvidia"]["enabled"] is False
    release = p.releases["nvidia-device-plugin"]
    assert release.pools == ("al-plugin",)
    terms = release.values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "eks-devices.io/pool", "operator": "NotIn", "values": ["br-plugin"]}]
    sources = {r.source for r in scope.running_on(p, p.pools["br-plugin"]) if r.family == "nvidia"}
    assert sources == {"bottlerocket"}


def test_only_bottlerocket_plugin_pools_need_no_plugin_release() -> None:
    p = build(config("managed-node-groups", {"br": static(["g6e.xlarge"], ami="bottlerocket",
                                                          devices={"nvidia": "device-plugin"})}))
    assert "nvidia-device-plugin" not in p.releases
    assert scope.overlaps(p) == []


# --- the proof fails when scoping breaks -------------------------------------------------------

def with_values(p: plan.Plan, key: str, values: dict[str, Any]) -> dict[str, Release]:
    return {**p.releases, key: dataclasses.replace(p.releases[key], values=values)}


def test_an_unscoped_plugin_is_an_overlap_on_the_dra_pools() -> None:
    p = stacks.shipped_plan("staging")
    values = {**p.releases["nvidia-device-plugin"].values, "nodeSelector": {}}
    found = scope.overlaps(p, with_values(p, "nvidia-device-plugin", values))
    pools = {(o.pool, o.family) for o in found}
    assert {("gpu-dra", "nvidia"), ("gpu-mig", "nvidia")} <= pools
    overlap = next(o for o in found if o.pool == "gpu-dra")
    assert sorted(r.manager for r in overlap.running) == ["device-plugin", "dra"]
    assert "gpu-dra" in overlap.problem and "p5" in overlap.problem


def test_a_null_selector_entry_unscopes_like_helm_does() -> None:
    p = stacks.shipped_plan("prod")
    values = {**p.releases["aws-dranet"].values, "nodeSelector": {"eks-devices.io/device-manager-efa": None}}
    found = scope.overlaps(p, with_values(p, "aws-dranet", values))
    assert [o.pool for o in found] == ["*"]
    assert "aws-dranet" in found[0].problem and "eks-devices.io/device-manager-efa=dra" in found[0].problem


def test_a_release_that_enables_the_other_mode_is_caught() -> None:
    p = stacks.shipped_plan("prod")
    values = {**p.releases["neuron-dra-driver"].values, "devicePlugin": {"enabled": True}}
    found = scope.overlaps(p, with_values(p, "neuron-dra-driver", values))
    assert ("trn-train", "neuron") in {(o.pool, o.family) for o in found}
    assert any(o.pool == "*" and "devicePlugin.enabled" in o.problem for o in found)


def test_missing_tolerations_leave_a_pool_without_its_manager() -> None:
    p = stacks.shipped_plan("staging")
    values = {**p.releases["aws-dranet"].values, "tolerations": []}
    assert scope.overlaps(p, with_values(p, "aws-dranet", values)) == []
    found = scope.unserved(p, with_values(p, "aws-dranet", values))
    assert {(u.pool, u.family) for u in found} == {("gpu-dra", "efa"), ("trn-static", "efa")}
    assert all(u.release == "aws-dranet" and "no toleration at tolerations" in u.problem for u in found)


def test_an_nvidia_dra_driver_with_gpus_off_manages_no_gpus() -> None:
    """`resources.gpus.enabled: false` leaves the kubelet plugin serving ComputeDomains at most: the
    DRA pools' GPUs would have no manager."""
    p = stacks.shipped_plan("staging")
    values = {**p.releases["nvidia-dra-driver"].values, "resources": {"gpus": {"enabled": False}}}
    found = scope.unserved(p, with_values(p, "nvidia-dra-driver", values))
    assert {(u.pool, u.family) for u in found} == {("gpu-dra", "nvidia"), ("gpu-mig", "nvidia")}
    assert all(u.reasons == ("resources.gpus.enabled is off",) for u in found)
    assert not scope.unserved(p)


def test_an_instance_type_list_is_checked_per_node_type() -> None:
    p = stacks.shipped_plan("staging")
    values = {**p.releases["aws-dranet"].values, "supportedInstanceLabels": {"values": ["p5.48xlarge"]}}
    found = scope.unserved(p, with_values(p, "aws-dranet", values))
    assert {(u.pool, u.instance_type) for u in found} == {("gpu-dra", "p5e.48xlarge"), ("trn-static", "trn2.48xlarge")}


def test_bottlerocket_bundled_plugin_counts() -> None:
    cfg = config("managed-node-groups", {"br": static(["g6e.xlarge"], ami="bottlerocket", devices={"nvidia": "dra"},
                                                      bottlerocketSettings={"kubelet-device-plugins": {
                                                          "nvidia": {"enabled": True}}})})
    p = build(cfg)
    running = scope.running_on(p, p.pools["br"])
    assert sorted((r.manager, r.source) for r in running) == [("device-plugin", "bottlerocket"),
                                                              ("dra", "nvidia-dra-driver")]
    slugs = {f.slug for f in p.errors}
    assert "bottlerocket-bundled-plugin" in slugs and "one-manager-per-node" not in slugs


def test_neuron_dra_driver_tolerates_the_pools_own_taints() -> None:
    """The Neuron DRA kubelet plugin takes `draDriver.tolerations`: a pool's own taint is tolerated,
    so the pool still runs its driver."""
    cfg = stacks.config("managed-node-groups", pools={"trn": {
        "instanceTypes": ["trn1.32xlarge"], "replicas": 1, "devices": {"neuron": "dra"},
        "taints": [{"key": "team", "value": "ml", "effect": "NoSchedule"}]}})
    p = plan.build(parse(cfg))
    tolerations = p.releases["neuron-dra-driver"].values["draDriver"]["tolerations"]
    assert {t["key"] for t in tolerations} == {"team", "aws.amazon.com/neuron"}
    assert not [f for f in p.findings if f.slug == "one-manager-per-node"]


# --- the chart model: what each template renders from the values (charts.Agent) ----------------

NEURON_DRA = charts.CHARTS["neuron-dra-driver"].agents[0]
NVIDIA_DRA = charts.CHARTS["nvidia-dra-driver"].agents[0]


def lands(agent: charts.Agent, values: dict[str, Any], p: plan.Plan, pool: Any, itype: str | None = None) -> bool:
    """Whether the agent's DaemonSet lands on some node of the pool (of one instance type)."""
    return any(scope.agent_runs_on(agent, values, n) for n in scope.pool_nodes(p, pool, itype))


@pytest.fixture(scope="module")
def neuron_pools() -> plan.Plan:
    return build(MIXED["mng-neuron-both-modes"])


def neuron_dra_values(**dra: Any) -> dict[str, Any]:
    """Neuron DRA values that put the driver on every Neuron node but for its affinity."""
    return {"neuronInstances": ["trn2.48xlarge", "inf2.xlarge"],
            "draDriver": {"enabled": True, "tolerations": [{"operator": "Exists"}], **dra}}


def test_neuron_default_affinity_lists_instances_and_drops_inferentia(neuron_pools: plan.Plan) -> None:
    values = neuron_dra_values()
    assert lands(NEURON_DRA, values, neuron_pools, neuron_pools.pools["trn-dra"])
    assert not lands(NEURON_DRA, values, neuron_pools, neuron_pools.pools["trn-plugin"])  # not listed
    assert not lands(NEURON_DRA, values, neuron_pools, neuron_pools.pools["inf-plugin"])  # inf* dropped


def test_a_neuron_affinity_with_own_terms_replaces_the_instance_list(neuron_pools: plan.Plan) -> None:
    """Helm replaces the default's term list: the chart's instance list and its Inferentia filter
    no longer apply, the value's terms do."""
    own = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                               "values": ["inf2.xlarge", "trn1.32xlarge"]}]}]}}}
    values = neuron_dra_values(affinity=own)
    assert lands(NEURON_DRA, values, neuron_pools, neuron_pools.pools["inf-plugin"], "inf2.xlarge")
    assert not lands(NEURON_DRA, values, neuron_pools, neuron_pools.pools["inf-plugin"], "inf2.8xlarge")
    assert lands(NEURON_DRA, values, neuron_pools, neuron_pools.pools["trn-plugin"])
    assert not lands(NEURON_DRA, values, neuron_pools, neuron_pools.pools["trn-dra"])


def test_a_neuron_affinity_with_the_placeholders_gets_the_filtered_list(neuron_pools: plan.Plan) -> None:
    own = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": charts.NEURON_INSTANCE_TYPE_KEY, "operator": "In",
                               "values": charts.NEURON_INSTANCES}]}]}}}
    values = neuron_dra_values(affinity=own)
    assert lands(NEURON_DRA, values, neuron_pools, neuron_pools.pools["trn-dra"])
    assert not lands(NEURON_DRA, values, neuron_pools, neuron_pools.pools["inf-plugin"])


def test_a_null_neuron_affinity_admits_every_neuron_node(neuron_pools: plan.Plan) -> None:
    values = neuron_dra_values(affinity=None)
    assert all(lands(NEURON_DRA, values, neuron_pools, pool) for pool in neuron_pools.pools.values())


def test_an_unscoped_neuron_dra_release_with_a_null_affinity_lands_on_inferentia(neuron_pools: plan.Plan) -> None:
    """The proof sees a Neuron DRA driver that a null affinity lets onto the Inferentia plugin pool."""
    p = neuron_pools
    values = {**p.releases["neuron-dra-driver"].values, "neuronInstances": ["trn2.48xlarge", "inf2.xlarge"]}
    values["draDriver"] = {**values["draDriver"], "nodeSelector": {}, "affinity": None,
                           "tolerations": [{"operator": "Exists"}]}
    found = scope.overlaps(p, with_values(p, "neuron-dra-driver", values))
    assert {("inf-plugin", "neuron"), ("trn-plugin", "neuron")} <= {(o.pool, o.family) for o in found}


def test_default_tolerations_are_the_charts_list_with_its_effects(neuron_pools: plan.Plan) -> None:
    """While `tolerations` is unset the chart's own list applies: the Neuron DRA driver's includes
    CriticalAddonsOnly, and NVIDIA's tolerates nvidia.com/gpu for NoSchedule only."""
    trn = dataclasses.replace(neuron_pools.pools["trn-dra"],
                              taints=({"key": "CriticalAddonsOnly", "value": "true", "effect": "NoExecute"},))
    assert lands(NEURON_DRA, {"draDriver": {"enabled": True}, "neuronInstances": ["trn2.48xlarge"]}, neuron_pools, trn)
    gpus = build(MIXED["karpenter-nvidia-dra-and-plugin"])
    gpu = gpus.pools["gpu-dra"]
    no_execute = dataclasses.replace(gpu, taints=({"key": "nvidia.com/gpu", "value": "true", "effect": "NoExecute"},))
    no_schedule = dataclasses.replace(gpu, taints=({"key": "nvidia.com/gpu", "effect": "NoSchedule"},))
    scoped = {"kubeletPlugin": {"nodeSelector": {}}}
    assert lands(NVIDIA_DRA, scoped, gpus, no_schedule)
    assert not lands(NVIDIA_DRA, scoped, gpus, no_execute)


def test_an_equal_toleration_with_an_empty_value_matches_a_taint_without_one() -> None:
    taint = {"key": "dedicated", "effect": "NoSchedule"}
    assert kube_scheduling.tolerates({"key": "dedicated", "operator": "Equal", "value": "", "effect": "NoSchedule"},
                                     taint)
    assert kube_scheduling.tolerates({"key": "dedicated", "value": ""}, taint)
    assert not kube_scheduling.tolerates({"key": "dedicated", "operator": "Equal", "value": "x"}, taint)
    assert not kube_scheduling.tolerates({"key": "other", "operator": "Exists"}, taint)


def test_auto_mode_pool_label_contradicting_the_plan_is_an_overlap() -> None:
    """Auto Mode has no releases: the proof reads the label its runtime picks the manager by."""
    cfg = config("auto-mode", {"g": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                     "labels": {"eks.amazonaws.com/device-manager-nvidia": "device-plugin"}}})
    [overlap] = scope.overlaps(build(cfg))
    assert (overlap.pool, overlap.expected, [r.manager for r in overlap.running]) == ("g", "dra", ["device-plugin"])
    assert scope.unserved(build(cfg)) == []


def test_placement_is_remembered_only_for_what_it_reads() -> None:
    """`DaemonSet.lands_on` remembers a verdict per (labels its selector and affinity read, taints): a node
    differing only in other labels gets the remembered one, and any read label or taint is judged anew."""
    from eks_devices.core.derive import daemonsets

    agent = charts.CHARTS["nvidia-device-plugin"].agents[0]
    ds = daemonsets.render(agent, {"nodeSelector": {"scope": "plugin"},
                                   "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                                       "nodeSelectorTerms": [{"matchExpressions": [
                                           {"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
                                   "tolerations": [{"key": "gpu", "operator": "Exists"}]})
    base = {"scope": "plugin", "zone": "a", "pool": "one"}
    gpu = ({"key": "gpu", "value": "true", "effect": "NoSchedule"},)
    other = ({"key": "neuron", "value": "true", "effect": "NoSchedule"},)
    assert ds.lands_on(base, gpu) and ds.lands_on({**base, "pool": "two"}, gpu)
    assert not ds.lands_on({**base, "zone": "b"}, gpu) and not ds.lands_on({**base, "scope": "dra"}, gpu)
    assert not ds.lands_on(base, other) and not ds.lands_on({k: v for k, v in base.items() if k != "zone"}, gpu)
    assert ds.lands_on(base, gpu)  # remembered verdicts do not leak between keys
    assert len(ds._placed) == 5  # pools one and two share a verdict
    assert ds.lands_on(base, ({"key": "gpu", "value": ["odd"], "effect": "NoSchedule"},))  # unhashable: judged afresh
    assert len(ds._placed) == 5


def test_both_sides_of_the_proof_place_a_plans_nodes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`overlaps` and `unserved` (two rules) share the nodes placed for the plan's own releases; a plan
    made with `replace`, or other releases, are placed afresh."""
    p = build(MIXED["karpenter-nvidia-dra-and-plugin"])
    made: list[str] = []
    pool_nodes = scope.pool_nodes
    monkeypatch.setattr(scope, "pool_nodes", lambda p, pool, *a: made.append(pool.name) or pool_nodes(p, pool, *a))
    fresh = dataclasses.replace(p, findings=())
    assert scope.overlaps(fresh) == [] and scope.unserved(fresh) == [] and scope.unserved(fresh, fresh.releases) == []
    assert sorted(made) == sorted(p.pools)
    unscoped = with_values(fresh, "nvidia-device-plugin", {"nodeSelector": None, "affinity": None})
    assert scope.overlaps(fresh, unscoped) != []  # other releases: judged on their own placement
    assert scope.overlaps(fresh) == []  # the plan's own placement is unchanged
    assert scope.overlaps(dataclasses.replace(fresh, findings=())) == []
    assert sorted(made) == sorted([*p.pools, *p.pools])  # the replaced plan placed its nodes again
