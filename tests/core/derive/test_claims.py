"""Claim builders, the `eks-devices:claims` config, the simulated ResourceSlices and the
ClaimTemplates component."""

from __future__ import annotations

import kubernetes_validate
import pulumi_kubernetes as k8s
import pytest

from eks_devices.claims import ClaimTemplates, ClaimTemplatesArgs
from eks_devices.core import cel
from eks_devices.core import planner as planning
from eks_devices.core.config.stack import ConfigError, parse
from eks_devices.core.derive import claims
from eks_devices.core.knowledge import devices
from eks_devices.core.knowledge.device_classes import (
    CD_CHANNEL_CEL,
    CD_DAEMON_CEL,
    EFA_CEL,
    GPU_CEL,
    MIG_CEL,
    NEURON_CEL,
    VFIO_CEL,
)
from eks_devices.core.names import CLAIM_TEMPLATES_TYPE as TYPE_TOKEN
from eks_devices.program import plan_for_stack
from support import engine, stacks

VERSIONS = ("1.34", "1.35", "1.36", "1.37")
DRA = "eks-devices.io/device-manager-"

BUILDERS = {
    "one-gpu": claims.gpu_claim("one-gpu"),
    "h100s": claims.gpu_claim("h100s", 4, model="H100", min_memory_gib=79),
    "shared-gpu": claims.gpu_claim("shared-gpu", shared=True),
    "time-sliced": claims.time_sliced_gpu_claim("time-sliced", "Long"),
    "mig": claims.mig_claim("mig", "1g.5gb"),
    "efa": claims.efa_claim("efa", 2),
    "aligned-gpu-efa": claims.gpu_efa_aligned_claim("aligned-gpu-efa", 1, 1),
    "aligned-node": claims.gpu_efa_aligned_claim("aligned-node", 8, 32, model="H100"),
    "aligned-all-efa": claims.gpu_efa_aligned_claim("aligned-all-efa", 1, "all"),
    "neurons-lnc": claims.neuron_claim("neurons-lnc", "all", logical_neuron_core=1, instance_type="trn2.48xlarge"),
    "aligned-neuron-efa": claims.neuron_efa_aligned_claim("aligned-neuron-efa", 4, 4),
    "first-available": claims.build("first-available", [claims.first_available("gpu", [
        claims.exact("big", "gpu.nvidia.com", 1, claims.gpu_selectors("H200")),
        claims.exact("small", "gpu.nvidia.com", 2)])]),
}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("key", sorted(BUILDERS))
def test_builders_validate_against_kubernetes_schemas(key: str, version: str) -> None:
    assert kubernetes_validate.validate(BUILDERS[key].manifest, version, strict=True) == version


def test_schema_validation_is_not_vacuous() -> None:
    broken = claims.gpu_claim("x").manifest
    broken["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = "one"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.34", strict=True)
    unknown = claims.gpu_claim("x").manifest
    unknown["spec"]["spec"]["devices"]["requests"][0]["exactly"]["gpuCount"] = 1
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(unknown, "1.37", strict=True)


def test_every_builder_and_device_class_expression_compiles() -> None:
    expressions = [GPU_CEL, MIG_CEL, VFIO_CEL, CD_DAEMON_CEL, CD_CHANNEL_CEL, EFA_CEL, NEURON_CEL]
    for built in BUILDERS.values():
        for request in built.devices["requests"]:
            for body in [request.get("exactly"), *request.get("firstAvailable", [])]:
                if body:
                    expressions += [s["cel"]["expression"] for s in body.get("selectors", [])]
    assert len(expressions) > len(BUILDERS)
    for expression in expressions:
        cel.compile_expression(expression)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("itype", ["p5.48xlarge", "p5en.48xlarge", "p4d.24xlarge", "g6e.48xlarge",
                                   "trn1.32xlarge", "trn2.48xlarge"])
def test_resource_slices_validate(itype: str, version: str) -> None:
    kwargs = {"compute_domains": True} if itype.startswith("p5.") else {}
    slices = devices.resource_slices(itype, **kwargs)
    assert {s["spec"]["driver"] for s in slices} >= {"dra.net"}
    for s in slices:
        kubernetes_validate.validate(s, version, strict=True)


