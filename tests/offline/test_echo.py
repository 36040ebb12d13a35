"""A plain registration answered without the SDK's round trip gives the program what the SDK's own mock
monitor gives it: the same URN, id and kept state, and a response that deserializes to the same
outputs, whatever the inputs and whatever the mocks make of them (so long as they leave their inputs
as given, as the toolkit's mocks do); anything else is left to the SDK."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any
from unittest import mock

import pulumi
import pytest
from google.protobuf import json_format, struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime.proto import callback_pb2, resource_pb2

from eks_devices.identity import STACK_TYPE
from eks_devices.offline import echo, engine
from eks_devices.testing import Mocks

SIG = rpc._special_sig_key
SECRET, RESOURCE = rpc._special_secret_sig, rpc._special_resource_sig


class Reshaping(pulumi.runtime.Mocks):
    """Mocks that keep some inputs, drop some, wrap some in new structures and add outputs of each kind."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        state = dict(args.inputs)
        for i, key in enumerate(sorted(state)):
            if i % 3 == 0:
                state[key] = {"was": [state[key], 1]}
            elif i % 3 == 1:
                state[key] = None
        state.update(added=[1, "two", {"three": 3.5}], flag=True, count=7, ratio=0.25, name="given")
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        return {}, []


def _request(inputs: dict[str, Any], **fields: Any) -> Any:
    struct = struct_pb2.Struct()
    json_format.ParseDict(inputs, struct)
    options = {"type": "aws:ec2/vpc:Vpc", "name": "main", "custom": True,
               "parent": "urn:pulumi:dev::eks-devices::pulumi:pulumi:Stack::eks-devices-dev", **fields}
    return resource_pb2.RegisterResourceRequest(object=struct, **options)


def _on_monitor_thread(work: Callable[[], Any]) -> Any:
    """As the engine calls the monitor: from a thread of the program's executor, not the test's own."""
    workers = engine._Workers(1)
    try:
        return workers.executor.submit(work).result()
    finally:
        workers.close()


def _both_answers(mocks: pulumi.runtime.Mocks, request: Any) -> tuple[Any, Any, Any, Any]:
    sdk, ours = pulumi_mocks.MockMonitor(mocks), pulumi_mocks.MockMonitor(mocks)
    return (_on_monitor_thread(lambda: sdk.RegisterResource(request)), sdk,
            _on_monitor_thread(lambda: echo.register(ours, request)), ours)


def _assert_same_answer(mocks: pulumi.runtime.Mocks, inputs: dict[str, Any]) -> None:
    request = _request(inputs)
    sdk_response, sdk, our_response, ours = _both_answers(mocks, request)
    assert (our_response.urn, our_response.id) == (sdk_response.urn, sdk_response.id)
    for keep_unknowns in (False, True):
        assert (rpc.deserialize_properties(our_response.object, keep_unknowns)
                == rpc.deserialize_properties(sdk_response.object, keep_unknowns))
    assert ours.resources == sdk.resources


JSON_SCALARS = (st.none() | st.booleans() | st.text(max_size=8)
                | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False))
JSON = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), JSON, max_size=8))
def test_a_plain_registration_is_answered_as_the_sdk_answers_it(inputs: dict[str, Any]) -> None:
    _assert_same_answer(Mocks("us-west-2"), inputs)
    _assert_same_answer(Reshaping(), inputs)


def test_the_outputs_the_mocks_pass_through_are_copied_from_the_request_as_it_came() -> None:
    inputs = {"cidrBlock": "10.0.0.0/16", "tags": {"team": "ml", "cleared": None}, "sizes": [1, None, 2.5]}
    request = _request(inputs)
    _, _, response, monitor = _both_answers(Mocks("us-west-2"), request)
    for key in inputs:
        assert response.object.fields[key] == request.object.fields[key]
    assert response.object["arn"].startswith("arn:aws:ec2:us-west-2:")  # what the mocks added, serialized
    assert monitor.resources[response.urn].state["cidrBlock"] == "10.0.0.0/16"


@pytest.mark.parametrize("value", [
    {SIG: SECRET, "value": "hunter2"},
    {"nested": [{SIG: RESOURCE, "urn": "urn:pulumi:dev::p::t::r", "id": "r-1"}]},
    rpc.UNKNOWN,
    [1, rpc.UNKNOWN],
], ids=["secret", "resource reference", "unknown", "nested unknown"])
def test_special_values_take_the_sdks_path(value: Any) -> None:
    monitor = pulumi_mocks.MockMonitor(Mocks("us-west-2"))
    assert echo.answers(monitor, _request({"plain": "yes"}))
    assert not echo.answers(monitor, _request({"plain": "yes", "special": value}))


def test_the_stack_and_transforms_take_the_sdks_path() -> None:
    monitor = pulumi_mocks.MockMonitor(Mocks("us-west-2"))
    assert not echo.answers(monitor, _request({}, type=STACK_TYPE, name="eks-devices-dev", parent=""))
    transform = callback_pb2.Callback(target="addr", token="t")
    assert not echo.answers(monitor, _request({"plain": "yes"}, transforms=[transform]))


class Tagging(Mocks):
    """A team's mocks that stamp a tag into the inputs they are given, and return them."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        args.inputs.setdefault("tags", {})["stamped"] = "yes"
        return "tagged-id", args.inputs


class Answering(Mocks):
    """A team's mocks that change only how calls are answered."""

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        return {}, []


