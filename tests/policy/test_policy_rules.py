"""The policy pack's rules (the registry's `@on_resources` checks) on recorded resources: the shipped stacks
pass, each broken variant is caught, and a program that does not use eks-devices at all is judged
by the same rules."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from eks_devices.core.derive.resources import Resource, read
from eks_devices.core.rules import Violation
from eks_devices.core.rules import check_resources as check
from eks_devices.offline.engine import Recording
from support.engine import main, run
from support.programs import foreign_program
from support.stacks import SHIPPED, shipped


def as_resources(rec: Recording) -> list[Resource]:
    """What the analyzer receives of each resource: its inputs with the engine's outputs over them."""
    return [Resource(r.type, r.name, r.urn, {**copy.deepcopy(r.inputs), **copy.deepcopy(r.outputs)}, r.parent)
            for r in rec.resources]


@pytest.fixture(scope="module")
def recorded() -> dict[str, list[Resource]]:
    return {stack: as_resources(main(shipped(stack))) for stack in SHIPPED}


@pytest.mark.parametrize("stack", SHIPPED)
def test_shipped_stacks_pass_every_policy(recorded: dict[str, list[Resource]], stack: str) -> None:
    facts = read(recorded[stack])
    assert any(s.instance_types for s in facts.shapes)  # the proof has accelerated nodes to look at
    assert check(recorded[stack]) == []


