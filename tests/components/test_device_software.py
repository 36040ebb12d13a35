"""DeviceSoftware under Pulumi's mock engine, per mode: the Helm releases (chart, version, namespace,
values: scope, tolerations, gates), no device software in Auto Mode, DeviceClasses only where the
toolkit owns them, shared GPU claims, and overrides that widen a release's scope rejected."""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s
import pytest

from eks_devices.core import planner as plan
from eks_devices.core.config.stack import parse
from eks_devices.core.knowledge import device_classes
from eks_devices.core.manifests import software as device_manifests
from eks_devices.core.names import DEVICE_SOFTWARE_TYPE as TYPE
from eks_devices.device_software import DeviceSoftware, DeviceSoftwareArgs
from eks_devices.program import PlanRejected, plan_for_stack
from support import engine, stacks
from support.cli import fresh

RELEASE = "kubernetes:helm.sh/v3:Release"
DEVICE_CLASS = "kubernetes:resource.k8s.io/v1:DeviceClass"
CLAIM = "kubernetes:resource.k8s.io/v1:ResourceClaim"
NAMESPACE = "kubernetes:core/v1:Namespace"


def run(p: plan.Plan, cfg: dict[str, Any], stack: str = "test") -> engine.Recording:
    def program() -> None:
        DeviceSoftware("devices", DeviceSoftwareArgs(plan=p, k8s_provider=k8s.Provider("k8s", kubeconfig="{}")))
    return engine.run(program, cfg, stack=stack)


@pytest.fixture(scope="module")
def shipped() -> dict[str, tuple[plan.Plan, engine.Recording]]:
    out = {}
    for stack in ("dev", "staging", "prod"):
        p = stacks.shipped_plan(stack)
        out[stack] = (p, run(p, stacks.shipped(stack), stack))
    return out


# --- Auto Mode --------------------------------------------------------------------------------

def test_auto_mode_installs_no_device_software(shipped: dict) -> None:
    _, rec = shipped["dev"]
    assert rec.of_type(RELEASE) == [] and rec.of_type(NAMESPACE) == []


def test_auto_mode_creates_the_upstream_device_classes(shipped: dict) -> None:
    _, rec = shipped["dev"]
    classes = {r.inputs["metadata"]["name"]: r for r in rec.of_type(DEVICE_CLASS)}
    assert set(classes) == {"gpu.nvidia.com", "efa.networking.k8s.aws"}
    gpu = classes["gpu.nvidia.com"].inputs["spec"]
    assert gpu["selectors"] == [{"cel": {"expression": device_classes.GPU_CEL}}]
    assert gpu["extendedResourceName"] == "nvidia.com/gpu"
    assert classes["efa.networking.k8s.aws"].inputs["spec"]["selectors"] == [{"cel": {"expression": device_classes.EFA_CEL}}]
    for r in classes.values():
        assert r.inputs["apiVersion"] == "resource.k8s.io/v1" and r.delete_before_replace