def test_only_mocks_that_register_as_the_toolkits_do_skip_the_round_trip() -> None:
    request = _request({"tags": {"team": "ml"}})
    assert echo.answers(pulumi_mocks.MockMonitor(Answering()), request)
    assert not echo.answers(pulumi_mocks.MockMonitor(Tagging()), request)
    recording = engine.Recording()
    monitor = engine.RecordingMonitor(Tagging(), recording)
    response = _on_monitor_thread(lambda: monitor.RegisterResource(request))
    assert rpc.deserialize_properties(response.object)["tags"] == {"team": "ml", "stamped": "yes"}


KEYS = st.sampled_from(["name", "tags", "metadata", "spec", "vpcConfig", "autoMode", "subnetIds"]) | st.text(max_size=8)
TYPES = ["aws:ec2/vpc:Vpc", "aws:iam/role:Role", "aws:sqs/queue:Queue", "aws:ec2/launchTemplate:LaunchTemplate",
         "aws:eks/cluster:Cluster", "kubernetes:karpenter.sh/v1:NodePool"]


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(TYPES), st.dictionaries(KEYS, JSON, max_size=8))
def test_the_toolkits_mocks_leave_their_inputs_as_given(type_: str, inputs: dict[str, Any]) -> None:
    given_inputs = copy.deepcopy(inputs)
    Mocks("us-west-2").new_resource(pulumi.runtime.MockResourceArgs(type_, "r", inputs, custom=True))
    assert inputs == given_inputs


class ViaSdk(Mocks):
    """The toolkit's mocks, answered through the SDK's own round trip (a team's override of `new_resource`)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return super().new_resource(args)


def _program_sees(mocks: Mocks, type_: str, inputs: dict[str, Any], secret: list[str]) -> dict[str, Any]:
    """What a program reads from a resource registered with `inputs`: each input's output, and whether it is
    a secret, under the offline engine with `mocks`."""

    def program() -> None:
        opts = pulumi.ResourceOptions(additional_secret_outputs=secret)
        res = pulumi.CustomResource(type_, "r", props=copy.deepcopy(inputs), opts=opts)
        outputs = {key: vars(res)[key] for key in inputs}
        pulumi.export("values", outputs)
        pulumi.export("secret", {key: output.is_secret() for key, output in outputs.items()})

    recording = engine.run(program, {"aws:region": "us-west-2"}, mocks=mocks)
    return {**recording.exports, "state": dict(recording.resources[0].state)}


OUTPUT_NAMES = st.sampled_from(["name", "tags", "spec", "metadata", "subnetIds"]) | st.from_regex(r"[a-z][a-zA-Z]{0,7}",
                                                                                             fullmatch=True)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(TYPES), st.dictionaries(OUTPUT_NAMES.filter(lambda k: k not in ("id", "urn")), JSON, max_size=6),
       st.data())
def test_outputs_left_out_of_the_answer_reach_the_program_as_the_sdks_own_answer_gives_them(
        type_: str, inputs: dict[str, Any], data: st.DataObject) -> None:
    """Outside a dry run the answer leaves out the outputs that are inputs as given (the SDK fills them from its
    inputs): the program reads the same values and secrets as through the SDK's own round trip."""
    secret = data.draw(st.lists(st.sampled_from(sorted(inputs)), unique=True) if inputs else st.just([]))
    with mock.patch.object(echo, "register", wraps=echo.register) as answered:
        ours = _program_sees(Mocks("us-west-2"), type_, inputs, secret)
    assert [c.args[2] for c in answered.call_args_list] == [True]  # answered here, leaving inputs out
    assert ours == _program_sees(ViaSdk("us-west-2"), type_, inputs, secret)
    made_secret = {key for key in secret if inputs[key] is not None}  # a null output is no secret
    assert {key for key, is_secret in ours["secret"].items() if is_secret} == made_secret


def test_an_answer_outside_a_dry_run_holds_only_what_the_mocks_added_and_the_outputs_made_secret() -> None:
    inputs = {"name": "q", "tags": {"team": "ml"}, "sizes": [1, 2]}
    request = _request(inputs, type="aws:sqs/queue:Queue", additionalSecretOutputs=["tags"])
    monitor = pulumi_mocks.MockMonitor(Mocks("us-west-2"))
    response = _on_monitor_thread(lambda: echo.register(monitor, request, True))
    assert sorted(response.object.fields) == ["arn", "id", "tags", "url"]
    assert response.object.fields["tags"] == request.object.fields["tags"]  # for the monitor to mark it secret
    assert monitor.resources[response.urn].state["sizes"] == [1, 2]  # the mocks' state is kept whole


def test_a_remote_components_inputs_sent_as_output_values_reach_the_program_as_their_values() -> None:
    """A remote component's inputs travel as output values, which the mocks see as plain values (see
    `output_values.for_mocks`): the SDK fills the outputs its answer leaves out from those output values,
    and a known one that is no secret (the only kind a plain answer meets) reads as its value."""

    def program(mocks_answer: Mocks) -> dict[str, Any]:
        def body() -> None:
            queue = pulumi.CustomResource("aws:sqs/queue:Queue", "q", props={"name": "jobs"})
            thing = pulumi.ComponentResource("team:index:Thing", "thing", props={"queue": vars(queue)["name"],
                                                                                 "size": 3}, remote=True)
            pulumi.export("values", {"queue": vars(thing)["queue"], "size": vars(thing)["size"]})

        return engine.run(body, {"aws:region": "us-west-2"}, mocks=mocks_answer).exports

    with mock.patch.object(echo, "register", wraps=echo.register) as answered:
        ours = program(Mocks("us-west-2"))
    assert [c.args[2] for c in answered.call_args_list] == [True, True]
    assert ours == program(ViaSdk("us-west-2")) == {"values": {"queue": "jobs", "size": 3}}
