"""Claim rules: each fires on its case and stays quiet otherwise; the stacks preview as expected."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from eks_devices.cli.app import app
from eks_devices.core.rules import RULES
from support import stacks

CLAIM_RULES = ("efa-not-shareable", "extended-resource-not-dra", "claim-device-class-missing", "claim-unsatisfiable",
               "claim-alignment-needs-dra", "karpenter-mig-claim-static-only",
               "karpenter-claim-selector-attributes", "claim-fit-undetermined", "claim-distinct-attribute-version",
               "karpenter-claim-not-launched")

MNG = stacks.config("managed-node-groups", name="c", pools={
    "p5": {"replicas": 1, "instanceTypes": ["p5.48xlarge"]},
    "l40s": {"replicas": 1, "instanceTypes": ["g6e.48xlarge"]},
    "plugin": {"replicas": 1, "instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}},
})
KARPENTER = stacks.config("karpenter", name="c", cluster={"karpenter": {"version": "1.15.0"}}, pools={
    "gpu-dra": {"instanceTypes": ["p5.48xlarge"]},
    "gpu-plugin": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}},
})
AUTO = stacks.config("auto-mode", name="c", pools={
    "p5": {"provisioning": "static", "replicas": 1, "instanceTypes": ["p5.48xlarge"]}})


def findings(base: dict, claims: dict, slug: str) -> list:
    return stacks.findings(stacks.build({**base, "eks-devices:claims": claims}), slug)


def test_claim_rules_are_in_the_catalogue() -> None:
    assert set(CLAIM_RULES) <= set(RULES)


# --- claim-distinct-attribute-version ---------------------------------------------------------

SPREAD = {"pools": ["p5"], "requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}],
          "constraints": [{"requests": ["gpus"], "distinctAttribute": "resource.kubernetes.io/pcieRoot"}]}


def test_distinct_attribute_before_1_36_is_an_error() -> None:
    old = stacks.merge(MNG, {"eks-devices:cluster": {"version": "1.35"}})
    [found] = findings(old, {"x": SPREAD}, "claim-distinct-attribute-version")
    assert (found.severity, found.path) == ("error", "claims.x.constraints.0.distinctAttribute") and "1.35" in found.message


def test_distinct_attribute_is_quiet_from_1_36_and_without_it() -> None:
    assert findings(MNG, {"x": SPREAD}, "claim-distinct-attribute-version") == []
    old = stacks.merge(MNG, {"eks-devices:cluster": {"version": "1.35"}})
    assert findings(old, {"x": {"pools": ["p5"], "gpus": {"count": 2}}}, "claim-distinct-attribute-version") == []


# --- efa-not-shareable ------------------------------------------------------------------------

def test_efa_not_shareable_fires_on_a_shared_claim_with_efa() -> None:
    found = findings(MNG, {"x": {"pools": ["p5"], "kind": "claim", "gpus": {}, "efa": {"count": 4},
                                 "alignWith": "gpu"}}, "efa-not-shareable")
    assert len(found) == 1 and found[0].severity == "error" and found[0].path == "claims.x.kind"


@pytest.mark.parametrize("entry", [
    {"pools": ["p5"], "kind": "template", "gpus": {}, "efa": {"count": 4}, "alignWith": "gpu"},
    {"pools": ["p5"], "kind": "claim", "gpus": {}},
])
def test_efa_not_shareable_is_quiet_otherwise(entry: dict) -> None:
    assert findings(MNG, {"x": entry}, "efa-not-shareable") == []


# --- extended-resource-not-dra ----------------------------------------------------------------

def test_extended_resource_not_dra_fires_on_karpenter_dra_pools() -> None:
    found = findings(KARPENTER, {"x": {"pools": ["gpu-dra"], "kind": "extended-resource",
                                       "extendedResources": {"nvidia.com/gpu": 1}}}, "extended-resource-not-dra")
    assert len(found) == 1 and found[0].severity == "warning"
    assert "gpu-dra" in found[0].message and found[0].path == "claims.x.extendedResources"


@pytest.mark.parametrize(("base", "pool"), [(KARPENTER, "gpu-plugin"), (MNG, "p5")])
def test_extended_resource_not_dra_is_quiet_elsewhere(base: dict, pool: str) -> None:
    entry = {"pools": [pool], "kind": "extended-resource", "extendedResources": {"nvidia.com/gpu": 1}}
    assert findings(base, {"x": entry}, "extended-resource-not-dra") == []
    assert findings(KARPENTER, {"x": {"pools": ["gpu-dra"], "gpus": {}}}, "extended-resource-not-dra") == []


def test_extended_resources_fit_by_count_on_plugin_pools() -> None:
    entry = {"pools": ["plugin"], "kind": "extended-resource", "extendedResources": {"nvidia.com/gpu": 2}}
    found = findings(MNG, {"x": entry}, "claim-unsatisfiable")
    assert len(found) == 1 and "g6e.xlarge offers 1 nvidia.com/gpu" in found[0].message
    entry["extendedResources"] = {"nvidia.com/gpu": 1}
    assert findings(MNG, {"x": entry}, "claim-unsatisfiable") == []


# --- claim-device-class-missing ---------------------------------------------------------------

RAW_MIG = {"pools": ["p5"], "requests": [{"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com"}}]}


def test_claim_device_class_missing_fires_when_the_mode_lacks_the_class() -> None:
    found = findings(AUTO, {"x": RAW_MIG}, "claim-device-class-missing")  # Auto Mode creates gpu and efa only
    assert len(found) == 1 and found[0].severity == "error"
    assert "mig.nvidia.com" in found[0].message and "gpu.nvidia.com" in found[0].fix
    assert findings(AUTO, {"x": RAW_MIG}, "claim-unsatisfiable") == []  # not reported twice


@pytest.mark.parametrize(("entry", "paths"), [
    (RAW_MIG, ["claims.x.requests.0.exactly.deviceClassName"]),
    # a firstAvailable alternative, and a class named twice: blamed once, at its first key, naming the other
    ({"pools": ["p5"], "requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
        {"name": "any", "firstAvailable": [{"name": "g", "deviceClassName": "gpu.nvidia.com"},
                                           {"name": "m", "deviceClassName": "mig.nvidia.com"}]},
        {"name": "more", "exactly": {"deviceClassName": "mig.nvidia.com"}}]},
     ["claims.x.requests.1.firstAvailable.1.deviceClassName"]),
    ({"pools": ["p5"], "mig": {"profile": "1g.10gb"}}, ["claims.x.mig"]),
    ({"pools": ["p5"], "computeDomainChannel": {}}, ["claims.x.computeDomainChannel"]),
])
def test_a_missing_class_is_blamed_at_the_key_that_names_it(entry: dict, paths: list[str]) -> None:
    """Not the whole claim: the key the user edits to name another class or to drop the request."""
    found = findings(AUTO, {"x": entry}, "claim-device-class-missing")
    assert [f.path for f in found] == paths
    if len(entry.get("requests", ())) == 3:
        assert "also named at claims.x.requests.2.exactly.deviceClassName" in found[0].message


def test_claim_device_class_missing_is_quiet_when_a_chart_creates_it() -> None:
    assert findings(MNG, {"x": RAW_MIG}, "claim-device-class-missing") == []
    assert findings(AUTO, {"x": {"pools": ["p5"], "gpus": {}}}, "claim-device-class-missing") == []


def test_a_neuron_claim_in_auto_mode_is_told_to_drop_the_keys_it_uses() -> None:
    """Auto Mode runs Neuron on the device plugin only: the fix names the claim's own device keys."""
    trn = stacks.merge(AUTO, {"eks-devices:nodePools": {"trn": {"instanceTypes": ["trn2.48xlarge"],
                                                                "provisioning": "static", "replicas": 1}}})
    cases = {"x": ({"pools": ["trn"], "neurons": {"count": 1}}, "(drop neurons)"),
             "y": ({"pools": ["trn"], "neurons": {"count": 4}, "efa": {"count": 4}, "alignWith": "neuron",
                    "logicalNeuronCore": 2}, "(drop efa, neurons, logicalNeuronCore and alignWith)"),
             "z": ({"pools": ["trn"], "requests": [{"name": "n", "exactly": {"deviceClassName": "neuron.aws.com"}}],
                    "constraints": [{"requests": ["n"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]},
                   "(drop requests and constraints)")}
    for name, (entry, drop) in cases.items():
        [found] = findings(trn, {name: entry}, "claim-device-class-missing")
        assert drop in found.fix and "extendedResources {aws.amazon.com/neuron: N}" in found.fix, found.fix


# --- claim-alignment-needs-dra ----------------------------------------------------------------

ALIGNED = {"pools": ["p5"], "gpus": {}, "efa": {"count": 1}, "alignWith": "gpu"}
EFA_PLUGIN = stacks.merge(MNG, {"eks-devices:nodePools": {"p5": {"devices": {"efa": "device-plugin"}}}})


def test_alignment_on_an_efa_plugin_pool_says_why_and_is_the_only_claim_error() -> None:
    plan = stacks.build({**EFA_PLUGIN, "eks-devices:claims": {"x": ALIGNED}})
    [found] = stacks.findings(plan, "claim-alignment-needs-dra")
    assert (found.severity, found.path) == ("error", "claims.x.pools.0")
    assert "EFA device plugin publishes none" in found.message and "on pool p5" in found.message.lower()
    assert "nodePools.p5.devices.efa: dra" in found.fix
    assert [f.slug for f in plan.errors] == ["claim-alignment-needs-dra"]  # no class-missing fix dropping EFA


def test_alignment_is_quiet_where_both_families_run_dra_and_without_alignment() -> None:
    assert findings(MNG, {"x": ALIGNED}, "claim-alignment-needs-dra") == []
    assert findings(EFA_PLUGIN, {"x": {"pools": ["p5"], "gpus": {}}}, "claim-alignment-needs-dra") == []


# --- karpenter-mig-claim-static-only --------------------------------------------------------

def test_mig_claim_on_a_dynamic_karpenter_pool_leads_with_the_guide_s_reason() -> None:
    plan = stacks.build({**KARPENTER, "eks-devices:claims": {"x": {"pools": ["gpu-dra"], "mig": {"profile": "1g.10gb"}}}})
    assert [f.slug for f in plan.errors] == ["karpenter-mig-claim-static-only"]  # no selector rewrite, no unsatisfiable
    found = plan.errors[0]
    assert "whole GPUs only" in found.message and "provisioning: static" in found.fix


def test_mig_claim_is_quiet_on_static_pools() -> None:
    static = stacks.merge(KARPENTER, {"eks-devices:nodePools": {"gpu-dra": {
        "provisioning": "static", "replicas": 1, "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}}})
    claims = {"x": {"pools": ["gpu-dra"], "mig": {"profile": "1g.10gb"}}}
    assert findings(static, claims, "karpenter-mig-claim-static-only") == []
    assert findings(KARPENTER, {"x": {"pools": ["gpu-dra"], "gpus": {}}}, "karpenter-mig-claim-static-only") == []


# --- claim-unsatisfiable ----------------------------------------------------------------------

@pytest.mark.parametrize(("entry", "pool", "reason"), [
    ({"pools": ["l40s"], "gpus": {"model": "H100"}}, "l40s", "8 × NVIDIA L40S"),
    ({"pools": ["p5"], "gpus": {"count": 1}, "efa": {"count": 5}, "alignWith": "gpu"}, "p5",
     "8 × (1 gpu.nvidia.com + 4 efa.networking.k8s.aws) per pcieRoot"),
    ({"pools": ["plugin"], "gpus": {}}, "plugin", "runs the nvidia device-plugin"),
    ({"pools": ["p5", "l40s"], "gpus": {"count": 2, "model": "L40S"}}, "p5", "NVIDIA H100 80GB HBM3"),
    # g6e's GPUs and EFAs sit on separate PCIe roots (what Karpenter found on running instances)
    ({"pools": ["l40s"], "gpus": {"count": 2, "model": "L40S"}, "efa": {"count": 1}, "alignWith": "gpu"}, "l40s",
     "8 × (1 gpu.nvidia.com), 2 × (2 efa.networking.k8s.aws) per pcieRoot"),
])
def test_claim_unsatisfiable_names_the_pool_and_the_reason(entry: dict, pool: str, reason: str) -> None:
    found = findings(MNG, {"x": entry}, "claim-unsatisfiable")
    index = entry["pools"].index(pool)  # the entry that names the pool it cannot be allocated on
    assert len(found) == 1 and found[0].severity == "error" and found[0].path == f"claims.x.pools.{index}"
    assert f"pool {pool}:" in found[0].message and reason in found[0].message


@pytest.mark.parametrize("entry", [
    {"pools": ["p5"], "gpus": {"count": 1}, "efa": {"count": 4}, "alignWith": "gpu"},
    {"pools": ["p5"], "gpus": {"count": 4}, "efa": {"count": 16}, "alignWith": "gpu"},
    {"pools": ["p5", "l40s"], "gpus": {"count": 1}},
])
def test_claim_unsatisfiable_is_quiet_when_the_claim_fits(entry: dict) -> None:
    assert findings(MNG, {"x": entry}, "claim-unsatisfiable") == []


# --- stacks through the CLI -------------------------------------------------------------------

def test_prod_templates_preview_as_fitting() -> None:
    result = CliRunner().invoke(app, ["preview", "prod", "--json", "--project-dir", str(stacks.ROOT)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["summary"]["errors"] == 0
    claims = data["claims"]
    aligned = [c for c in claims.values() if set(c["families"]) == {"nvidia", "efa"}]
    trainium = [c for c in claims.values() if set(c["families"]) == {"efa", "neuron"}]
    assert aligned and trainium
    for claim in (aligned[0], trainium[0]):
        assert claim["object"] == "ResourceClaimTemplate"
        assert all(p["fits"] for p in claim["pools"].values())
    assert claims["p5-half-gpu-efa"]["pools"]["p5-train"]["summary"] == "fits on: p5.48xlarge (x2 per node)"
    assert claims["trn-quarter-neuron-efa"]["pools"]["trn-train"]["summary"] == "fits on: trn1.32xlarge (x4 per node)"


def test_a_wrong_claim_previews_as_unsatisfiable(tmp_path: Path) -> None:
    config = stacks.shipped("prod")
    config["eks-devices:nodePools"]["a100"] = {"replicas": 1, "instanceTypes": ["p4d.24xlarge"]}
    config["eks-devices:claims"]["every-gpu-its-own-efa"] = {
        "pools": ["a100"], "gpus": {"count": 8}, "efa": {"count": 8}, "alignWith": "gpu"}
    (tmp_path / "Pulumi.yaml").write_text("name: eks-devices\nruntime: python\nstackConfigDir: stacks\n")
    shutil.copy(stacks.ROOT / "__main__.py", tmp_path / "__main__.py")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.wrong.yaml").write_text(yaml.safe_dump({"config": config}))
    runner = CliRunner()
    text = runner.invoke(app, ["preview", "wrong", "--project-dir", str(tmp_path)])
    assert text.exit_code == 1
    flat = " ".join(text.output.split())
    assert "claim-unsatisfiable" in flat
    assert "pool a100: the claim needs 8 × efa.networking.k8s.aws but p4d.24xlarge has 4 that match" in flat
    as_json = json.loads(runner.invoke(app, ["preview", "wrong", "--json", "--project-dir", str(tmp_path)]).stdout)
    fit = as_json["claims"]["every-gpu-its-own-efa"]["pools"]["a100"]
    assert fit["fits"] is False and fit["instanceTypes"]["p4d.24xlarge"]["perNode"] == 0
    assert [f["path"] for f in as_json["findings"] if f["slug"] == "claim-unsatisfiable"] == [
        "claims.every-gpu-its-own-efa.pools.0"]


def test_claims_are_checked_against_the_pool_s_interface_layout() -> None:
    layout = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}] + [
        {"networkCardIndex": c, "deviceIndex": 1 if c == 0 else 0, "interfaceType": "efa-only"} for c in range(8)]
    base = {**MNG, "eks-devices:nodePools": {
        "p5": {"replicas": 1, "instanceTypes": ["p5.48xlarge"], "efa": {"networkInterfaces": layout}}}}
    whole_node = {"pools": ["p5"], "gpus": {"count": 4}, "efa": {"count": 16}, "alignWith": "gpu"}
    found = findings(base, {"x": whole_node}, "claim-unsatisfiable")
    assert len(found) == 1 and "needs 16 × efa.networking.k8s.aws but p5.48xlarge has 8" in found[0].message
    assert findings(MNG, {"x": whole_node}, "claim-unsatisfiable") == []


def test_claim_unsatisfiable_is_quiet_when_the_search_is_undetermined(monkeypatch: pytest.MonkeyPatch) -> None:
    from eks_devices.core.derive import fit

    entry = {"pools": ["p5"], "gpus": {"count": 1}, "efa": {"count": 5}, "alignWith": "gpu"}
    monkeypatch.setattr(fit, "SEARCH_BUDGET", 5)
    assert findings(MNG, {"x": entry}, "claim-unsatisfiable") == []
    [undetermined] = findings(MNG, {"x": entry}, "claim-fit-undetermined")  # reported, not passed silently
    assert undetermined.severity == "warning" and "p5" in undetermined.message
    monkeypatch.undo()
    assert len(findings(MNG, {"x": entry}, "claim-unsatisfiable")) == 1
    assert findings(MNG, {"x": entry}, "claim-fit-undetermined") == []


def test_a_claim_failing_only_on_a_modelled_layout_warns_instead_of_blocking() -> None:
    """p6e-gb200's PCIe layout (1 GPU with 4 or 5 of its 17 EFAs per root) is modelled from counts (no Karpenter
    release has metadata for it), p5.48xlarge's is published: the same impossible alignment blocks the deploy on
    p5 and is only reported on p6e-gb200."""
    pools = {"gb200": {"replicas": 1, "instanceTypes": ["p6e-gb200.36xlarge"]},
             "p5": {"replicas": 1, "instanceTypes": ["p5.48xlarge"]}}
    base = {**MNG, "eks-devices:nodePools": pools}
    modelled = {"pools": ["gb200"], "gpus": {"count": 1}, "efa": {"count": 6}, "alignWith": "gpu"}
    assert findings(base, {"x": modelled}, "claim-unsatisfiable") == []
    [warning] = findings(base, {"x": modelled}, "claim-fit-undetermined")
    assert warning.severity == "warning"
    assert "modelled from its device counts, not published" in warning.message and "pcieRoot" in warning.message
    published = {"pools": ["p5"], "gpus": {"count": 1}, "efa": {"count": 5}, "alignWith": "gpu"}
    [error] = findings(base, {"x": published}, "claim-unsatisfiable")
    assert error.severity == "error" and "modelled" not in error.message
    assert findings(base, {"x": published}, "claim-fit-undetermined") == []
    too_many = {"pools": ["gb200"], "gpus": {"count": 5}}  # counts are published: still an error on p6e-gb200
    assert len(findings(base, {"x": too_many}, "claim-unsatisfiable")) == 1


def test_a_selector_naming_a_pcie_root_on_static_pools_is_judged_where_the_names_are_known() -> None:
    """p5.48xlarge publishes the roots Karpenter scraped (its first GPU on pci0000:44): naming one fits, naming one
    it lacks cannot fit (an error). p6e-gb200's roots are named by position only: a failure there is a warning."""
    pools = {"gb200": {"replicas": 1, "instanceTypes": ["p6e-gb200.36xlarge"]},
             "p5": {"replicas": 1, "instanceTypes": ["p5.48xlarge"]}}
    base = {**MNG, "eks-devices:nodePools": pools}
    for slug in ("claim-unsatisfiable", "claim-fit-undetermined"):
        assert findings(base, {"x": root_selector("pci0000:44", "p5")}, slug) == [], slug
    [error] = findings(base, {"x": root_selector("pci0000:45", "p5")}, "claim-unsatisfiable")
    assert error.severity == "error" and "modelled" not in error.message
    assert findings(base, {"x": root_selector("pci0000:45", "gb200")}, "claim-unsatisfiable") == []
    [warning] = findings(base, {"x": root_selector("pci0000:45", "gb200")}, "claim-fit-undetermined")
    assert warning.severity == "warning" and "named by position" in warning.message


# --- karpenter-claim-selector-attributes --------------------------------------------------------

def root_selector(root: str, pool: str = "gpu-dra") -> dict:
    """A claim for one GPU on the PCIe root named `root`."""
    return {"pools": [pool], "requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.nvidia.com",
        "selectors": [{"cel": {"expression": f"device.attributes['resource.kubernetes.io'].pcieRoot == '{root}'"}}]}}]}


PCIE_SELECTOR = root_selector("pci0000:44")  # p5.48xlarge's first GPU sits there


def test_a_named_pcie_root_is_judged_against_the_names_karpenter_scraped() -> None:
    """Karpenter evaluates a root's name from the metadata it scraped, and the device layouts keep those names:
    a root p5.48xlarge has launches and fits, quietly; a root it lacks is a claim that cannot fit."""
    for slug in ("karpenter-claim-selector-attributes", "claim-unsatisfiable", "karpenter-claim-not-launched",
                 "claim-fit-undetermined"):
        assert findings(KARPENTER, {"x": PCIE_SELECTOR}, slug) == [], slug
    absent = root_selector("pci0000:45")
    assert findings(KARPENTER, {"x": absent}, "karpenter-claim-selector-attributes") == []
    [error] = findings(KARPENTER, {"x": absent}, "claim-unsatisfiable")
    assert error.severity == "error" and "p5.48xlarge" in error.message


def test_a_named_pcie_root_warns_where_the_layouts_lack_the_names_karpenter_scraped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A type Karpenter has metadata for but the layouts lack (a Karpenter release adding one before the table
    follows): the name cannot be checked, so the selector is a warning, not an error."""
    from eks_devices.core.knowledge import device_layouts

    monkeypatch.delitem(device_layouts.LAYOUTS, "p5.48xlarge")
    [found] = findings(KARPENTER, {"x": PCIE_SELECTOR}, "karpenter-claim-selector-attributes")
    assert found.severity == "warning" and found.path == "claims.x.requests.0.exactly.selectors.0.cel.expression"
    assert "resource.kubernetes.io/pcieRoot" in found.message and "p5.48xlarge" in found.message
    assert "matchAttribute" in found.fix


def test_every_type_karpenter_launches_for_a_claim_has_its_root_names() -> None:
    """So the warning above stays quiet for every type the catalogue ships, at every Karpenter release the toolkit
    knows (tests/e2e/test_device_inventory.py holds the names to each release's metadata); the types whose EFAs a
    release describes bare have no root to name."""
    from eks_devices.core.knowledge import catalog, devices, karpenter_metadata

    for release in karpenter_metadata.RELEASES.values():
        covered = [t for t, it in catalog.instance_types().items() if release.launchable(it) and not release.bare_efas(it)]
        assert len(covered) >= 40 and all(devices.root_names_published(t) for t in covered), release.release


def test_selector_on_attributes_karpenter_lacks_is_an_error_on_dynamic_karpenter_pools() -> None:
    driver = {"pools": ["gpu-dra"], "requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.nvidia.com",
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))"}}]}}]}
    [found] = findings(KARPENTER, {"x": driver}, "karpenter-claim-selector-attributes")
    assert found.severity == "error" and found.path == "claims.x.requests.0.exactly.selectors.0.cel.expression"
    assert "gpu.nvidia.com/driverVersion" in found.message


def test_each_selector_is_blamed_at_its_own_expression() -> None:
    """The expression to edit, in a firstAvailable alternative too; a selector Karpenter can read is not blamed."""
    product = {"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"}}
    driver = {"cel": {"expression": "device.attributes['gpu.nvidia.com'].driverVersion.major >= 550"}}
    claim = {"pools": ["gpu-dra"], "requests": [{"name": "gpu", "firstAvailable": [
        {"name": "h100", "deviceClassName": "gpu.nvidia.com", "selectors": [product]},
        {"name": "any", "deviceClassName": "gpu.nvidia.com", "selectors": [product, driver]}]}]}
    found = findings(KARPENTER, {"x": claim}, "karpenter-claim-selector-attributes")
    assert [f.path for f in found] == ["claims.x.requests.0.firstAvailable.1.selectors.1.cel.expression"]


@pytest.mark.parametrize(("base", "claim"), [
    (KARPENTER, {"pools": ["gpu-dra"], "gpus": {"count": 1, "model": "H100"}}),  # productName: known pre-launch
    (KARPENTER, {"pools": ["gpu-dra"], "gpus": {"count": 8}, "efa": {"count": 32}, "alignWith": "gpu"}),  # matchAttribute
    (MNG, {**PCIE_SELECTOR, "pools": ["p5"]}),  # no Karpenter
])
def test_selector_attributes_quiet_otherwise(base: dict, claim: dict) -> None:
    assert not findings(base, {"x": claim}, "karpenter-claim-selector-attributes")


# --- karpenter-claim-not-launched -------------------------------------------------------------------

def test_a_claim_karpenter_refuses_is_an_error_at_its_constraint_on_dynamic_pools_only() -> None:
    """distinctAttribute: the p5 node would serve two GPUs on distinct PCIe roots, but Karpenter 1.15's claim
    validation refuses the constraint, so it launches nothing and the Pod stays Pending."""
    spread = {**SPREAD, "pools": ["gpu-dra"]}
    [found] = findings(KARPENTER, {"x": spread}, "karpenter-claim-not-launched")
    assert found.severity == "error" and found.path == "claims.x.constraints.0"
    assert "distinctAttribute" in found.message and "static" in found.fix
    static = stacks.config("karpenter", name="c", cluster={"karpenter": {"version": "1.15.0"}}, pools={
        "gpu-dra": {"instanceTypes": ["p5.48xlarge"], "provisioning": "static", "replicas": 1}})
    assert not findings(static, {"x": spread}, "karpenter-claim-not-launched")
    assert not findings(MNG, {"x": SPREAD}, "karpenter-claim-not-launched")


@pytest.mark.parametrize("claim", [
    {"pools": ["gpu-dra"], "gpus": {"count": 8}, "efa": {"count": 32}, "alignWith": "gpu"},  # launched
    {"pools": ["gpu-dra"], "gpus": {"count": 9}},  # no node serves it: claim-unsatisfiable says so
    {"pools": ["gpu-dra"], "mig": {"profile": "1g.10gb"}},  # karpenter-mig-claim-static-only says so
])
def test_not_launched_is_quiet_when_karpenter_launches_or_another_rule_speaks(claim: dict) -> None:
    assert not findings(KARPENTER, {"x": claim}, "karpenter-claim-not-launched")


def test_a_compute_domain_channel_on_a_dynamic_pool_is_left_to_the_pool_s_rule() -> None:
    pools = {"gpu-dra": {"instanceTypes": ["p5.48xlarge"], "computeDomains": True}}
    cfg = stacks.config("karpenter", name="c", cluster={"karpenter": {"version": "1.15.0"}}, pools=pools)
    channel = {"pools": ["gpu-dra"], "requests": [
        {"name": "channel", "exactly": {"deviceClassName": "compute-domain-default-channel.nvidia.com"}}]}
    assert not findings(cfg, {"x": channel}, "karpenter-claim-not-launched")
    assert findings(cfg, {"x": channel}, "karpenter-compute-domains-static-only")
