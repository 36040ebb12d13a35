"""A fourth device family from its descriptors alone: a distribution that adds a module to the namespace
packages `eks_devices_families` (the family descriptor) and `eks_devices_charts` (its charts) gets its
`devices.<family>` key, its labels, taint and scoped releases, and the rules' checks, with no change to the
toolkit. Run in a child interpreter, so the suite's own process keeps the three built-in families."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

FAMILY = '''
from eks_devices.core.families.base import DeviceFamily

DESCRIPTOR = DeviceFamily(
    name="widget", title="Widget", releases={"dra": "widget-dra-driver", "device-plugin": "widget-device-plugin"},
    extended_resource="example.com/widget", dra_driver="widget.example.com", device_class="widget.example.com",
    device_class_cel='device.driver == "widget.example.com"', dra_kubernetes=(1, 35), taint="example.com/widget",
    short_key="widgets", claim_count_max=4, catalog_count="gpu_count", sources=("a toy family of the test suite",))
'''
CHARTS = '''
from eks_devices.core.knowledge.charts.base import Agent, Chart, ChartClass, Releases

CHARTS = tuple(
    Chart(key, "widget", "oci://registry.example.com/charts", "1.0.0", "kube-system", Releases(("1.0.0",), "toy"),
          agents=(Agent("widget", manager, "driver.nodeSelector", None, "driver.tolerations"),),
          deployment_switches=(),
          device_classes=(ChartClass("widget.example.com", "widget.example.com",
                                     'device.driver == "widget.example.com"'),) if manager == "dra" else ())
    for key, manager in (("widget-dra-driver", "dra"), ("widget-device-plugin", "device-plugin")))
'''
PROGRAM = '''
import json
from eks_devices.core import planner
from eks_devices.core.config.errors import ConfigError
from eks_devices.core.config.stack import parse
from eks_devices.core.families import FAMILY

pools = {
    "w-dra": {"instanceTypes": ["g6.xlarge"], "replicas": 1, "devices": {"widget": "dra", "nvidia": "none"}},
    "w-auto": {"instanceTypes": ["g6.xlarge"], "replicas": 1, "devices": {"nvidia": "none"}},
    "trn": {"instanceTypes": ["trn1.2xlarge"], "replicas": 1, "devices": {"widget": "device-plugin"}},
}
claims = {"one-widget": {"pools": ["w-dra"], "requests": [
    {"name": "w", "exactly": {"deviceClassName": "widget.example.com", "count": 1}}]},
          "two-widgets": {"pools": ["w-dra"], "widgets": {"count": 2}}}
cluster = {"name": "t", "version": "1.34", "mode": "managed-node-groups"}
plan = planner.build(parse({"aws:region": "us-west-2", "eks-devices:nodePools": pools, "eks-devices:claims": claims,
                            "eks-devices:cluster": cluster,
                            "eks-devices:helmValues": {"widget-dra-driver": {"driver": {"logLevel": 4}}},
                            "eks-devices:chartVersions": {"widget-device-plugin": "1.0.0"}}))
try:
    parse({"eks-devices:nodePools": pools, "eks-devices:cluster": cluster,
           "eks-devices:claims": {"many": {"pools": ["w-dra"], "widgets": {"count": 5}}}})
    refused = []
except ConfigError as exc:
    refused = [[p.path, p.given, p.accepted] for p in exc.problems]
print(json.dumps({
    "families": list(FAMILY),
    "managers": {n: [p.managers["widget"].manager, p.managers["widget"].reason] for n, p in plan.pools.items()},
    "labels": {n: p.labels for n, p in plan.pools.items()},
    "taints": {n: list(p.taints) for n, p in plan.pools.items()},
    "releases": {k: [list(r.pools), r.values, r.version] for k, r in plan.releases.items()},
    "classes": [c.name for c in plan.device_classes],
    "findings": sorted([f.slug, f.path, f.severity] for f in plan.findings),
    "claims": {c.name: c.built.devices for c in plan.claims},
    "refused": refused,
}))
'''


ROOT = Path(__file__).resolve().parents[3]
STACK = """config:
  aws:region: us-west-2
  eks-devices:cluster: {name: toy, version: "1.35", mode: managed-node-groups}
  eks-devices:nodePools:
    w-dra: {instanceTypes: [g6.xlarge], replicas: 1, devices: {widget: dra, nvidia: none}}
    w-plugin: {instanceTypes: [g6.xlarge], replicas: 1, devices: {widget: device-plugin, nvidia: none}}
