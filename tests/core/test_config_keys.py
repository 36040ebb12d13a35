"""Keys are camelCase and in the `eks-devices` namespace: anything else is a problem with a
suggestion, never silently ignored."""

from __future__ import annotations

import pytest

from eks_devices import ConfigError, parse
from eks_devices.core.spec.stack import near_namespace

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
