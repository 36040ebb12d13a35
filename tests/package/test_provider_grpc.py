"""The component provider as the engine drives it: started like the Python language host starts a
plugin, asked for its schema and to construct `eks-devices:index:Platform` over gRPC against an
in-process engine and resource monitor (the offline mock engine), for every shipped stack; bad
arguments come back as INVALID_ARGUMENT with one property error each and nothing registered."""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import pytest
import yaml
from google.protobuf import json_format

from eks_devices.offline.engine import Recording
from eks_devices.platform import PROGRAM_NAME
from support import engine as mock_engine
from support import provider as harness
from support.stacks import ROOT

STACKS = ("dev", "staging", "prod")


def stack_config(stack: str) -> dict:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]


def registrations(rec: Recording) -> list[dict]:
    """What the engine is told about each resource; without aliases: the project's program carries its
    stacks' names from before stable identities, a package user's program starts with none."""
    return mock_engine.registrations(rec, aliases=None)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[harness.Engine, object]]:
    """One provider process for the module (Construct after Construct, as the engine does)."""
    with harness.engine() as eng, harness.provider(eng.address, tmp_path_factory.mktemp("program")) as stub:
        yield eng, stub


@pytest.fixture(scope="module")
def constructed(served) -> dict:
    eng, stub = served
    out = {}
    for stack in STACKS:
        config = stack_config(stack)
        recording = eng.use(stack, config.get("aws:region", "us-west-2"))
        response = harness.construct(stub, eng, name=PROGRAM_NAME,
                                     inputs=harness.stack_inputs(config), stack=stack, config=config)
        out[stack] = (response, recording)
    return out


def test_get_schema_answers_the_committed_schema(served) -> None:
    _, stub = served
    schema = stub.GetSchema(harness.provider_pb2.GetSchemaRequest(version=0), timeout=60).schema
    assert json.loads(schema) == json.loads((ROOT / "components" / "schema.json").read_text())


@pytest.mark.parametrize("stack", STACKS)
def test_construct_registers_what_preview_shows(constructed: dict, stack: str) -> None:
    response, recording = constructed[stack]
    preview = mock_engine.main(stack_config(stack), stack=stack)
    assert len(recording.resources) > 20
    assert registrations(recording) == registrations(preview)
    platform = [r for r in recording.resources if r.type == "eks-devices:index:Platform"]
    assert [r.parent for r in platform] == [harness.stack_urn(stack)]
    assert response.urn == platform[0].urn


@pytest.mark.parametrize("stack", STACKS)
def test_construct_returns_the_outputs(constructed: dict, stack: str) -> None:
    response, recording = constructed[stack]
    state = mock_engine.offline.wire_inputs(response.state)
    config = stack_config(stack)
    name = config["eks-devices:cluster"]["name"]
    assert state["clusterName"] == name
    assert json.loads(state["kubeconfig"])["clusters"][0]["cluster"]["server"].startswith(f"https://{name}.")
    assert state["vpcId"].startswith("vpc-")
    assert len(state["privateSubnetIds"]) == len(state["publicSubnetIds"]) >= 2
    assert state["nodeRoleArn"].startswith("arn:aws:iam::")
    provider = [r for r in recording.resources if r.type == "pulumi:providers:kubernetes"
                and r.parent.endswith(f"eks-devices:index:Cluster::{PROGRAM_NAME}")]
    assert [state["kubernetesProvider"]] == [r.urn for r in provider]
    plan = state["devicePlan"]
    assert set(plan["pools"]) == set(config["eks-devices:nodePools"])
    for pool in plan["pools"].values():
        assert {m["manager"] for m in pool["managers"].values()} <= {"dra", "device-plugin", "none", "inferred"}
        assert "instanceTypes" in pool
    # the kubeconfig is secret on the wire
    assert "kubeconfig" in str(response.state) and "1b47061264138c4ac30d75fd1eb44270" in json.dumps(
        json.loads(json_format.MessageToJson(response.state))["kubeconfig"])


def test_bad_arguments_are_property_errors_and_nothing_is_registered(served) -> None:
    eng, stub = served
    config = stack_config("staging")
    recording = eng.use("broken", "us-west-2")
    inputs = harness.stack_inputs(config)
    inputs["cluster"]["mode"] = "fargate"
    inputs["nodePools"]["trn-static"]["devices"] = {"neuron": "dra-please"}
    inputs["network"] = {"availabilityZoneCount": 9}
    with pytest.raises(grpc.RpcError) as caught:
        harness.construct(stub, eng, name="broken", inputs=inputs, stack="broken", config=config)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    errors = dict(harness.property_errors(caught.value))
    assert set(errors) == {"cluster.mode", "nodePools.trn-static.devices.neuron", "network.availabilityZoneCount"}
    assert "fargate" in errors["cluster.mode"] and "karpenter" in errors["cluster.mode"]
    assert recording.resources == []


def test_error_findings_are_property_errors(served) -> None:
    eng, stub = served
    config = stack_config("staging")
    recording = eng.use("findings", "us-west-2")
    inputs = harness.stack_inputs(config)
    inputs["nodePools"]["gpu-timeslice"]["devices"] = {"nvidia": "device-plugin", "neuron": "dra"}
    with pytest.raises(grpc.RpcError) as caught:
        harness.construct(stub, eng, name="findings", inputs=inputs, stack="findings", config=config)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    errors = harness.property_errors(caught.value)
    assert [(p, r.split(":")[0]) for p, r in errors] == [("nodePools.gpu-timeslice.devices.neuron",
                                                            "device-family-absent")]
    assert recording.resources == []


def test_warnings_reach_the_engine_log(served) -> None:
    eng, stub = served
    config = stack_config("dev")
    config["eks-devices:cluster"]["endpoint"] = {"publicAccessCidrs": ["0.0.0.0/0"]}
    recording = eng.use("dev", "us-west-2")
    harness.construct(stub, eng, name="open", inputs=harness.stack_inputs(config), stack="dev", config=config)
    assert recording.resources
    assert [m for _, m in eng.logs if m.startswith("public-endpoint-open at cluster.endpoint")]