"""


def _run(tmp_path: Path, *args: str) -> dict[str, Any]:
    """`python <args>` with the widget family installed (its two modules on the path); its JSON output."""
    plugins = tmp_path / "plugins"
    for package, source in (("eks_devices_families", FAMILY), ("eks_devices_charts", CHARTS)):
        (plugins / package).mkdir(parents=True)
        (plugins / package / "widget.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, check=False,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_family_added_by_descriptors_is_planned_labelled_and_checked(tmp_path: Path) -> None:
    out = _run(tmp_path, "-c", PROGRAM)
    assert out["families"] == ["nvidia", "efa", "neuron", "widget"]
    # planned: an explicit manager, the reason for auto (its driver needs 1.35), none where the types have none
    # (the descriptor counts its devices in the catalogue's GPU field)
    assert out["managers"] == {
        "w-dra": ["dra", "set in the stack configuration"],
        "w-auto": ["device-plugin", "widget-dra-driver needs Kubernetes 1.35 (cluster is 1.34)"],
        "trn": ["none", "the instance types have no Widget devices"]}
    # labelled and tainted like every family
    assert out["labels"]["w-dra"]["eks-devices.io/device-manager-widget"] == "dra"
    assert out["labels"]["w-auto"]["eks-devices.io/device-manager-widget"] == "device-plugin"
    assert {"key": "example.com/widget", "value": "true", "effect": "NoSchedule"} in out["taints"]["w-dra"]
    # each release scoped by its agent's value paths to exactly the pools that chose it
    dra_pools, dra_values, _ = out["releases"]["widget-dra-driver"]
    assert dra_pools == ["w-dra"]
    assert dra_values["driver"]["nodeSelector"] == {"eks-devices.io/device-manager-widget": "dra"}
    assert {"key": "example.com/widget", "operator": "Exists", "effect": "NoSchedule"} in dra_values["driver"][
        "tolerations"]
    plugin_pools, plugin_values, plugin_version = out["releases"]["widget-device-plugin"]
    assert plugin_pools == ["w-auto"]
    assert plugin_values["driver"]["nodeSelector"] == {"eks-devices.io/device-manager-widget": "device-plugin"}
    assert "widget.example.com" in out["classes"]
    # its charts take the stack's helmValues and chartVersions like the toolkit's own
    assert dra_values["driver"]["logLevel"] == 4 and plugin_version == "1.0.0"
    # checked: the generic rules and the family's own version rule, generated from its descriptor
    assert ["device-family-absent", "nodePools.trn.devices.widget", "error"] in out["findings"]
    assert ["widget-dra-kubernetes-version", "nodePools.w-dra.devices.widget", "error"] in out["findings"]
    # a claim on its class: its driver's devices are not simulated, so the fit is undecided, never refused
    assert ["claim-fit-undetermined", "claims.one-widget.pools.0", "warning"] in out["findings"]
    assert not any(slug == "claim-unsatisfiable" for slug, _, _ in out["findings"])
    # its claim short shape, from the descriptor's short key and count limit: one request on its class
    assert out["claims"]["two-widgets"]["requests"] == [
        {"name": "widgets", "exactly": {"deviceClassName": "widget.example.com", "allocationMode": "ExactCount",
                                        "count": 2}}]
    assert ["claim-fit-undetermined", "claims.two-widgets.pools.0", "warning"] in out["findings"]
    assert [path for path, _, _ in out["refused"]] == ["claims.many.widgets.count"]


def test_the_program_deploys_a_family_added_by_descriptors(tmp_path: Path) -> None:
    """`preview` runs the project's program under the mock engine: the family's releases and node groups."""
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, project / name)
    (project / "stacks" / "Pulumi.toy.yaml").write_text(STACK)
    out = _run(tmp_path, "-m", "eks_devices", "preview", "toy", "--json", "--project-dir", str(project))
    releases = {r["inputs"]["name"]: r["inputs"] for r in out["resources"] if r["type"] == "kubernetes:helm.sh/v3:Release"}
    assert set(releases) == {"widget-dra-driver", "widget-device-plugin"}
    assert releases["widget-dra-driver"]["chart"] == "oci://registry.example.com/charts/widget"
    assert releases["widget-dra-driver"]["values"]["driver"]["nodeSelector"] == {
        "eks-devices.io/device-manager-widget": "dra"}
    groups = {r["name"]: r["inputs"]["labels"] for r in out["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup"}
    assert groups["platform-w-plugin"]["eks-devices.io/device-manager-widget"] == "device-plugin"
    assert out["findings"] == []


def test_an_added_family_that_is_not_one_stops_the_command_with_the_reason(tmp_path: Path) -> None:
    """A module without a descriptor of its own name, a family without the charts its releases name, or one
    whose claim short key is taken: exit 2 and what is accepted, no traceback."""
    families, charts = "eks_devices_families", "eks_devices_charts"
    cases = {"gizmo": ({families: "DESCRIPTOR = None\n"},
                       "eks_devices_families.gizmo: given None; accepted: a module whose DESCRIPTOR is a "
                       "DeviceFamily named 'gizmo'"),
             "widget": ({families: FAMILY},
                        "eks_devices_charts: no chart descriptor for the releases widget: widget-device-plugin, "
                        "widget: widget-dra-driver"),
             # claims are keyed by short keys: one another family has, or one every claim has, is refused
             "gpus": ({families: FAMILY.replace('short_key="widgets"', 'short_key="gpus"'), charts: CHARTS},
                      "eks_devices_families.widget: given short_key 'gpus'; accepted: a camelCase word that no "
                      "other family's short_key is (gpus, efa, neurons are taken)"),
             "pools": ({families: FAMILY.replace('short_key="widgets"', 'short_key="pools"'), charts: CHARTS},
                       "claims short keys: given pools; accepted: a short key no claim key has")}
    for case, (modules, message) in cases.items():
        name = "gizmo" if case == "gizmo" else "widget"
        for package, source in modules.items():
            plugins = tmp_path / case / package
            plugins.mkdir(parents=True)
            (plugins / f"{name}.py").write_text(source)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugins.parent), os.environ.get("PYTHONPATH", "")])}
        result = subprocess.run([sys.executable, "-m", "eks_devices", "check", "dev", "--project-dir", str(ROOT)],
                                capture_output=True, text=True, env=env, check=False)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and "Traceback" not in result.stderr
