"""The recording monitor's one-walk reading of a registration's inputs equals the plain copy of the
inputs as sent (special values made plain, nulls kept, integral numbers as integers)."""

from __future__ import annotations

import json

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
