"""Names and values with a trailing newline are configuration problems: Python's `re.match` with
`$` accepts a final newline, so every check matches the whole value (AWS and Kubernetes refuse it)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from eks_devices import ConfigError, parse

BASE: dict[str, Any] = {
    "aws:region": "us-west-2",
    "eks-devices:cluster": {"name": "ml", "version": "1.36", "mode": "managed-node-groups"},
    "eks-devices:nodePools": {"gpu": {"replicas": 1, "instanceTypes": ["g6e.xlarge"]}},
}
CASES = [
    (("eks-devices:cluster", "version"), "1.36\n", "cluster.version"),
    (("eks-devices:cluster", "karpenter"), {"version": "1.15.0\n"}, "cluster.karpenter.version"),
    (("eks-devices:nodePools",), {"gpu\n": {"replicas": 1, "instanceTypes": ["g6e.xlarge"]}}, "nodePools.gpu\n"),
    (("eks-devices:nodePools", "gpu", "labels"), {"team": "ml\n"}, "nodePools.gpu.labels"),
    (("eks-devices:nodePools", "gpu", "labels"), {"team\n": "ml"}, "nodePools.gpu.labels"),
    (("eks-devices:nodePools", "gpu"), {"replicas": 1, "instanceTypes": ["g6e.xlarge"], "capacity": "reserved",
                                        "capacityReservationIds": ["cr-0123456789abcdef0\n"]},
     "nodePools.gpu.capacityReservationIds"),
    (("eks-devices:deviceClasses",), {"big.gpu.example.com\n": {"base": "gpu.nvidia.com"}}, "deviceClasses"),
]


def with_value(keys: tuple[str, ...], value: Any) -> dict[str, Any]:
    config = copy.deepcopy(BASE)
    target = config
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value
    return config


def test_the_base_stack_is_valid() -> None:
    parse(BASE)


@pytest.mark.parametrize(("keys", "value", "path"), CASES, ids=[c[2] for c in CASES])
def test_a_trailing_newline_is_a_problem(keys: tuple[str, ...], value: Any, path: str) -> None:
    config = with_value(keys, value)
    if keys[-1] == "karpenter":
        config["eks-devices:cluster"]["mode"] = "karpenter"
        config["eks-devices:nodePools"] = {}
    with pytest.raises(ConfigError) as caught:
        parse(config)
    assert any(p.path.startswith(path) for p in caught.value.problems), caught.value.problems
