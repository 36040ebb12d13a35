"""A declared claim's namespace exists before the claim: the toolkit creates it (labelled as its
own), unless the configuration says it exists already."""

from __future__ import annotations

import pytest

from eks_devices import build, parse
from eks_devices.core.manifests import software

CONFIG = {"eks-devices:cluster": {"name": "ml", "version": "1.36", "mode": "managed-node-groups"},
          "eks-devices:nodePools": {"p": {"replicas": 1, "instanceTypes": ["g6.xlarge"]}}}


def created(claim: dict) -> list[str]:
    plan = build(parse({**CONFIG, "eks-devices:claims": {"c": {"pools": ["p"], "gpus": {"count": 1}, **claim}}}))
    assert not plan.errors
    return [n["metadata"]["name"] for n in software.namespaces(plan)]


@pytest.mark.parametrize(("claim", "expected"), [
    ({"namespace": "research"}, True), ({"namespace": "research", "createNamespace": False}, False),
    ({"namespace": "default"}, False), ({}, False), ({"namespace": "kube-system"}, False)])
def test_a_claim_namespace_is_created_unless_it_exists(claim: dict, expected: bool) -> None:
    assert ("research" in created(claim)) is expected
    assert not {"default", "kube-system"} & set(created(claim))


def test_the_created_namespace_carries_the_toolkit_label() -> None:
    plan = build(parse({**CONFIG, "eks-devices:claims": {"c": {"pools": ["p"], "gpus": {"count": 1},
                                                              "namespace": "research"}}}))
    (namespace,) = [n for n in software.namespaces(plan) if n["metadata"]["name"] == "research"]
    assert namespace["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "eks-devices"}