@pytest.mark.parametrize("version", VERSIONS)
def test_mig_and_shared_gpu_slices_validate(version: str) -> None:
    mig = devices.resource_slices("p4d.24xlarge", mig_profile="1g.5gb")
    assert len(mig[0]["spec"]["devices"]) == 56
    for s in mig:
        kubernetes_validate.validate(s, version, strict=True)
    shares = devices.resource_slices("g6e.xlarge", gpu_shares=4)
    kubernetes_validate.validate(shares[0], version, strict=True)
    assert shares[0]["spec"]["devices"][0]["allowMultipleAllocations"] is True


def test_a_shared_gpu_gives_each_claim_one_share_and_no_memory() -> None:
    """Without request policies the scheduler consumes a device's whole capacity per claim (one claim
    per GPU, which the real scheduler showed); the driver's policies make it one share each."""
    [gpu] = devices.resource_slices("g6e.xlarge", ("nvidia",), gpu_shares=4)[0]["spec"]["devices"]
    assert gpu["capacity"]["shares"] == {"value": "4", "requestPolicy": {
        "default": "1", "validRange": {"min": "1", "max": "4", "step": "1"}}}
    assert gpu["capacity"]["memory"]["requestPolicy"]["default"] == "0"
    [whole] = devices.resource_slices("g6e.xlarge", ("nvidia",))[0]["spec"]["devices"]
    assert "requestPolicy" not in whole["capacity"]["memory"]


