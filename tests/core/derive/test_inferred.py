"""`devices.<nvidia|efa>: inferred`: a dynamic Auto Mode pool without device-manager labels, where Auto Mode
picks DRA or the device plugin per node from the Pods it launches the node for (EKS user guide, "Manage
hardware devices": "Dynamic capacity provisioning: Not required … one NodePool can serve both")."""

from __future__ import annotations

from typing import Any

import pytest

from eks_devices.core.config.errors import ConfigError
from eks_devices.core.names import eks_manager_label, manager_label
from support import stacks

BOTH = {"nvidia": "inferred", "efa": "inferred"}
P5 = {"instanceTypes": ["p5.48xlarge"], "devices": BOTH}
CLAIMS = {
    "dra-gpu": {"pools": ["p"], "gpus": {"count": 1}},
    "plugin-gpu": {"pools": ["p"], "kind": "extended-resource", "extendedResources": {"nvidia.com/gpu": 1}},
    "plugin-training": {"pools": ["p"], "kind": "extended-resource",
                        "extendedResources": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}},
}


def test_an_inferred_pool_has_no_device_manager_label_and_says_why() -> None:
    pool = stacks.plan("auto-mode", pools={"p": P5}).pools["p"]
    for family in ("nvidia", "efa"):
        assert pool.manager(family) == "inferred"
        assert "per node" in pool.managers[family].reason
        assert eks_manager_label(family) not in pool.labels  # Auto Mode decides and labels each node itself
        assert manager_label(family) not in pool.labels  # the toolkit's label would claim one manager for all
    assert pool.releases == {"nvidia": "auto-mode", "efa": "auto-mode"}


def test_one_inferred_pool_serves_dra_claims_and_plugin_style_pods_without_findings() -> None:
    plan = stacks.plan("auto-mode", pools={"p": P5}, claims=CLAIMS)
    assert not plan.errors, plan.errors
    fits = {c.name: c.pools["p"] for c in plan.claims}
    assert all(f.fits for f in fits.values()), {n: f.summary for n, f in fits.items()}
    dra = next(c for c in plan.claims if c.name == "dra-gpu")
    assert manager_label("nvidia") not in dra.node_selector  # no node of the pool carries it
    assert "gpu.nvidia.com" in {c.name for c in plan.device_classes}  # DRA Pods may come: the class must exist


def test_a_dra_claim_keeps_its_selector_on_a_labelled_dra_pool() -> None:
    plan = stacks.plan("auto-mode", pools={"p": {**P5, "devices": {"nvidia": "dra"}}}, claims=CLAIMS)
    dra = next(c for c in plan.claims if c.name == "dra-gpu")
    assert dra.node_selector == {manager_label("nvidia"): "dra"}


def test_inferred_mixes_with_a_labelled_family() -> None:
    pool = stacks.plan("auto-mode", pools={"p": {**P5, "devices": {"nvidia": "dra", "efa": "inferred"}}}).pools["p"]
    assert pool.labels[eks_manager_label("nvidia")] == "dra" and eks_manager_label("efa") not in pool.labels


def test_topology_alignment_is_possible_on_an_inferred_pool() -> None:
    plan = stacks.plan("auto-mode", pools={"p": {**P5, "efa": {"alignWith": "gpu"}}})
    assert not stacks.findings(plan, "topology-alignment-needs-dra")


def test_inferred_below_kubernetes_136_is_an_error() -> None:
    plan = stacks.plan("auto-mode", "1.35", pools={"p": P5})
    paths = {f.path for f in stacks.findings(plan, "auto-mode-dra-version")}
    assert paths == {"nodePools.p.devices.nvidia", "nodePools.p.devices.efa"}