def test_auto_mode_device_class_leaves_the_extended_resource_out_when_the_stack_says_no() -> None:
    """cluster.draExtendedResources: false (KEP-5004): the toolkit's gpu.nvidia.com class names no
    extended resource, so nvidia.com/gpu Pods are never served through DRA; an inferred pool still gets it."""
    cfg = stacks.config("auto-mode", pools={"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "inferred"}}},
                        cluster={"draExtendedResources": False})
    rec = run(plan.build(parse(cfg)), cfg)
    gpu = engine.one(r for r in rec.of_type(DEVICE_CLASS) if r.inputs["metadata"]["name"] == "gpu.nvidia.com")
    assert gpu.inputs["spec"]["selectors"] == [{"cel": {"expression": device_classes.GPU_CEL}}]
    assert "extendedResourceName" not in gpu.inputs["spec"]


def test_auto_mode_shared_claim(shipped: dict) -> None:
    _, rec = shipped["dev"]
    (claim,) = rec.of_type(CLAIM)
    assert claim.inputs["metadata"]["name"] == "shared-gpu" and claim.inputs["metadata"]["namespace"] == "default"
    (request,) = claim.inputs["spec"]["devices"]["requests"]
    assert request["exactly"]["deviceClassName"] == "gpu.nvidia.com" and request["exactly"]["count"] == 1
    assert claim.replace_on_changes == ["spec"] and claim.delete_before_replace
    gpu_class = next(r for r in rec.of_type(DEVICE_CLASS) if r.inputs["metadata"]["name"] == "gpu.nvidia.com")
    assert gpu_class.urn in claim.depends_on


# --- self-managed modes -----------------------------------------------------------------------

@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_one_release_per_family_and_manager(shipped: dict, stack: str) -> None:
    p, rec = shipped[stack]
    releases = {r.inputs["name"]: r for r in rec.of_type(RELEASE)}
    assert set(releases) == set(p.releases)
    component = next(r for r in rec.resources if r.type == TYPE)
    provider = next(r for r in rec.resources if r.type == "pulumi:providers:kubernetes")
    for key, release in p.releases.items():
        got = releases[key]
        assert got.inputs["chart"] == release.chart and got.inputs["version"] == release.version
        assert got.inputs["namespace"] == release.namespace and got.inputs["createNamespace"] is False
        assert got.inputs["allowNullValues"] is True
        assert got.inputs["values"] == release.values  # nulls included: they delete chart defaults
        if release.chart.startswith("oci://"):
            assert "repositoryOpts" not in got.inputs
        else:
            assert got.inputs["repositoryOpts"] == {"repo": release.repository}
        assert got.parent == component.urn and got.provider.startswith(provider.urn)


def test_release_table_staging(shipped: dict) -> None:
    _, rec = shipped["staging"]
    charts = {r.inputs["name"]: (r.inputs["chart"], r.inputs["version"], r.inputs["namespace"])
              for r in rec.of_type(RELEASE)}
    assert charts == {
        "nvidia-dra-driver": ("oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu", "0.5.0",
                              "nvidia"),
        "nvidia-device-plugin": ("nvidia-device-plugin", "0.20.0", "nvidia"),
        "aws-dranet": ("aws-dranet", "1.0.0", "kube-system"),
        "aws-efa-k8s-device-plugin": ("aws-efa-k8s-device-plugin", "v0.5.30", "kube-system"),
        "neuron-dra-driver": ("oci://public.ecr.aws/neuron/neuron-helm-chart", "1.10.0", "kube-system"),
    }
    namespaces = {r.inputs["metadata"]["name"]: r for r in rec.of_type(NAMESPACE)}
    # kube-system exists already; the Neuron chart creates and owns `neuron-dra-driver` itself, so a
    # toolkit-made namespace of that name would make its install fail
    assert set(namespaces) == {"nvidia"}
    dra = rec.named("devices-nvidia-dra-driver")
    assert namespaces["nvidia"].urn in dra.depends_on


def test_nvidia_dra_driver_values(shipped: dict) -> None:
    p, _ = shipped["staging"]
    values = p.releases["nvidia-dra-driver"].values
    assert values["gpuResourcesEnabledOverride"] is True
    assert values["resourceApiVersion"] == "resource.k8s.io/v1"
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}
    assert values["kubeletPlugin"]["nodeSelector"] == {"eks-devices.io/device-manager-nvidia": "dra"}
    assert values["kubeletPlugin"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    # no control-plane placement on EKS: the nulls delete the chart's defaults
    assert values["controller"]["nodeSelector"] is None and values["controller"]["affinity"] is None
    # the MIG pool is p5 (H100) on Kubernetes 1.36: the driver partitions on demand
    assert values["featureGates"] == {"DynamicMIG": True}


def test_dynamic_mig_stays_off_for_ampere() -> None:
    """DynamicMIG cannot partition A100s (and destroys partitions it did not make): MIG stays static."""
    cfg = stacks.config("managed-node-groups", pools={"mig": {
        "instanceTypes": ["p4d.24xlarge"], "replicas": 1, "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}}})
    values = plan.build(parse(cfg)).releases["nvidia-dra-driver"].values
    assert "featureGates" not in values


def test_device_plugin_values(shipped: dict) -> None:
    for stack in ("staging", "prod"):
        values = shipped[stack][0].releases["nvidia-device-plugin"].values
        assert values["mofedEnabled"] is False
        assert values["nodeSelector"] == {"eks-devices.io/device-manager-nvidia": "device-plugin"}
        assert values["migStrategy"] == "none"
    config = shipped["staging"][0].releases["nvidia-device-plugin"].values["config"]
    assert config["default"] == "default" and set(config["map"]) == {"default", "time-slicing-4"}
    assert "replicas: 4" in config["map"]["time-slicing-4"]
    assert shipped["staging"][0].pools["gpu-timeslice"].labels["nvidia.com/device-plugin.config"] == "time-slicing-4"
    assert "config" not in shipped["prod"][0].releases["nvidia-device-plugin"].values


def test_efa_releases_tolerate_gpu_and_neuron_taints(shipped: dict) -> None:
    p, _ = shipped["staging"]
    dranet = p.releases["aws-dranet"].values
    assert {t["key"] for t in dranet["tolerations"]} == {"nvidia.com/gpu", "aws.amazon.com/neuron"}
    assert dranet["deviceClass"] == {"create": True, "name": "efa.networking.k8s.aws"}
    assert dranet["nodeSelector"] == {"eks-devices.io/device-manager-efa": "dra"}
    assert dranet["supportedInstanceLabels"]["values"] == ["p5.48xlarge", "p5e.48xlarge", "trn2.48xlarge"]
    plugin = p.releases["aws-efa-k8s-device-plugin"].values
    assert {t["key"] for t in plugin["tolerations"]} == {"nvidia.com/gpu"}
    assert plugin["image"]["repository"].startswith("602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/")


def test_neuron_dra_release(shipped: dict) -> None:
    values = shipped["prod"][0].releases["neuron-dra-driver"].values
    assert values["draDriver"] == {"enabled": True, "nodeSelector": {"eks-devices.io/device-manager-neuron": "dra"},
                                   "tolerations": [{"key": "aws.amazon.com/neuron", "operator": "Exists",
                                                    "effect": "NoSchedule"}]}
    assert values["devicePlugin"] == {"enabled": False}
    assert values["npd"] == {"enabled": False} and values["scheduler"] == {"enabled": False}


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_self_managed_modes_create_no_chart_owned_objects(shipped: dict, stack: str) -> None:
    p, rec = shipped[stack]
    assert rec.of_type(DEVICE_CLASS) == []  # the charts create gpu.nvidia.com, efa..., neuron.aws.com
    assert {c.name for c in p.device_classes} >= {"gpu.nvidia.com", "efa.networking.k8s.aws", "neuron.aws.com"}


# --- gates, sharing, extra classes, Bottlerocket (one mocked run) -------------------------------

MIXED = {
    "aws:region": "eu-west-1",
    "eks-devices:cluster": {"name": "mix", "version": "1.36", "mode": "managed-node-groups"},
    "eks-devices:nodePools": {
        "h100-mig": {"replicas": 1, "instanceTypes": ["p5.48xlarge"], "devices": {"efa": "dra"},
                     "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}, "computeDomains": True},
        "l40s-slices": {"replicas": 1, "instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"},
                        "gpuSharing": {"strategy": "time-slicing", "replicas": 3}},
        "shared": {"replicas": 1, "instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                   "gpuSharing": {"strategy": "shared-claim", "claimNamespace": "inference"}},
        "br-plugin": {"replicas": 1, "instanceTypes": ["g6e.2xlarge"], "ami": "bottlerocket",
                      "devices": {"nvidia": "device-plugin"}},
        "al-plugin-mig": {"replicas": 1, "instanceTypes": ["p4d.24xlarge"], "devices": {"nvidia": "device-plugin"},
                          "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}},
    },
    "eks-devices:deviceClasses": {"h100.gpu.eks-devices.io": {"base": "gpu.nvidia.com",
                                                              "productName": "NVIDIA H100 80GB HBM3"}},
    "eks-devices:chartVersions": {"nvidia-device-plugin": "0.19.3"},
}


@pytest.fixture(scope="module")
def mixed() -> tuple[plan.Plan, engine.Recording]:
    p = plan.build(parse(MIXED))
    assert not p.errors, p.errors
    return p, run(p, MIXED)


def test_gates_follow_the_pools(mixed: tuple) -> None:
    p, _ = mixed
    values = p.releases["nvidia-dra-driver"].values
    assert values["featureGates"] == {"TimeSlicingSettings": True, "DynamicMIG": True}  # H100 only: dynamic
    assert values["resources"]["computeDomains"] == {"enabled": True}
    names = {c.name for c in p.device_classes}
    assert {"compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com"} <= names


def test_plugin_mig_strategy_and_bottlerocket_exclusion(mixed: tuple) -> None:
    p, _ = mixed
    values = p.releases["nvidia-device-plugin"].values
    assert values["migStrategy"] == "mixed" and values["mofedEnabled"] is False
    assert p.releases["nvidia-device-plugin"].version == "0.19.3"  # chartVersions override
    assert p.releases["nvidia-device-plugin"].pools == ("al-plugin-mig",)
    expr = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert expr["nodeSelectorTerms"] == [{"matchExpressions": [
        {"key": "eks-devices.io/pool", "operator": "NotIn", "values": ["br-plugin"]}]}]


def test_extra_class_and_claim_namespace_are_created(mixed: tuple) -> None:
    _, rec = mixed
    (extra,) = rec.of_type(DEVICE_CLASS)
    assert extra.inputs["metadata"]["name"] == "h100.gpu.eks-devices.io"
    assert "productName == 'NVIDIA H100 80GB HBM3'" in extra.inputs["spec"]["selectors"][0]["cel"]["expression"]
    assert "extendedResourceName" not in extra.inputs["spec"]
    (claim,) = rec.of_type(CLAIM)
    assert claim.inputs["metadata"] == {"name": "shared-shared-gpu", "namespace": "inference",
                                        "labels": {"app.kubernetes.io/managed-by": "eks-devices",
                                                   "eks-devices.io/pool": "shared"}}
    namespaces = {r.inputs["metadata"]["name"]: r.urn for r in rec.of_type(NAMESPACE)}
    assert set(namespaces) == {"nvidia", "inference"}
    # the claim waits for its namespace only: gpu.nvidia.com is the chart's class here, and a claim
    # may exist before the driver that will allocate it
    assert claim.depends_on == [namespaces["inference"]]
    for r in rec.of_type(RELEASE):
        assert r.inputs["values"].get("image", {}).get("repository", "eu-west-1").find("us-west-2") == -1


def test_every_release_goes_through_the_given_provider(mixed: tuple) -> None:
    _, rec = mixed
    providers = {r.provider.rpartition("::")[0] for r in rec.of_type(RELEASE)}
    assert len(rec.of_type(RELEASE)) == 3 and len(providers) == 1 and providers.pop().endswith("::k8s")


# --- overrides are merged last and re-checked ---------------------------------------------------

def override(stack: str, key: str, values: dict[str, Any]) -> dict[str, Any]:
    """A shipped stack whose helmValues are `{key: values}` only."""
    cfg = stacks.shipped(stack)
    cfg["eks-devices:helmValues"] = {key: values}
    return cfg


def test_harmless_override_is_merged_last() -> None:
    p = plan.build(parse(override("prod", "nvidia-dra-driver", {"logVerbosity": "6",
                                                                "kubeletPlugin": {"priorityClassName": "x"}})))
    values = p.releases["nvidia-dra-driver"].values
    assert values["logVerbosity"] == "6" and values["kubeletPlugin"]["priorityClassName"] == "x"
    assert values["kubeletPlugin"]["nodeSelector"] == {"eks-devices.io/device-manager-nvidia": "dra"}
    assert p.releases["nvidia-dra-driver"].toolkit_values["kubeletPlugin"] == {
        "nodeSelector": {"eks-devices.io/device-manager-nvidia": "dra"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    assert not p.errors


@pytest.mark.parametrize(("key", "values"), [
    ("nvidia-device-plugin", {"nodeSelector": None}),
    ("nvidia-device-plugin", {"nodeSelector": {"eks-devices.io/device-manager-nvidia": None}}),
    ("nvidia-dra-driver", {"kubeletPlugin": {"nodeSelector": None}}),
    ("aws-dranet", {"nodeSelector": {"eks-devices.io/device-manager-efa": None, "team": "a"}}),
    ("neuron-dra-driver", {"draDriver": {"nodeSelector": None}}),
])
def test_override_removing_a_node_selector_is_an_error(key: str, values: dict[str, Any]) -> None:
    p = plan.build(parse(override("prod", key, values)))
    errors = [f for f in p.errors if f.slug == "one-manager-per-node"]
    assert errors and all(f.path == f"helmValues.{key}" for f in errors), p.findings


def test_override_error_blocks_the_program_before_any_resource() -> None:
    cfg = override("staging", "nvidia-device-plugin", {"nodeSelector": None})
    registered: list[str] = []

    def program() -> None:
        p = plan_for_stack()
        registered.append("planned")
        DeviceSoftware("devices", DeviceSoftwareArgs(plan=p, k8s_provider=k8s.Provider("k8s", kubeconfig="{}")))

    with pytest.raises(PlanRejected, match="one-manager-per-node"):
        engine.run(program, cfg, stack="staging")
    assert registered == []


def test_render_manifests_match_the_component(shipped: dict) -> None:
    p, rec = shipped["dev"]
    rendered = {(m["kind"], m["metadata"]["name"]) for m in device_manifests.manifests(p)}
    created = {(r.inputs["kind"], r.inputs["metadata"]["name"]) for r in rec.of_type(DEVICE_CLASS) + rec.of_type(CLAIM)}
    assert rendered == created


def test_a_stack_without_dra_objects_loads_no_resource_k8s_io_module() -> None:
    """The SDK evaluates a component class's annotations at its registration; DeviceSoftware's types
    live in `__init__` so that a stack with no DeviceClass or claim never loads
    `pulumi_kubernetes.resource.v1` (~40 ms and 3 MiB a preview). Run in a fresh interpreter: this
    one has loaded it already."""
    script = (
        "import sys\nimport pulumi_kubernetes as k8s\nfrom support import engine, stacks\n"
        "from eks_devices.device_software import DeviceSoftware, DeviceSoftwareArgs\n"
        "def program():\n"
        "    DeviceSoftware('devices', DeviceSoftwareArgs(plan=stacks.shipped_plan('staging'),\n"
        "                   k8s_provider=k8s.Provider('k8s', kubeconfig='{}')))\n"
        "rec = engine.run(program, stacks.shipped('staging'), stack='staging')\n"
        f"print(len(rec.of_type({RELEASE!r})), len(rec.of_type({DEVICE_CLASS!r})) + len(rec.of_type({CLAIM!r})),\n"
        "      'pulumi_kubernetes.resource.v1' in sys.modules)")
    releases, dra_objects, loaded = fresh(script).stdout.split()
    assert int(releases) > 0 and dra_objects == "0"  # the device software ran, without DRA objects
    assert loaded == "False"
