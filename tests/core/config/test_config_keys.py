"""Keys are camelCase and in the `eks-devices` namespace: anything else is a problem with a
suggestion, never silently ignored."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eks_devices import ConfigError, parse
from eks_devices.core.config.base import Model
from eks_devices.core.config.keys import camel_case, property_name, snake_case, stack_key
from eks_devices.core.config.stack import STACK_KEYS, Spec, near_namespace
from eks_devices.platform import PROPERTY_PATHS
from eks_devices.platform import STACK_KEYS as ARGUMENT_KEYS

CLUSTER = {"name": "ml", "version": "1.36", "mode": "karpenter"}


def problems(config: dict) -> dict[str, str]:
    with pytest.raises(ConfigError) as caught:
        parse(config)
    return {p.path: p.accepted for p in caught.value.problems}


@pytest.mark.parametrize(("key", "pool", "suggestion"), [
    ("instance_types", {"instance_types": ["g6e.xlarge"]}, "instanceTypes"),
    ("gpu_sharing", {"instanceTypes": ["g6e.xlarge"], "gpu_sharing": {"strategy": "none"}}, "gpuSharing"),
    ("gpuSharng", {"instanceTypes": ["g6e.xlarge"], "gpuSharng": {"strategy": "none"}}, "gpuSharing"),
    # the system node group's key, refused on a pool: never suggested for itself (issue 24)
    ("instanceType", {"instanceType": ["g6e.xlarge"]}, "instanceTypes"),
])
def test_snake_case_and_misspelt_keys_are_problems_with_a_suggestion(key: str, pool: dict, suggestion: str) -> None:
    found = problems({"eks-devices:cluster": CLUSTER, "eks-devices:nodePools": {"g": pool}})
    assert f"did you mean {suggestion!r}?" in found[f"nodePools.g.{key}"]


def test_snake_case_section_keys_are_refused_too() -> None:
    found = problems({"eks-devices:cluster": {**CLUSTER, "system_node_group": {"size": 2}}})
    assert "did you mean 'systemNodeGroup'?" in found["cluster.system_node_group"]


@pytest.mark.parametrize("namespace", ["eks-device", "eksdevices", "eks_devices", "eks-devics"])
def test_a_near_miss_of_the_namespace_is_a_problem(namespace: str) -> None:
    found = problems({"eks-devices:cluster": CLUSTER, f"{namespace}:nodePools": {"g": {}}})
    assert found[f"{namespace}:nodePools"].startswith("did you mean eks-devices:nodePools?")


@pytest.mark.parametrize("key", ["existing:clusterName", "kubernetes:context", "aws:skipMetadataApiCheck", "eks:x"])
def test_other_projects_keys_are_left_alone(key: str) -> None:
    assert not near_namespace(key)
    parse({"eks-devices:cluster": CLUSTER, key: "x"})


def test_an_unknown_key_of_our_namespace_suggests_the_section() -> None:
    found = problems({"eks-devices:cluster": CLUSTER, "eks-devices:nodepools": {}})
    assert found["eks-devices:nodepools"].startswith("did you mean eks-devices:nodePools?")


# --- one key-naming function (core/config/keys.py) ---------------------------------------------------

WORD = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(WORD, min_size=1, max_size=4))
def test_camel_and_snake_case_are_inverses(words: list[str]) -> None:
    snake = "_".join(words)
    camel = camel_case(snake)
    assert "_" not in camel and camel.lower() == snake.replace("_", "")
    assert snake_case(camel) == snake
    assert camel_case(camel) == camel and snake_case(snake) == snake  # idempotent: either spelling is accepted


def test_every_model_alias_is_the_camel_case_of_its_field() -> None:
    pending: list[type[Model]] = [Model]
    seen = 0
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        for name, field in model.model_fields.items():
            seen += 1
            if name not in ("min_memory_gib", "all_"):  # `minMemoryGiB` and `all` are spelt by hand
                assert field.alias == camel_case(name), (model.__name__, name)
    assert seen > 80


def test_the_stack_keys_and_the_platform_arguments_derive_from_the_spec() -> None:
    assert STACK_KEYS == {"aws:region": "region", "aws:profile": "aws_profile", "eks-devices:network": "network",
                          "eks-devices:cluster": "cluster", "eks-devices:nodePools": "node_pools",
                          "eks-devices:helmValues": "helm_values", "eks-devices:chartVersions": "chart_versions",
                          "eks-devices:deviceClasses": "device_classes", "eks-devices:claims": "claims",
                          "eks-devices:digests": "digests"}
    assert set(STACK_KEYS.values()) == set(Spec.model_fields)
    assert {stack_key(f) for f in Spec.model_fields} == set(STACK_KEYS)
    assert ARGUMENT_KEYS["profile"] == "aws:profile" and ARGUMENT_KEYS["node_pools"] == "eks-devices:nodePools"
    assert PROPERTY_PATHS["aws:profile"] == "profile" and property_name("eks-devices:helmValues") == "helmValues"


def test_aws_keys_are_reported_as_the_stack_file_spells_them() -> None:
    found = problems({"aws:region": "moon", "aws:profile": "has space", "eks-devices:cluster": CLUSTER})
    assert set(found) == {"aws:region", "aws:profile"}
    assert "AWS region" in found["aws:region"] and "AWS profile" in found["aws:profile"]
