"""The recording monitor's one-walk reading of a registration's inputs equals the plain copy of the
inputs as sent (special values made plain, nulls kept, integral numbers as integers)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from google.protobuf import json_format, struct_pb2

from eks_devices.offline import engine

SIG = engine._SIG


def _struct(value: dict) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    json_format.ParseDict(value, struct)
    return struct


WIRE = {
    "name": "pool-a",
    "replicas": 2.0,
    "ratio": 0.5,
    "enabled": False,
    "cleared": None,
    "unknown": "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
    "secret": {SIG: engine._SECRET, "value": {"token": "s", "list": [1.0, None, "x"]}},
    "output": {SIG: engine._OUTPUT, "value": [3.0, {"deep": True}], "dependencies": ["urn:a"]},
    "unknown_output": {SIG: engine._OUTPUT, "dependencies": ["urn:b"]},
    "resource": {SIG: engine._RESOURCE, "urn": "urn:pulumi:dev::p::t::r", "id": "r-1"},
    "other_sig": {SIG: "not-a-special-value", "kept": 1.0},
    "nested": {"items": [{"a": 1.0}, [2.0, "04da6b54-80e4-46f7-96ec-b56ff0331ba9"]], "empty": {}, "none": []},
}


def test_one_walk_equals_the_plain_copy_of_the_wire_inputs() -> None:
    struct = _struct(WIRE)
    assert json.dumps(engine._plain_struct(struct), sort_keys=True) == json.dumps(
        engine._plain(engine.wire_inputs(struct)), sort_keys=True)


def test_one_walk_makes_special_values_plain() -> None:
    plain = engine._plain_struct(_struct(WIRE))
    assert plain["replicas"] == 2 and isinstance(plain["replicas"], int) and plain["ratio"] == 0.5
    assert plain["cleared"] is None and plain["unknown"] is None and plain["unknown_output"] is None
    assert plain["secret"] == {"token": "s", "list": [1, None, "x"]}
    assert plain["output"] == [3, {"deep": True}]
    assert plain["resource"] == "urn:pulumi:dev::p::t::r"
    assert plain["other_sig"] == {SIG: "not-a-special-value", "kept": 1}
    assert plain["nested"] == {"items": [{"a": 1}, [2, None]], "empty": {}, "none": []}


def _exporting(exports: Callable[[], dict]) -> engine.Recording:
    """Run a program that exports `exports` (built inside the program: Outputs need its event loop)."""
    import pulumi

    def program() -> None:
        for name, value in exports().items():
            pulumi.export(name, value)

    return engine.run(program, {"aws:region": "us-west-2"})


def test_exports_resolve_nested_outputs_secrets_and_plain_values() -> None:
    import pulumi

    recording = _exporting(lambda: {
        "plain": {"pools": [{"name": "a", "replicas": 2}], "empty": {}, "none": None},
        "output": pulumi.Output.from_input("v"),
        "secret": pulumi.Output.secret({"token": "s"}),
        "nested": {"ids": [pulumi.Output.from_input("id-1"), "id-2"], "deep": {"x": pulumi.Output.from_input(3)}},
        "output_of_nested": pulumi.Output.from_input("k").apply(lambda k: {k: [pulumi.Output.from_input(1.5)]}),
        "tuple": ("a", pulumi.Output.from_input("b")),
    })
    assert recording.exports == {
        "plain": {"pools": [{"name": "a", "replicas": 2}], "empty": {}, "none": None},
        "output": "v",
        "secret": {"token": "s"},
        "nested": {"ids": ["id-1", "id-2"], "deep": {"x": 3}},
        "output_of_nested": {"k": [1.5]},
        "tuple": ["a", "b"],
    }


def test_plain_exports_are_not_wrapped_element_by_element(monkeypatch) -> None:
    """`Output.from_input` makes an Output of every element of a plain structure: a 1,000-pool
    devicePlan held ~45,000 of them, more CPU and memory than the resources. Plain exports are taken
    as they are."""
    import pulumi

    wrapped: list[object] = []
    from_input = pulumi.Output.from_input

    def counting(value):  # type: ignore[no-untyped-def]
        wrapped.append(value)
        return from_input(value)

    big = {"pools": {f"pool-{i}": {"instanceTypes": ["p5.48xlarge"], "replicas": i} for i in range(50)}}
    monkeypatch.setattr(pulumi.Output, "from_input", staticmethod(counting))
    recording = _exporting(lambda: {"devicePlan": big, "name": pulumi.Output.secret("n")})
    assert recording.exports == {"devicePlan": big, "name": "n"}
    assert [w for w in wrapped if isinstance(w, dict | list)] == []


def test_exports_keep_the_order_the_program_made_them_in() -> None:
    import pulumi

    recording = _exporting(lambda: {"late": pulumi.Output.from_input("x").apply(lambda x: x), "early": 1})
    assert list(recording.exports) == ["late", "early"]


def test_outputs_are_made_plain_only_when_asked_for() -> None:
    """A preview never reads outputs: the recording keeps the state the mock monitor keeps anyway and
    makes the plain copy on first use."""
    import pulumi

    def program() -> None:
        pulumi.CustomResource("test:index:Thing", "thing", {"size": 2, "tags": {"a": "b"}})

    recording = engine.run(program, {"aws:region": "us-west-2"})
    [thing] = recording.resources
    assert "outputs" not in vars(thing)
    assert thing.outputs == {"size": 2, "tags": {"a": "b"}, "id": thing.outputs["id"], "arn": thing.outputs["arn"]}
    assert thing.outputs["id"] and isinstance(thing.outputs["size"], int)
    assert "outputs" in vars(thing)


def test_inputs_are_kept_as_sent_and_decoded_only_when_asked_for() -> None:
    """Through the program the recording holds each registration's inputs as the bytes on the wire
    (decoded, they were ~15 MiB of a 1,000-pool peak); read, they are the plain inputs as sent."""
    import pulumi

    def program() -> None:
        pulumi.CustomResource("test:index:Thing", "thing", {"size": 2, "tags": {"a": "b"}, "gone": None})

    recording = engine.run(program, {"aws:region": "us-west-2"})
    [thing] = recording.resources
    assert "inputs" not in vars(thing)
    # the SDK sends no input the program left None
    assert struct_pb2.Struct.FromString(thing.wire) == _struct({"size": 2.0, "tags": {"a": "b"}})
    assert thing.inputs == {"size": 2, "tags": {"a": "b"}}
    assert "inputs" in vars(thing)


def test_a_second_resource_with_a_registered_urn_fails_the_run() -> None:
    """As the engine fails the deployment (diagnostic 2001); the first one's state is not overwritten
    in a recording that looks complete."""
    import pulumi

    def program() -> None:
        outer = pulumi.ComponentResource("t:index:Outer", "outer")
        for _ in range(2):
            pulumi.ComponentResource("t:index:Thing", "x", opts=pulumi.ResourceOptions(parent=outer))

    with pytest.raises(engine.DuplicateURN) as raised:
        engine.run(program, {})
    assert raised.value.urn == "urn:pulumi:dev::eks-devices::t:index:Outer$t:index:Thing::x"
    assert str(raised.value) == f"Duplicate resource URN '{raised.value.urn}'; try giving it a unique name"


def test_a_provider_keeps_the_plugin_version_the_program_asked_for_as_the_engine_does() -> None:
    """The engine adds the requested plugin's version to a provider's inputs in the state (the e2e tier
    compares a whole recording with the state `up` leaves)."""
    from importlib.metadata import version

    import pulumi_kubernetes as k8s

    rec = engine.run(lambda: k8s.Provider("k8s", kubeconfig="{}"), {})
    [provider] = rec.resources
    assert provider.inputs == {"kubeconfig": "{}", "version": version("pulumi_kubernetes")}


def test_secure_config_values_reach_the_program_as_secrets_it_cannot_read() -> None:
    """A `pulumi config set --secret` value, at the top of a key or inside it, is a secret to the program
    (so is everything made of it, such as the `devicePlan` export) and reads `[secret]`: offline there is
    no secrets provider to decrypt it."""
    import pulumi

    config = {"team:token": {"secure": "v1:AAAA"}, "team:nested": {"a": [{"secure": "v1:BBBB"}], "b": 1},
              "team:plain": {"secure": "v1:CCCC", "other": 2}, "aws:region": "us-west-2"}

    def program() -> None:
        team = pulumi.Config("team")
        pulumi.export("token", team.require_secret("token"))
        pulumi.export("tokenIsSecret", team.require_secret("token").is_secret())
        pulumi.export("nested", team.get_object("nested"))
        pulumi.export("secret", sorted(k for k in config if pulumi.runtime.is_config_secret(k)))

    exports = engine.run(program, config).exports
    assert exports["token"] == engine.SECRET and exports["tokenIsSecret"] is True
    assert exports["nested"] == {"a": [engine.SECRET], "b": 1}
    assert exports["secret"] == ["team:nested", "team:token"]


def test_preview_shows_secret_inputs_as_pulumi_does_and_the_recording_keeps_them_for_diff() -> None:
    """A secret input (made secret by the program, by the provider's schema, or taken from a secret
    output) reads `[secret]` in `preview --json`, which is read in reviews and CI logs; the recording
    keeps the value, so `diff` still sees it change."""
    import pulumi
    import pulumi_aws as aws

    from eks_devices.offline.preview import resources_data

    def program() -> None:
        made = aws.ssm.Parameter("made", type="SecureString", value=pulumi.Output.secret("hunter2"),
                                 tags={"owner": pulumi.Output.secret("ml"), "team": "platform"})
        aws.ssm.Parameter("taken", type="String", value=made.value, description="d")
        aws.sqs.Queue("queue", name="q", tags={"team": "platform"})

    rec = engine.run(program, {"aws:region": "us-west-2"})
    assert {r.name: r.secrets for r in rec.resources} == {
        "made": [("tags", "owner"), ("value",)], "taken": [("value",)], "queue": []}
    assert rec.named("made").inputs["value"] == "hunter2" and rec.named("taken").inputs["value"] == "hunter2"
    shown = {d["name"]: d["inputs"] for d in resources_data(rec)}
    assert shown["made"] == {"type": "SecureString", "value": engine.SECRET,
                             "tags": {"owner": engine.SECRET, "team": "platform"}}
    assert shown["taken"] == {"type": "String", "value": engine.SECRET, "description": "d"}
    assert shown["queue"] == rec.named("queue").inputs
    assert "hunter2" not in json.dumps(resources_data(rec))


def test_outputs_named_in_additional_secret_outputs_are_secrets_as_the_engine_makes_them() -> None:
    """The engine makes each output a resource names in `additional_secret_outputs` a secret (never `id`):
    what the program takes from one is a secret input downstream."""
    import pulumi
    import pulumi_aws as aws

    from eks_devices.offline.preview import resources_data

    def program() -> None:
        marked = pulumi.ResourceOptions(additional_secret_outputs=["id", "name", "tags", "absent"])
        queue = aws.sqs.Queue("queue", name="q", tags={"team": pulumi.Output.secret("ml")}, opts=marked)
        pulumi.export("secret", {"id": queue.id.is_secret(), "name": queue.name.is_secret(),
                                 "tags": queue.tags.is_secret(), "url": queue.url.is_secret()})
        pulumi.export("tags", queue.tags)
        aws.sqs.Queue("from-queue", name=queue.id, tags={"name": queue.name, "team": "platform"})

    rec = engine.run(program, {"aws:region": "us-west-2"})
    assert rec.exports["secret"] == {"id": False, "name": True, "tags": True, "url": False}
    assert rec.exports["tags"] == {"team": "ml"}
    assert {r.name: r.secrets for r in rec.resources} == {"queue": [("tags", "team")], "from-queue": [("tags", "name")]}
    shown = {d["name"]: d["inputs"] for d in resources_data(rec)}
    assert shown["from-queue"]["tags"] == {"name": engine.SECRET, "team": "platform"}


def test_after_body_is_called_once_the_body_has_run_and_before_its_registrations_resolve() -> None:
    import pulumi

    made: list[pulumi.Resource] = []
    seen: list[tuple[int, int]] = []  # resources made, resources registered

    def program() -> None:
        made.extend(pulumi.CustomResource("aws:sqs/queue:Queue", f"q{i}", props={"name": f"q{i}"}) for i in range(3))

    def after_body() -> None:
        seen.append((len(made), len(pulumi.runtime.settings.get_monitor().recording.resources)))

    recording = engine.run(program, {}, after_body=after_body)
    assert seen == [(3, 0)] and len(recording.resources) == 3
