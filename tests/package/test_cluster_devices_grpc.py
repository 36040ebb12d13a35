"""The hosted `ClusterDevices` as the engine drives it: a program in another language adds pools, device
software and claims to a cluster it runs, handing over its Kubernetes provider as a resource reference;
the provider registers the same children as the Python component, answers the node pools' names and the
device plan, and refuses bad arguments with one property error each, registering nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from eks_devices.core.config.keys import camel_case
from eks_devices.offline.engine import Recording
from support import engine as mock_engine
from support import provider as harness

STACK = "team"
CLUSTER = {"name": "research", "version": "1.35", "mode": "karpenter",
           "karpenter": {"version": "1.15.0", "settings": {"enableDRA": True}}}
POOLS = {"h100": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "dra"}},
         "l40s": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}}}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[harness.Engine, Any]]:
    with harness.engine() as eng, harness.provider(eng.address, tmp_path_factory.mktemp("program")) as stub:
        yield eng, stub


def inputs(eng: harness.Engine, **changes: Any) -> dict[str, Any]:
    """The arguments a TypeScript program would send: its own provider, role, subnets and groups."""
    provider = harness.registered_provider(eng, package="kubernetes", name="research-k8s", stack=STACK)
    given = {"cluster": CLUSTER, "node_pools": POOLS, "k8s_provider": provider, "node_role_name": "research-node",
             "node_role_arn": "arn:aws:iam::111122223333:role/research-node",
             "private_subnet_ids": ["subnet-0a", "subnet-0b"],
             "private_subnets_by_zone": {"us-west-2a": "subnet-0a", "us-west-2b": "subnet-0b"},
             "cluster_security_group_id": "sg-0c", "efa_security_group_id": "sg-0e", "region": "us-west-2"}
    return {camel_case(k): v for k, v in {**given, **changes}.items() if v is not None}


def construct(eng: harness.Engine, stub: Any, args: dict[str, Any]) -> Any:
    return harness.construct(stub, eng, name="research", inputs=args, stack=STACK, config={},
                             component="ClusterDevices")


@pytest.fixture(scope="module")
def constructed(served: tuple[harness.Engine, Any]) -> tuple[Any, Recording, str]:
    eng, stub = served
    recording = eng.use(STACK, "us-west-2")
    args = inputs(eng)
    return construct(eng, stub, args), recording, args["k8sProvider"]["urn"]


def test_the_pools_software_and_claims_are_registered_under_the_component(constructed) -> None:
    response, recording, provider_urn = constructed
    [component] = recording.of_type("eks-devices:index:ClusterDevices")
    assert response.urn == component.urn
    counts = recording.counts()
    assert counts["kubernetes:karpenter.sh/v1:NodePool"] == 2
    assert counts["kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"] == 2
    releases = {r.name for r in recording.of_type("kubernetes:helm.sh/v3:Release")}
    assert releases == {"research-nvidia-dra-driver", "research-aws-dranet", "research-nvidia-device-plugin"}
    # nothing a team's cluster already has: no VPC, cluster, Karpenter release or IAM role
    assert not {t for t in counts if t.startswith(("aws:ec2/vpc", "aws:eks/cluster", "eks:", "aws:iam/role"))}
    assert "research-karpenter" not in releases
    # every Kubernetes object goes through the team's provider
    kube = [r for r in recording.resources if r.type.startswith("kubernetes:")]
    assert kube and {r.provider.rsplit("::", 1)[0] for r in kube} == {provider_urn}


def test_the_outputs_are_the_pool_names_and_the_device_plan(constructed) -> None:
    response, _, _ = constructed
    state = mock_engine.offline.wire_inputs(response.state)
    assert set(state["nodePoolNames"]) == set(POOLS)
    plan = state["devicePlan"]
    assert plan["mode"] == "karpenter"
    assert plan["pools"]["h100"]["managers"]["efa"]["manager"] == "dra"
    assert plan["pools"]["l40s"]["managers"]["nvidia"]["release"] == "nvidia-device-plugin"


def test_bad_arguments_are_property_errors_and_nothing_is_registered(served) -> None:
    eng, stub = served
    recording = eng.use("broken", "us-west-2")
    args = inputs(eng, node_role_arn=None, cluster={**CLUSTER, "mode": "fargate"})
    args["nodePools"] = {"h100": {**POOLS["h100"], "devices": {"nvidia": "dra-please"}}}
    args["colour"] = "blue"
    recorded = len(recording.resources)  # the team's provider
    with pytest.raises(grpc.RpcError) as caught:
        construct(eng, stub, args)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [p for p, _ in harness.property_errors(caught.value)] == ["colour", "nodeRoleArn"]
    args["nodeRoleArn"] = "arn:aws:iam::111122223333:role/n"
    del args["colour"]
    with pytest.raises(grpc.RpcError) as caught:
        construct(eng, stub, args)
    errors = dict(harness.property_errors(caught.value))
    assert set(errors) == {"cluster.mode", "nodePools.h100.devices.nvidia"}
    assert "fargate" in errors["cluster.mode"]
    assert len(recording.resources) == recorded


def test_a_karpenter_that_cannot_serve_the_dra_pools_is_refused_with_the_upgrade_advice(served) -> None:
    eng, stub = served
    recording = eng.use("old-karpenter", "us-west-2")
    args = inputs(eng, cluster={**CLUSTER, "karpenter": {"version": "1.15.0", "settings": {}}})
    recorded = len(recording.resources)
    with pytest.raises(grpc.RpcError) as caught:
        construct(eng, stub, args)
    [(path, reason)] = harness.property_errors(caught.value)
    assert path == "cluster.karpenter.settings.enableDRA" and "--reset-then-reuse-values" in reason
    assert len(recording.resources) == recorded