def problems(mode: str, pools: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(ConfigError) as caught:
        stacks.plan(mode, pools=pools)
    return {p.path: p for p in caught.value.problems}


def test_inferred_is_refused_on_static_pools_on_neuron_and_outside_auto_mode_all_at_once() -> None:
    found = problems("auto-mode", {
        "static": {**P5, "provisioning": "static", "replicas": 1},
        "trn": {"instanceTypes": ["trn1.32xlarge"], "devices": {"neuron": "inferred"}},
    })
    assert set(found) == {"nodePools.static.devices.nvidia", "nodePools.static.devices.efa",
                          "nodePools.trn.devices.neuron"}
    assert "static" in found["nodePools.static.devices.nvidia"].given
    assert "inferred on dynamic Auto Mode pools" in found["nodePools.static.devices.nvidia"].accepted
    assert "Neuron" in found["nodePools.trn.devices.neuron"].given
    assert "inferred" not in found["nodePools.trn.devices.neuron"].accepted
    for mode in ("karpenter", "managed-node-groups"):
        pool = {**P5, "provisioning": "static", "replicas": 1}
        found = problems(mode, {"p": pool})
        assert {"nodePools.p.devices.nvidia", "nodePools.p.devices.efa"} <= set(found)
        assert mode in found["nodePools.p.devices.nvidia"].given
        assert found["nodePools.p.devices.nvidia"].accepted == "auto, dra, device-plugin or none"


@pytest.mark.parametrize("efa", ["auto", "dra", "device-plugin", "inferred", "none"])
def test_no_efa_label_on_a_pool_whose_instance_types_have_no_efa(efa: str) -> None:
    """EKS user guide: "a GPU instance without an EFA device has the NVIDIA label and not the EFA label"."""
    plan = stacks.plan("auto-mode", pools={"p": {"instanceTypes": ["g6.xlarge", "g6e.2xlarge"],
                                                 "devices": {"efa": efa}}})
    pool = plan.pools["p"]
    assert eks_manager_label("efa") not in pool.labels and manager_label("efa") not in pool.labels
    assert pool.labels[eks_manager_label("nvidia")] == "dra"
    if efa in ("dra", "device-plugin", "inferred"):  # an explicit manager for absent devices is a mistake
        assert [f.path for f in stacks.findings(plan, "device-family-absent")] == ["nodePools.p.devices.efa"]


def test_the_nodepool_manifest_carries_no_device_manager_label_and_a_new_identity() -> None:
    """What `pulumi up` and render send: no label for an inferred family; moving a pool to or from
    `inferred` changes its manager, so the NodePool gets a new name and its nodes are replaced."""
    from eks_devices.core.manifests import nodes

    inferred = stacks.plan("auto-mode", pools={"p": P5}).pools["p"]
    labels = nodes.node_pool("auto-mode", inferred)["spec"]["template"]["metadata"]["labels"]
    assert not [k for k in labels if "device-manager" in k]
    labelled = stacks.plan("auto-mode", pools={"p": {**P5, "devices": {}}}).pools["p"]
    assert nodes.node_pool_name(inferred) != nodes.node_pool_name(labelled)


def test_on_an_inferred_pool_dra_claims_fit_only_types_auto_mode_launches_for_dra() -> None:
    """g7e has no Auto Mode DRA metadata: an inferred pool launches it for plugin-style Pods only."""
    pools = {"p": {"instanceTypes": ["g6.xlarge", "g7e.2xlarge"], "devices": {"nvidia": "inferred"}}}
    plan = stacks.plan("auto-mode", pools=pools, claims={k: CLAIMS[k] for k in ("dra-gpu", "plugin-gpu")})
    fits = {c.name: {n.instance_type: n for n in c.pools["p"].nodes} for c in plan.claims}
    assert fits["dra-gpu"]["g6.xlarge"].fits and not fits["dra-gpu"]["g7e.2xlarge"].fits
    assert "device-plugin Pods only" in fits["dra-gpu"]["g7e.2xlarge"].reason
    assert fits["plugin-gpu"]["g6.xlarge"].fits and fits["plugin-gpu"]["g7e.2xlarge"].fits
    assert not plan.errors and not stacks.findings(plan, "dra-unsupported-instance-type")