def test_node_group_instance_types_come_from_its_launch_template(recorded: dict[str, list[Resource]]) -> None:
    shapes = {s.name: s for s in read(recorded["prod"]).shapes}
    assert shapes["platform-p5-train"].instance_types == ("p5.48xlarge",)  # capacity block: type in the template
    assert shapes["platform-p5-train"].taints == ({"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},)


def named(resources: list[Resource], name: str) -> Resource:
    found = [r for r in resources if r.name == name and r.type != "aws:ec2/launchTemplate:LaunchTemplate"]
    assert len(found) == 1, name
    return found[0]


def _gpu_override_off(res: list[Resource]) -> None:
    named(res, "platform-nvidia-dra-driver").props["values"]["gpuResourcesEnabledOverride"] = False


def _plugin_config_name_and_map(res: list[Resource]) -> None:
    values = named(res, "platform-nvidia-device-plugin").props["values"]
    assert values["config"]["map"]  # the toolkit's time-slicing configs
    values["config"]["name"] = "team-configs"


def _unscoped_plugin(res: list[Resource]) -> None:
    named(res, "platform-nvidia-device-plugin").props["values"]["nodeSelector"] = None


def _gates_clash(res: list[Resource]) -> None:
    named(res, "platform-karpenter-release").props["values"]["settings"]["ignoreDRARequests"] = True


def _gates_missing(res: list[Resource]) -> None:
    del named(res, "platform-karpenter-release").props["values"]["settings"]["enableDRA"]


def _neuron_both_modes(res: list[Resource]) -> None:
    named(res, "platform-neuron-dra-driver").props["values"]["devicePlugin"]["enabled"] = True


def _raw_daemonset(res: list[Resource]) -> None:
    res.append(Resource("kubernetes:apps/v1:DaemonSet", "gpu-operator-plugin", "urn:x::ds", {
        "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "gpu-operator"},
        "spec": {"template": {"spec": {"containers": [{"image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"}],
                                       "tolerations": [{"operator": "Exists"}]}}}}))


def _shared_efa_claim(res: list[Resource]) -> None:
    res.append(Resource("kubernetes:resource.k8s.io/v1:ResourceClaim", "shared-efa", "urn:x::claim", {
        "metadata": {"name": "shared-efa"},
        "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "efa.networking.k8s.aws"}}]}}}))


def _bottlerocket_bundled_plugin(res: list[Resource]) -> None:
    """Bottlerocket for a DRA node group, with the GPU label the DRA kubelet plugin needs off AL2023."""
    group = named(res, "platform-p5-train")
    group.props["amiType"] = "BOTTLEROCKET_x86_64_NVIDIA"
    group.props["labels"]["nvidia.com/gpu.present"] = "true"


def _bottlerocket_without_gpu_label(res: list[Resource]) -> None:
    """Bottlerocket for a DRA node group, without the GPU label: the DRA kubelet plugin stays off it."""
    named(res, "platform-p5-train").props["amiType"] = "BOTTLEROCKET_x86_64_NVIDIA"


def _plugin_selector_typo(res: list[Resource]) -> None:
    named(res, "platform-nvidia-device-plugin").props["values"]["nodeSelector"] = {
        "eks-devices.io/device-manager-nvidia": "plugin"}


def _invalid_toleration(res: list[Resource]) -> None:
    named(res, "platform-nvidia-dra-driver").props["values"]["kubeletPlugin"]["tolerations"].append(
        {"key": "nvidia.com/gpu", "operator": "Exists", "value": "true", "effect": "NoSchedule"})


def _partial_efa_layout(res: list[Resource]) -> None:
    node_class = named(res, "platform-gpu-dra-class")
    node_class.props["spec"]["networkInterfaces"] = [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
        {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}]


# --- the ways around one-manager-per-node an audit found (issue 26), each on the recorded staging stack ---
PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"


def _gpu_operator(res: list[Resource]) -> None:
    """The NVIDIA GPU Operator's chart, defaults: its ClusterPolicy deploys the device plugin on every GPU node."""
    res.append(Resource("kubernetes:helm.sh/v3:Release", "gpu-operator", "urn:x::gpu-operator",
                        {"chart": "gpu-operator", "version": "v26.7.0", "values": {}}))


def _gpu_operator_dra(res: list[Resource]) -> None:
    """26.7 with a GPUCluster instead: the operator runs the DRA driver, on the plugin pools too."""
    res.append(Resource("kubernetes:helm.sh/v3:Release", "gpu-operator", "urn:x::gpu-operator", {
        "chart": "nvidia/gpu-operator", "version": "v26.7.0",
        "values": {"gpuCluster": {"deployCR": True}, "clusterPolicy": {"deployCR": False}}}))


def _cluster_policy(res: list[Resource]) -> None:
    res.append(Resource("kubernetes:nvidia.com/v1:ClusterPolicy", "cluster-policy", "urn:x::cluster-policy",
                        {"metadata": {"name": "cluster-policy"}, "spec": {"devicePlugin": {"enabled": True}}}))


def _packaged_chart(res: list[Resource]) -> None:
    props = named(res, "platform-nvidia-device-plugin").props
    props["chart"] = "./charts/nvidia-device-plugin-0.20.0.tgz"
    props["values"]["nodeSelector"] = None


def _pinned_chart_unscoped(res: list[Resource]) -> None:
    """The DRA driver's chart pulled by digest (`eks-devices:digests`), its kubelet plugin unscoped."""
    props = named(res, "platform-nvidia-dra-driver").props
    props["chart"] = f"{props['chart']}@sha256:{'ab' * 32}"
    props["values"]["kubeletPlugin"]["nodeSelector"] = None


def _daemonset_patch(res: list[Resource]) -> None:
    """A patch that puts the plugin (from a private mirror) into another DaemonSet, tolerating everything."""
    res.append(Resource("kubernetes:apps/v1:DaemonSetPatch", "plugin-patch", "urn:x::patch", {
        "metadata": {"name": "node-agent", "namespace": "kube-system"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "plugin", "image": "mirror.corp.example:5000/gpu/k8s-device-plugin:v0.20.0"}],
            "tolerations": [{"operator": "Exists"}]}}}}))


def _mirrored_wrapper_chart(res: list[Resource]) -> None:
    """A chart of the team's own whose values run the plugin's image from a private mirror."""
    res.append(Resource("kubernetes:helm.sh/v3:Release", "corp-gpu", "urn:x::corp-gpu", {
        "chart": "oci://mirror.corp.example/charts/corp-gpu-stack", "version": "1.0.0",
        "values": {"plugin": {"image": {"repository": "mirror.corp.example/nvidia/k8s-device-plugin",
                                        "tag": "v0.20.0"}}}}))


def _transformed_v4_chart(res: list[Resource]) -> None:
    """A scoped helm.sh/v4 Chart whose DaemonSet a transform unscoped: the child is what runs."""
    res.append(Resource("kubernetes:helm.sh/v4:Chart", "team-plugin", "urn:x::chart", {
        "chart": "nvidia-device-plugin", "version": "0.20.0",
        "values": {"nodeSelector": {"eks-devices.io/device-manager-nvidia": "device-plugin"}}}))
    res.append(Resource("kubernetes:apps/v1:DaemonSet", "team-plugin:kube-system/nvidia-device-plugin", "urn:x::ds", {
        "metadata": {"name": "nvidia-device-plugin", "namespace": "kube-system"},
        "spec": {"template": {"spec": {"containers": [{"image": PLUGIN_IMAGE}],
                                       "tolerations": [{"operator": "Exists"}]}}}}, parent="urn:x::chart"))


EVERY_GPU_POOL = {"platform-gpu-dra", "platform-gpu-mig", "platform-gpu-timeslice", "platform-nvidia-device-plugin",
                  "platform-nvidia-dra-driver"}
BROKEN: dict[str, tuple[str, Callable[[list[Resource]], None], str, set[str]]] = {
    "gpu-operator-release": ("staging", _gpu_operator, "one-manager-per-node", EVERY_GPU_POOL | {"gpu-operator"}),
    "gpu-operator-release-dra": ("staging", _gpu_operator_dra, "one-manager-per-node",
                                 EVERY_GPU_POOL | {"gpu-operator"}),
    "gpu-operator-cluster-policy": ("staging", _cluster_policy, "one-manager-per-node",
                                    EVERY_GPU_POOL | {"cluster-policy"}),
    "packaged-chart-unscoped": ("staging", _packaged_chart, "one-manager-per-node",
                                {"platform-gpu-dra", "platform-gpu-mig", "platform-nvidia-device-plugin",
                                 "platform-nvidia-dra-driver"}),
    "digest-pinned-chart-unscoped": ("staging", _pinned_chart_unscoped, "one-manager-per-node",
                                     {"platform-gpu-timeslice", "platform-nvidia-device-plugin", "platform-nvidia-dra-driver"}),
    "daemonset-patch-from-a-mirror": ("staging", _daemonset_patch, "one-manager-per-node",
                                      EVERY_GPU_POOL | {"plugin-patch"}),
    "mirrored-image-in-a-wrapper-chart": ("staging", _mirrored_wrapper_chart, "one-manager-per-node",
                                          {"corp-gpu", "platform-nvidia-device-plugin", "platform-nvidia-dra-driver"}),
    "v4-chart-unscoped-by-a-transform": ("staging", _transformed_v4_chart, "one-manager-per-node",
                                         EVERY_GPU_POOL | {"team-plugin:kube-system/nvidia-device-plugin"}),
    # variant: (stack, change, slug, names of the resources blamed)
    "plugin-nodeSelector-null": ("staging", _unscoped_plugin, "one-manager-per-node",
                                 {"platform-gpu-dra", "platform-gpu-mig", "platform-nvidia-device-plugin",
                                  "platform-nvidia-dra-driver"}),
    "enableDRA-with-ignoreDRARequests": ("staging", _gates_clash, "karpenter-dra-gates-exclusive",
                                         {"platform-karpenter-release"}),
    "enableDRA-removed": ("staging", _gates_missing, "karpenter-dra-gates-match-drivers",
                          {"platform-karpenter-release"}),
    "neuron-chart-both-modes": ("staging", _neuron_both_modes, "one-manager-per-node",
                                {"platform-trn-static", "platform-neuron-dra-driver"}),
    "gpu-operator-daemonset": ("staging", _raw_daemonset, "one-manager-per-node",
                               {"platform-gpu-dra", "platform-gpu-mig", "platform-gpu-timeslice",
                                "gpu-operator-plugin", "platform-nvidia-device-plugin", "platform-nvidia-dra-driver"}),
    "partial-efa-layout-on-dynamic-dra-pool": ("staging", _partial_efa_layout, "efa-partial-interfaces",
                                               {"platform-gpu-dra"}),
    "shared-efa-claim": ("prod", _shared_efa_claim, "efa-not-shareable", {"shared-efa"}),
    "bottlerocket-nvidia-on-dra-node-group": ("prod", _bottlerocket_bundled_plugin, "one-manager-per-node",
                                              {"platform-p5-train"}),
    "bottlerocket-dra-node-group-without-gpu-label": ("prod", _bottlerocket_without_gpu_label,
                                                      "device-software-unserved", {"platform-p5-train"}),
    "plugin-nodeSelector-typo": ("staging", _plugin_selector_typo, "device-software-unserved",
                                 {"platform-gpu-timeslice"}),
    "dra-driver-toleration-invalid": ("staging", _invalid_toleration, "device-software-installable",
                                      {"platform-nvidia-dra-driver"}),
    "dra-driver-gpu-override-off": ("staging", _gpu_override_off, "chart-render-refused",
                                    {"platform-nvidia-dra-driver"}),
    "plugin-config-name-and-map": ("staging", _plugin_config_name_and_map, "chart-render-refused",
                                   {"platform-nvidia-device-plugin"}),
}


@pytest.mark.parametrize("variant", BROKEN)
def test_each_broken_variant_is_found(recorded: dict[str, list[Resource]], variant: str) -> None:
    stack, change, slug, blamed = BROKEN[variant]
    resources = copy.deepcopy(recorded[stack])
    change(resources)
    found = check(resources)
    by_urn = {r.urn: r.name for r in resources}
    assert {v.slug for v in found} == {slug}, found
    assert {by_urn[v.urn] for v in found} == blamed


def test_the_violation_says_what_runs_where(recorded: dict[str, list[Resource]]) -> None:
    resources = copy.deepcopy(recorded["staging"])
    _unscoped_plugin(resources)
    pool = named(resources, "platform-gpu-dra").urn
    message = next(v.message for v in check(resources) if v.urn == pool)
    assert message.startswith("Karpenter NodePool platform-gpu-dra: p5.48xlarge nodes would run 2 nvidia device "
                              "managers: device-plugin (Helm release platform-nvidia-device-plugin of "
                              "nvidia-device-plugin 0.20.0), dra (Helm release platform-nvidia-dra-driver of "
                              "dra-driver-nvidia-gpu 0.5.0)")


def test_an_unserved_pool_says_why(recorded: dict[str, list[Resource]]) -> None:
    resources = copy.deepcopy(recorded["staging"])
    _plugin_selector_typo(resources)
    (found,) = check(resources)
    assert found.message.startswith(
        "Karpenter NodePool platform-gpu-timeslice: its g6e.2xlarge nodes are labelled "
        "eks-devices.io/device-manager-nvidia=device-plugin but get no nvidia device-plugin: Helm release "
        "platform-nvidia-device-plugin of nvidia-device-plugin 0.20.0: its nodeSelector eks-devices.io/device-manager-nvidia=plugin does not match")


def test_a_program_without_eks_devices_is_flagged() -> None:
    resources = as_resources(run(foreign_program, {"aws:region": "us-west-2"}, project="team"))
    found: list[Violation] = check(resources)
    by_urn = {r.urn: r.name for r in resources}
    blamed = {by_urn[v.urn] for v in found if v.slug == "one-manager-per-node"}
    assert blamed == {"gpu", "gpu-pool", "dra-driver", "device-plugin"}  # both pools, and the pair of charts whatever pools exist
    pool = next(v for v in found if by_urn[v.urn] == "gpu-pool")
    assert re.match(r"Karpenter NodePool gpu-pool: g6e\.\w+ nodes would run 2 nvidia device managers: device-plugin "
                    r"\(Helm release device-plugin of nvidia-device-plugin 0\.20\.0\), dra \(Helm chart dra-driver of "
                    r"dra-driver-nvidia-gpu", pool.message)


def test_scoped_charts_on_labelled_pools_pass() -> None:
    """The same program with each chart on its own label and each pool labelled: nothing to report."""
    resources = as_resources(run(foreign_program, {"aws:region": "us-west-2"}, project="team"))
    label = "example.com/gpu-manager"
    named(resources, "device-plugin").props["values"] = {"nodeSelector": {label: "plugin"}}
    named(resources, "dra-driver").props["values"]["kubeletPlugin"] = {"nodeSelector": {label: "dra"}}
    named(resources, "gpu").props["labels"] = {label: "plugin"}
    named(resources, "gpu-pool").props["spec"]["template"]["metadata"] = {"labels": {label: "dra"}}
    assert check(resources) == []




def test_the_gpu_operator_violation_names_the_resource(recorded: dict[str, list[Resource]]) -> None:
    resources = copy.deepcopy(recorded["staging"])
    _cluster_policy(resources)
    pool = named(resources, "platform-gpu-dra").urn
    message = next(v.message for v in check(resources) if v.urn == pool)
    assert "GPU Operator ClusterPolicy cluster-policy (resource cluster-policy)" in message


def _plugin_values_in_a_file(resources: list[Resource], asset: dict[str, str]) -> None:
    props = named(resources, "platform-nvidia-device-plugin").props
    props["values"].pop("nodeSelector")
    props["valueYamlFiles"] = [asset]


@pytest.mark.parametrize("form", ["text", "path"])
def test_value_yaml_files_are_read(recorded: dict[str, list[Resource]], tmp_path: Path, form: str) -> None:
    """The plugin's scoping given in a values file (a StringAsset's text, or a local FileAsset):
    read, merged under `values`, the stack passes; without the file the plugin is unscoped."""
    scoping = "nodeSelector:\n  eks-devices.io/device-manager-nvidia: device-plugin\n"
    path = tmp_path / "plugin-values.yaml"
    path.write_text(scoping)
    resources = copy.deepcopy(recorded["staging"])
    _plugin_values_in_a_file(resources, {"text": scoping} if form == "text" else {"path": str(path)})
    assert check(resources) == []
    path.write_text("nodeSelector: {}\n")  # the file now unscopes it
    resources = copy.deepcopy(recorded["staging"])
    _plugin_values_in_a_file(resources, {"text": path.read_text()} if form == "text" else {"path": str(path)})
    assert "platform-gpu-dra" in {named_by_urn(resources, v.urn) for v in check(resources)}


def test_an_unreadable_value_yaml_file_is_a_violation(recorded: dict[str, list[Resource]]) -> None:
    resources = copy.deepcopy(recorded["staging"])
    _plugin_values_in_a_file(resources, {"path": "/nonexistent/plugin-values.yaml"})
    found = [v for v in check(resources) if named_by_urn(resources, v.urn) == "platform-nvidia-device-plugin"]
    assert any("valueYamlFiles /nonexistent/plugin-values.yaml could not be read" in v.message for v in found)


def named_by_urn(resources: list[Resource], urn: str) -> str:
    return next(r.name for r in resources if r.urn == urn)


def test_gpu_nodes_opted_out_of_the_gpu_operator_run_none_of_its_operands(recorded: dict[str, list[Resource]]) -> None:
    """The operator skips nodes labelled nvidia.com/gpu.deploy.operands=false: DRA pools labelled so
    are not reported (the plugin pool still is: the operator's plugin would run beside the toolkit's)."""
    resources = copy.deepcopy(recorded["staging"])
    _gpu_operator(resources)
    for pool in ("platform-gpu-dra", "platform-gpu-mig"):
        named(resources, pool).props["spec"]["template"]["metadata"]["labels"]["nvidia.com/gpu.deploy.operands"] = "false"
    blamed = {named_by_urn(resources, v.urn) for v in check(resources)}
    assert "platform-gpu-timeslice" in blamed and not blamed & {"platform-gpu-dra", "platform-gpu-mig"}
