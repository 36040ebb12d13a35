"""Pulumi.yaml's `config:` merged into a stack's configuration as the Pulumi CLI merges it."""

from __future__ import annotations

from typing import Any

import pytest

from eks_devices.core.config.errors import ConfigError
from eks_devices.core.config.project_config import merge

STACK = {"aws:region": "us-west-2", "team:owner": "platform"}


def merged(declared: Any, stack: dict[str, Any] | None = None) -> dict[str, Any]:
    return merge(dict(STACK if stack is None else stack), declared, "team", "dev", "Pulumi.yaml")


def test_keys_the_stack_leaves_out_take_the_projects_default_or_value() -> None:
    declared = {"size": "large", "zones": 3, "flags": [1, 2], "debug": False, "tier": {"type": "string", "default": "gold"},
                "aws:profile": "ops", "kubernetes:context": {"value": "admin"}, "team:quota": {"value": {"gpus": 8}}}
    assert merged(declared) == {**STACK, "team:size": "large", "team:zones": 3, "team:flags": [1, 2], "team:debug": False,
                                "team:tier": "gold", "aws:profile": "ops", "kubernetes:context": "admin",
                                "team:quota": {"gpus": 8}}


def test_the_stack_file_wins_and_a_key_it_sets_needs_no_default() -> None:
    assert merged({"owner": "someone-else", "aws:region": "eu-west-1", "needed": {"type": "string"}},
                  {**STACK, "team:needed": "yes"}) == {**STACK, "team:needed": "yes"}


def test_every_key_of_the_project_without_a_value_anywhere_is_named() -> None:
    with pytest.raises(ConfigError) as caught:
        merged({"b": {"type": "string"}, "team:a": {"description": "who"}, "aws:x": {"value": "y"}})
    assert [(p.path, p.given) for p in caught.value.problems] == [
        ("team:a", "no value in stack dev and no default in Pulumi.yaml"),
        ("team:b", "no value in stack dev and no default in Pulumi.yaml")]
    assert "`pulumi config set b <value>`" in caught.value.problems[1].accepted


@pytest.mark.parametrize(("declared", "path", "given"), [
    ({"a": {"default": 1, "value": 2}}, "Pulumi.yaml config.a", "both `default` and `value`"),
    ({"aws:region": {"default": "x"}}, "Pulumi.yaml config.aws:region", "a `type` or a `default`"),
    ({"aws:region": {"type": "string", "value": "x"}}, "Pulumi.yaml config.aws:region", "a `type` or a `default`"),
    ({"aws:region": {"description": "d"}}, "Pulumi.yaml config.aws:region", "no `value`"),
    ({"ratio": 0.5}, "Pulumi.yaml config.ratio", "0.5"),
    ({"a:b:c": "x"}, "Pulumi.yaml config.a:b:c", "'a:b:c'"),
    ([1, 2], "Pulumi.yaml config", "[1, 2]"),
], ids=["default-and-value", "foreign-default", "foreign-type", "foreign-without-value", "float", "two-colons",
        "not-a-mapping"])
def test_what_pulumi_refuses_in_pulumi_yaml_is_a_problem_with_its_path(declared: Any, path: str, given: str) -> None:
    with pytest.raises(ConfigError) as caught:
        merged(declared)
    assert [(p.path, p.given) for p in caught.value.problems] == [(path, given)]


@pytest.mark.parametrize(("type_name", "items", "value", "fits"), [
    ("string", None, "x", True), ("string", None, 5, False), ("integer", None, 5, True), ("integer", None, 5.0, True),
    ("integer", None, 5.5, False), ("integer", None, "-12", True), ("integer", None, "12a", False),
    ("integer", None, True, False), ("boolean", None, True, True), ("boolean", None, "false", True),
    ("boolean", None, "yes", False), ("object", None, {"a": 1}, True), ("object", None, [1], False),
    ("array", {"type": "integer"}, [1, "2"], True), ("array", {"type": "integer"}, [1, "x"], False),
    ("array", None, [1], False), ("array", {"type": "array", "items": {"type": "string"}}, [["a"], []], True),
    ("number", None, 1, False),
])
def test_a_value_fits_a_declared_type_as_pulumi_decides(type_name: str, items: Any, value: Any, fits: bool) -> None:
    from eks_devices.core.config.project_config import fits as fitting

    assert fitting(type_name, items, value) is fits


@pytest.mark.parametrize(("declared", "stack", "given", "accepted"), [
    ({"size": {"type": "integer"}}, "many", "'many'", "a value of type 'integer'"),
    ({"flags": {"type": "array", "items": {"type": "boolean"}}}, [True, "no"], "[True, 'no']",
     "a value of type 'array<boolean>'"),
    ({"token": {"type": "string", "secret": True}}, "plain", "a value in plain text", "an encrypted value"),
    ({"size": {"type": "integer", "default": "big"}}, None, "default 'big'", "a default of type 'integer'"),
], ids=["scalar", "array", "secret-in-plain-text", "default"])
def test_a_value_pulumi_yaml_declares_otherwise_is_a_problem(declared: dict[str, Any], stack: Any, given: str,
                                                            accepted: str) -> None:
    [(key, _)] = declared.items()
    with pytest.raises(ConfigError) as caught:
        merged(declared, {**STACK, f"team:{key}": stack} if stack is not None else None)
    [problem] = caught.value.problems
    assert problem.given == given and problem.accepted.startswith(accepted)


def test_typed_values_that_fit_and_encrypted_ones_pass() -> None:
    declared = {"size": {"type": "integer"}, "on": {"type": "boolean"}, "token": {"type": "string", "secret": True},
                "untyped": {"secret": True}}  # Pulumi checks only the keys with a type
    stack = {**STACK, "team:size": 3, "team:on": True, "team:token": {"secure": "v1:x"}, "team:untyped": "plain"}
    assert merged(declared, stack) == stack