def test_aligned_gpu_efa_shape_matches_facts() -> None:
    devices_spec = BUILDERS["aligned-gpu-efa"].devices
    assert devices_spec["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}},
        {"name": "efa", "exactly": {"deviceClassName": "efa.networking.k8s.aws", "allocationMode": "ExactCount",
                                    "count": 1}}]
    assert devices_spec["constraints"] == [
        {"requests": ["gpu", "efa"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]


def test_aligned_units_split_gpus_and_efas_per_pcie_root() -> None:
    node = BUILDERS["aligned-node"].devices
    assert len(node["requests"]) == 16 and len(node["constraints"]) == 8
    assert node["constraints"][3] == {"requests": ["gpu-3", "efa-3"], "matchAttribute": devices.PCIE_ROOT}
    assert node["requests"][1]["exactly"]["count"] == 4
    p4d = claims.gpu_efa_aligned_claim("p4d", 8, 4).devices
    assert [r["exactly"]["count"] for r in p4d["requests"]] == [2, 1] * 4
    every = BUILDERS["aligned-all-efa"].devices
    assert every["requests"][1]["exactly"] == {"deviceClassName": "efa.networking.k8s.aws", "allocationMode": "All"}
    with pytest.raises(ValueError, match="evenly"):
        claims.gpu_efa_aligned_claim("x", 3, 2)


def test_neuron_shapes() -> None:
    aligned = BUILDERS["aligned-neuron-efa"].devices
    assert aligned["constraints"] == [{"requests": ["neurons", "efa"],
                                       "matchAttribute": "resource.aws.com/devicegroup4_id"}]
    lnc = BUILDERS["neurons-lnc"].devices
    assert lnc["requests"][0]["exactly"]["allocationMode"] == "All"
    assert lnc["config"][0]["opaque"] == {"driver": "neuron.aws.com", "parameters": {
        "apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": 1}}


def test_gpu_sharing_shapes() -> None:
    sliced = BUILDERS["time-sliced"]
    assert sliced.kind == "ResourceClaim" and sliced.shared
    assert sliced.devices["config"][0]["opaque"]["parameters"] == {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
        "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}}
    mig = BUILDERS["mig"].devices
    assert mig["requests"][0]["exactly"]["deviceClassName"] == "mig.nvidia.com"
    assert mig["constraints"] == [{"matchAttribute": "gpu.nvidia.com/parentUUID"}]


@pytest.mark.parametrize(("key", "selector"), [
    ("one-gpu", {f"{DRA}nvidia": "dra"}),
    ("aligned-gpu-efa", {f"{DRA}nvidia": "dra", f"{DRA}efa": "dra"}),
    ("aligned-neuron-efa", {f"{DRA}efa": "dra", f"{DRA}neuron": "dra"}),
    ("efa", {f"{DRA}efa": "dra"}),
])
def test_node_selector_keeps_pods_on_dra_pools(key: str, selector: dict[str, str]) -> None:
    assert BUILDERS[key].node_selector == selector


def test_pod_claim_references() -> None:
    assert BUILDERS["one-gpu"].pod_claim() == {"name": "one-gpu", "resourceClaimTemplateName": "one-gpu"}
    assert BUILDERS["shared-gpu"].pod_claim("gpu") == {"name": "gpu", "resourceClaimName": "shared-gpu"}


def test_compute_domain_channel_object() -> None:
    built = claims.compute_domain_channel("cd", "All", namespace="train")
    assert built.manifest["kind"] == "ComputeDomain"
    assert built.manifest["spec"] == {"channel": {"resourceClaimTemplate": {"name": "cd"}, "allocationMode": "All"}}
    assert built.devices["requests"][0]["exactly"]["deviceClassName"] == "compute-domain-default-channel.nvidia.com"
    assert built.pod_claim() == {"name": "cd", "resourceClaimTemplateName": "cd"}


@pytest.mark.parametrize("mode", ["Single", "All"])
def test_compute_domain_channel_template_requests_one_channel(mode: str) -> None:
    """The controller's template asks the scheduler for one default channel in both modes; `All`
    travels in its opaque ComputeDomainChannelConfig, not as the request's allocationMode."""
    request = claims.compute_domain_channel("cd", mode).devices["requests"][0]["exactly"]
    assert request["allocationMode"] == "ExactCount" and request["count"] == 1


def test_extended_resources() -> None:
    assert claims.extended_resources({"nvidia.com/gpu": 2}) == {
        "limits": {"nvidia.com/gpu": "2"}, "requests": {"nvidia.com/gpu": "2"}}


# --- configuration ----------------------------------------------------------------------------

POOLS = {"p5": {"replicas": 1, "instanceTypes": ["p5.48xlarge"]},
         "trn": {"replicas": 1, "instanceTypes": ["trn2.48xlarge"]}}


def with_claims(claims_config: dict) -> dict:
    return stacks.config("managed-node-groups", pools=POOLS, name="c", claims=claims_config)


def test_config_short_shapes_map_to_builders() -> None:
    spec = parse(with_claims({
        "aligned": {"pools": ["p5"], "gpus": {"count": 8, "model": "H100"}, "efa": {"count": 32}, "alignWith": "gpu"},
        "shared": {"pools": ["p5"], "kind": "claim", "gpus": {"count": 1}, "timeSlicing": {"interval": "Short"}},
        "trn": {"pools": ["trn"], "neurons": {"all": True}, "efa": {"all": True}, "alignWith": "neuron",
                "logicalNeuronCore": 2},
        "cd": {"pools": ["p5"], "computeDomainChannel": {"allocationMode": "Single"}},
        "raw": {"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                                          "count": 2}}],
                "constraints": [{"matchAttribute": "resource.kubernetes.io/pcieRoot"}]},
        "plugin": {"pools": ["p5"], "kind": "extended-resource", "extendedResources": {"nvidia.com/gpu": 1}},
    }))
    built = {name: claims.from_config(name, c) for name, c in spec.claims.items()}
    assert built["aligned"].devices == claims.gpu_efa_aligned_claim("aligned", 8, 32, model="H100").devices
    assert built["shared"].manifest == claims.gpu_claim("shared", 1, time_slicing="Short", shared=True).manifest
    assert built["trn"].devices == claims.neuron_efa_aligned_claim("trn", "all", "all", logical_neuron_core=2).devices
    assert built["cd"].kind == "ComputeDomain"
    assert built["raw"].devices["constraints"] == [{"matchAttribute": devices.PCIE_ROOT}]
    assert built["raw"].devices["requests"][0]["exactly"]["allocationMode"] == "ExactCount"
    assert built["plugin"] is None
    for name in ("aligned", "shared", "trn", "raw"):
        kubernetes_validate.validate(built[name].manifest, "1.36", strict=True)


def _empty_lists(value: object, at: str = "") -> list[str]:
    """Where `value` holds an empty list, the opaque configs' `parameters` (the driver's own) left out."""
    if isinstance(value, dict):
        return [p for k, v in value.items() if k != "parameters" for p in _empty_lists(v, f"{at}.{k}")]
    if isinstance(value, list):
        return [at] if not value else [p for i, v in enumerate(value) for p in _empty_lists(v, f"{at}[{i}]")]
    return []


def test_no_claim_sends_an_empty_list_the_api_server_does_not_store() -> None:
    """The API server stores an empty `selectors` or `requests` of a claim as absent, and pulumi-kubernetes
    diffs the next program against the live object, so an empty list sent would replace the claim (its spec
    is immutable) on every `pulumi up` (tests/e2e/test_pulumi_refresh.py, against the real engine). Raw
    requests as a team writes them (no selectors, constraints and config for all requests, firstAvailable)
    and the builders leave them out; an opaque config's parameters stay as given."""
    spec = parse(with_claims({
        "raw": {"pools": ["p5"], "requests": [
            {"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
            {"name": "b", "firstAvailable": [{"name": "two", "deviceClassName": "gpu.nvidia.com", "count": 2},
                                             {"name": "one", "deviceClassName": "gpu.nvidia.com"}]}],
                "constraints": [{"matchAttribute": "gpu.nvidia.com/productName"}],
                "config": [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {
                    "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "list": []}}}]}}))
    raw = claims.from_config("raw", spec.claims["raw"])
    assert raw is not None
    assert _empty_lists(raw.manifest) == []
    assert raw.devices["config"][0]["opaque"]["parameters"]["list"] == []
    assert raw.devices["constraints"] == [{"matchAttribute": "gpu.nvidia.com/productName"}]
    assert [alt["name"] for alt in raw.devices["requests"][1]["firstAvailable"]] == ["two", "one"]
    for name, built in BUILDERS.items():
        assert _empty_lists(built.manifest) == [], name
    kubernetes_validate.validate(raw.manifest, "1.36", strict=True)


@pytest.mark.parametrize(("entry", "path", "accepted"), [
    ({"pools": ["nope"], "gpus": {}}, "claims.x.pools.0", "a node pool of this stack"),
    ({"pools": ["p5"], "efa": {"count": 2, "all": True}}, "claims.x.efa", "either count: N or all: true"),
    ({"pools": ["p5"], "gpus": {"count": 1}, "alignWith": "gpu"}, "claims.x.alignWith", "gpus and efa"),
    ({"pools": ["p5"], "gpus": {"count": 3}, "efa": {"count": 4}, "alignWith": "gpu"}, "claims.x.efa.count",
     "a multiple or divisor"),
    ({"pools": ["trn"], "neurons": {"count": 3}, "efa": {"count": 3}, "alignWith": "neuron"},
     "claims.x.neurons.count", "1, 4, 8 or 16"),
    ({"pools": ["p5"]}, "claims.x", "gpus, mig, efa"),
    ({"pools": ["p5"], "gpus": {}, "mig": {"profile": "1g.10gb"}}, "claims.x.mig", "either whole GPUs"),
    ({"pools": ["p5"], "timeSlicing": {}, "efa": {"count": 1}}, "claims.x.timeSlicing", "together with gpus"),
    ({"pools": ["p5"], "gpus": {"minMemoryGib": 8}}, "claims.x.gpus.minMemoryGib", "did you mean 'minMemoryGiB'?"),
    ({"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": "device.driver =="}}]}}]},
     "claims.x.requests.0.exactly.selectors.0.cel.expression", "a CEL expression that compiles"),
    ({"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
      "constraints": [{"requests": ["efa"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]},
     "claims.x.constraints.0.requests.0", "the name of a request"),
    ({"pools": ["p5"], "requests": [{"name": "gpu"}]}, "claims.x.requests.0", "exactly one of them"),
    # the API server's rules the schema does not carry: attribute names, duplicate references, sizes
    ({"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
      "constraints": [{"matchAttribute": "resource.kubernetes.io/pcie-root"}]},
     "claims.x.constraints.0", "fully qualified attribute"),
    ({"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
      "constraints": [{"matchAttribute": "gpu.nvidia.com/" + "a" * 33}]},
     "claims.x.constraints.0", "fully qualified attribute"),
    ({"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
      "constraints": [{"matchAttribute": "a" * 64 + "/pcieRoot"}]},
     "claims.x.constraints.0", "fully qualified attribute"),
    ({"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                                    {"name": "efa", "exactly": {"deviceClassName": "efa.networking.k8s.aws"}}],
      "constraints": [{"requests": ["gpu", "efa", "gpu"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]},
     "claims.x.constraints.0.requests.2", "named once"),
    ({"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
      "config": [{"requests": ["gpu", "gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {}}}]},
     "claims.x.config.0.requests.1", "named once"),
    ({"pools": ["p5"], "requests": [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.nvidia.com"}, {"name": "big", "deviceClassName": "gpu.nvidia.com"}]}]},
     "claims.x.requests.0.firstAvailable.1.name", "used once in its request"),
    ({"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
      "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {"x": "y" * 10240}}}]},
     "claims.x.config.0.opaque.parameters", "at most 10240 bytes"),
    ({"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
      "config": [{"requests": ["gpu"], "opaque": {"driver": "a" * 60 + ".com", "parameters": {}}}]},
     "claims.x.config.0.opaque.driver", "at most 63"),
    ({"pools": ["p5"], "kind": "extended-resource", "extendedResources": {"example.com/fpga": 1}},
     "claims.x.extendedResources.example.com/fpga", "nvidia.com/gpu"),
    ({"pools": ["p5"], "kind": "claim", "computeDomainChannel": {}}, "claims.x.kind", "'template'"),
])
def test_config_problems_name_the_path(entry: dict, path: str, accepted: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(with_claims({"x": entry}))
    matching = [p for p in caught.value.problems if p.path == path]
    assert matching, [str(p) for p in caught.value.problems]
    assert accepted in matching[0].accepted


def test_claims_key_is_allowed_and_optional() -> None:
    assert parse(stacks.config("managed-node-groups", pools=POOLS, name="c")).claims == {}
    assert set(parse(with_claims({"g": {"pools": ["p5"], "gpus": {}}})).claims) == {"g"}


# --- the component ----------------------------------------------------------------------------

COMPONENTS: list[ClaimTemplates] = []


@pytest.fixture(scope="module")
def prod_recording() -> engine.Recording:
    config = stacks.shipped("prod", overrides={"eks-devices:claims": {
        "shared-slice": {"pools": ["p5-train"], "kind": "claim", "gpus": {"count": 1},
                         "timeSlicing": {"interval": "Long"}},
        "plugin-gpu": {"pools": ["inference"], "kind": "extended-resource", "extendedResources": {"nvidia.com/gpu": 1}},
    }})

    def program() -> None:
        plan = plan_for_stack()
        provider = k8s.Provider("k8s", kubeconfig="{}")
        anchor = k8s.core.v1.ConfigMap("device-software", data={}, opts=None)
        COMPONENTS.append(ClaimTemplates("claims", ClaimTemplatesArgs(plan=plan, k8s_provider=provider, depends_on=[anchor])))

    return engine.run(program, config, stack="prod")


def test_component_creates_one_object_per_claim(prod_recording: engine.Recording) -> None:
    component = prod_recording.named("claims")
    assert component.type == TYPE_TOKEN
    templates = prod_recording.of_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    shared = prod_recording.of_type("kubernetes:resource.k8s.io/v1:ResourceClaim")
    assert sorted(r.name for r in templates) == ["claims-p5-half-gpu-efa", "claims-trn-quarter-neuron-efa"]
    assert [r.name for r in shared] == ["claims-shared-slice"]  # extended-resource entries create nothing
    for r in [*templates, *shared]:
        assert r.parent == component.urn
        assert "k8s" in r.provider
        assert any("device-software" in d for d in r.depends_on)
        # the spec is immutable in the API: a changed claim is replaced, the old one first (same name)
        assert r.replace_on_changes == ["spec"] and r.delete_before_replace


def test_component_inputs_are_the_built_manifests(prod_recording: engine.Recording) -> None:
    recorded = prod_recording.named("claims-trn-quarter-neuron-efa").inputs
    expected = claims.neuron_efa_aligned_claim("trn-quarter-neuron-efa", 4, 2, logical_neuron_core=1).manifest

    assert engine.ints(recorded) == expected  # the engine carries numbers as floats


def test_component_summarises_how_pods_use_the_claims(prod_recording: engine.Recording) -> None:
    summary = COMPONENTS[0].claims
    assert summary["shared-slice"]["podClaim"] == {"name": "shared-slice", "resourceClaimName": "shared-slice"}
    assert summary["p5-half-gpu-efa"]["nodeSelector"] == {f"{DRA}nvidia": "dra", f"{DRA}efa": "dra"}
    assert "plugin-gpu" not in summary


@pytest.mark.parametrize("entry", [
    {"pools": ["p5"], "kind": "claim", "gpus": {"count": 1}, "timeSlicing": {"interval": "Long"}},
    {"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
     "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {
         "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
         "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Short"}}}}}]},
])
def test_a_time_slicing_claim_turns_on_the_driver_gate(entry: dict) -> None:
    """The NVIDIA driver refuses a TimeSlicing GpuConfig unless TimeSlicingSettings is on, also
    when no pool declares gpuSharing: the claim's config alone needs the gate."""
    values = planning.build(parse(with_claims({"x": entry}))).releases["nvidia-dra-driver"].values
    assert values["featureGates"] == {"TimeSlicingSettings": True}


def test_claims_without_sharing_leave_the_driver_gates_alone() -> None:
    built = planning.build(parse(with_claims({"x": {"pools": ["p5"], "gpus": {"count": 1}},
                                              "n": {"pools": ["trn"], "neurons": {"count": 1}}})))
    assert "featureGates" not in built.releases["nvidia-dra-driver"].values


def _raw_config(driver: str, parameters: dict) -> dict:
    return {"pools": ["p5"], "requests": [{"name": "dev", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
            "config": [{"requests": ["dev"], "opaque": {"driver": driver, "parameters": parameters}}]}


GPU_CONFIG = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}


@pytest.mark.parametrize(("driver", "parameters", "field", "accepted"), [
    ("gpu.nvidia.com", {**GPU_CONFIG, "apiVersion": "resource.nvidia.com/v1"}, "apiVersion", "v1beta1"),
    ("gpu.nvidia.com", {**GPU_CONFIG, "kind": "NeuronConfig"}, "kind", "GpuConfig"),
    ("compute-domain.nvidia.com", GPU_CONFIG, "kind", "ComputeDomainChannelConfig"),
    ("gpu.nvidia.com", {**GPU_CONFIG, "sharing": {"strategy": "Timeslicing"}}, "sharing.strategy", "TimeSlicing"),
    ("gpu.nvidia.com", {**GPU_CONFIG, "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "10ms"}}},
     "sharing.timeSlicingConfig.interval", "Long"),
    ("neuron.aws.com", {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": 4},
     "logicalNeuronCore", "1 or 2"),
    ("neuron.aws.com", {"apiVersion": "resource.neuron.aws.com/v1alphav1", "kind": "NeuronConfig"},
     "apiVersion", "neuron.aws.com/v1"),
])
def test_known_drivers_opaque_configs_are_checked(driver: str, parameters: dict, field: str, accepted: str) -> None:
    """What the NVIDIA (v0.4.1) and Neuron drivers decode; they refuse anything else only when the
    claim is prepared on the node, after the Pod was scheduled."""
    with pytest.raises(ConfigError) as caught:
        parse(with_claims({"x": _raw_config(driver, parameters)}))
    matching = [p for p in caught.value.problems if p.path == f"claims.x.config.0.opaque.parameters.{field}"]
    assert matching and accepted in matching[0].accepted, [str(p) for p in caught.value.problems]


def test_valid_opaque_configs_and_unknown_drivers_pass() -> None:
    ok = {**GPU_CONFIG, "sharing": {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 50}}}
    spec = parse(with_claims({"x": _raw_config("gpu.nvidia.com", ok), "y": _raw_config("example.com", {"any": 1})}))
    assert set(spec.claims) == {"x", "y"}
    built = {name: claims.from_config(name, c) for name, c in spec.claims.items()}
    opaque = {name: b.devices["config"][0]["opaque"] for name, b in built.items()}
    assert opaque == {"x": {"driver": "gpu.nvidia.com", "parameters": ok},  # carried to the claim unchanged
                      "y": {"driver": "example.com", "parameters": {"any": 1}}}


LISTS_SELECTOR = {"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {
    "deviceClassName": "gpu.nvidia.com",
    "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName.split(' ').sort()[0] != ''"}}]}}]}


def test_a_selector_using_the_lists_extension_is_refused_on_a_cluster_whose_api_server_lacks_it() -> None:
    """A 1.34 API server checks new selectors against 1.33's CEL environment, which has no `sort` (as the real
    kube-apiserver run with --emulated-version=1.34 refuses it; the e2e tier's one control plane runs 1.36, so
    this is not an e2e case); a 1.35 one accepts it."""
    old = stacks.merge(with_claims({"x": LISTS_SELECTOR}), {"eks-devices:cluster": {"version": "1.34"}})
    with pytest.raises(ConfigError) as caught:
        parse(old)
    [problem] = [p for p in caught.value.problems if p.path.startswith("claims.")]
    assert problem.path == "claims.x.requests.0.exactly.selectors.0.cel.expression"
    assert "lists extension (sort)" in problem.accepted and "accepted from 1.35" in problem.accepted
    newer = stacks.merge(with_claims({"x": LISTS_SELECTOR}), {"eks-devices:cluster": {"version": "1.35"}})
    assert set(parse(newer).claims) == {"x"}


def test_a_device_class_expression_using_the_lists_extension_is_refused_on_1_34_as_a_claims_is() -> None:
    expression = LISTS_SELECTOR["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"]
    classes = {"eks-devices:deviceClasses": {"sorted-gpu": {"base": "gpu.nvidia.com", "expression": expression}}}
    old = stacks.merge(with_claims({}), {"eks-devices:cluster": {"version": "1.34"}, **classes})
    with pytest.raises(ConfigError) as caught:
        parse(old)
    [problem] = caught.value.problems
    assert problem.path == "deviceClasses.sorted-gpu.expression"
    assert "lists extension (sort)" in problem.accepted and "accepted from 1.35" in problem.accepted
    newer = stacks.merge(with_claims({}), {"eks-devices:cluster": {"version": "1.35"}, **classes})
    assert set(parse(newer).device_classes) == {"sorted-gpu"}


TWO_VARIABLE_SELECTOR = {"pools": ["p5"], "requests": [{"name": "gpu", "exactly": {
    "deviceClassName": "gpu.nvidia.com",
    "selectors": [{"cel": {"expression": "device.attributes.exists(domain, names, 'productName' in names)"}}]}}]}


def test_a_two_variable_comprehension_is_refused_on_1_32_and_accepted_from_1_33() -> None:
    """k8s.io/apiserver base.go introduces cel-go's two-variable comprehensions at 1.32, so a 1.32 API server,
    checking new selectors against 1.31's environment, refuses them (written from the source: the e2e tier's
    control plane runs 1.36, which accepts them)."""
    old = stacks.merge(with_claims({"x": TWO_VARIABLE_SELECTOR}), {"eks-devices:cluster": {"version": "1.32"}})
    with pytest.raises(ConfigError) as caught:
        parse(old)
    [problem] = [p for p in caught.value.problems if p.path.startswith("claims.")]
    assert problem.path == "claims.x.requests.0.exactly.selectors.0.cel.expression"
    assert "two-variable comprehensions (two-variable exists)" in problem.accepted
    assert "accepted from 1.33" in problem.accepted
    newer = stacks.merge(with_claims({"x": TWO_VARIABLE_SELECTOR}), {"eks-devices:cluster": {"version": "1.33"}})
    assert set(parse(newer).claims) == {"x"}
