"""The package's arguments: the wire's camelCase stack configuration planned with every problem at
its property path, the zone count/list split, plain values only, numbers as the wire carries them;
and the hosted Platform built from Python with the typed arguments registers what `Platform` does."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eks_devices import config_types as types
from eks_devices.package.arguments import integers, plan_inputs
from eks_devices.package.component import Platform as PackagePlatform
from eks_devices.platform import Platform, plan_args, stack_keys
from support import engine, stacks

KARPENTER = {"cluster": {"name": "ml", "version": "1.36", "mode": "karpenter"},
             "nodePools": {"gpu": {"instanceTypes": ["p5.48xlarge"], "replicas": 2.0, "provisioning": "static"}}}


def problems(inputs: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        plan_inputs(inputs)
    return {e["property_path"]: e["reason"] for e in caught.value.errors or []}


def test_wire_numbers_become_integers() -> None:
    inputs = {**KARPENTER, "helmValues": {"nvidia-dra-driver": {"kubeletPlugin": {"priority": 3.0, "ratio": 0.5}}}}
    plan = plan_inputs(inputs)
    assert plan.pools["gpu"].replicas == 2 and isinstance(plan.pools["gpu"].replicas, int)
    values = plan.releases["nvidia-dra-driver"].values["kubeletPlugin"]
    assert values["priority"] == 3 and isinstance(values["priority"], int) and values["ratio"] == 0.5


def test_zone_count_and_list() -> None:
    assert plan_inputs({**KARPENTER, "network": {"availabilityZoneCount": 2.0}}).spec.network.zone_count == 2
    zones = ["us-west-2a", "us-west-2b", "us-west-2c"]
    assert plan_inputs({**KARPENTER, "network": {"availabilityZones": zones}}).spec.network.availability_zones == zones
    assert set(problems({**KARPENTER, "network": {"availabilityZoneCount": 1}})) == {"network.availabilityZoneCount"}
    both = problems({**KARPENTER, "network": {"availabilityZoneCount": 3, "availabilityZones": zones}})
    assert both == {"network.availabilityZoneCount": "given both availabilityZoneCount and availabilityZones; "
                                                     "accepted: one of them"}


def test_every_problem_at_once_at_its_property_path() -> None:
    found = problems({"cluster": {"name": "ml", "version": "1.36", "mode": "fargate"}, "nodePool": {},
                      "nodePools": {"gpu": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "maybe"}}},
                      "network": {"availabilityZoneCount": 3, "availabilityZones": ["us-west-2a", "us-west-2b"]}})
    assert set(found) == {"cluster.mode", "nodePool", "nodePools.gpu.devices.nvidia", "network.availabilityZoneCount"}
    assert "accepted: chartVersions, claims, cluster, deviceClasses, digests, helmValues, network, nodePools" in found["nodePool"]
    assert "'maybe'" in found["nodePools.gpu.devices.nvidia"] and "device-plugin" in found["nodePools.gpu.devices.nvidia"]


def test_missing_cluster_wrong_shapes_and_error_findings() -> None:
    assert set(problems({"nodePools": {}})) == {"cluster"}
    assert set(problems({**KARPENTER, "network": "big", "nodePools": ["gpu"]})) == {"network", "nodePools"}
    found = problems({**KARPENTER, "nodePools": {"gpu": {"instanceTypes": ["p5.48xlarge"],
                                                         "devices": {"neuron": "dra"}}}})
    assert list(found) == ["nodePools.gpu.devices.neuron"]
    assert found["nodePools.gpu.devices.neuron"].startswith("device-family-absent:")


def test_outputs_are_refused_with_their_paths() -> None:
    def program() -> None:
        found = problems({"cluster": {"name": pulumi.Output.from_input("ml"), "version": "1.36", "mode": "karpenter"},
                          "nodePools": {"gpu": {"instanceTypes": [pulumi.Output.from_input("p5.48xlarge")]}}})
        assert set(found) == {"cluster.name", "nodePools.gpu.instanceTypes[0]"}
        assert all("a plain value" in reason for reason in found.values())

    assert engine.run(program, stacks.base()).resources == []


@settings(max_examples=50, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)))
def test_integers_keeps_every_value_and_makes_integral_floats_ints(value: Any) -> None:
    def same(a: Any, b: Any) -> bool:
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list):
            return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
        if isinstance(a, float) and a.is_integer():
            return type(b) is int and b == a
        return type(a) is type(b) and a == b

    assert same(value, integers(value))


TYPED = types.PlatformArgs(
    region="us-east-2",
    cluster=types.ClusterConfig(name="research", version="1.36", mode=types.Mode.KARPENTER,
                                endpoint=types.EndpointConfig(public_access_cidrs=["203.0.113.0/24"]),
                                karpenter=types.KarpenterConfig(version="1.15.0")),
    network=types.NetworkConfig(availability_zone_count=2, nat_gateways=types.NatGateways.SINGLE),
    node_pools={
        "h100": types.NodePoolConfig(instance_types=["p5.48xlarge"], efa=types.EfaConfig(
            align_with=types.EfaAlignment.GPU)),
        "l40s": types.NodePoolConfig(instance_types=["g6e.xlarge"],
                                     devices=types.DeviceManagers(nvidia=types.DeviceManager.DEVICE_PLUGIN),
                                     gpu_sharing=types.GpuSharingConfig(strategy=types.GpuSharingStrategy.TIME_SLICING,
                                                                        replicas=4),
                                     labels={"team_name": "vision"},
                                     taints=[types.TaintConfig(key="dedicated", effect=types.TaintEffect.NO_SCHEDULE)]),
    },
    helm_values={"nvidia-device-plugin": {"some_key": {"nested_key": 1}}},
)
DICT_ARGS = {
    "region": "us-east-2",
    "cluster": {"name": "research", "version": "1.36", "mode": "karpenter",
                "endpoint": {"publicAccessCidrs": ["203.0.113.0/24"]}, "karpenter": {"version": "1.15.0"}},
    "network": {"availabilityZones": 2, "natGateways": "single"},
    "node_pools": {
        "h100": {"instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}},
        "l40s": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"},
                 "gpuSharing": {"strategy": "time-slicing", "replicas": 4}, "labels": {"team_name": "vision"},
                 "taints": [{"key": "dedicated", "effect": "NoSchedule"}]},
    },
    "helm_values": {"nvidia-device-plugin": {"some_key": {"nested_key": 1}}},
}


def test_typed_python_names_become_the_wire_names() -> None:
    wire = stack_keys(TYPED, types.PlatformArgs)
    assert wire["nodePools"]["l40s"]["gpuSharing"] == {"strategy": "time-slicing", "replicas": 4}
    assert wire["nodePools"]["l40s"]["labels"] == {"team_name": "vision"}  # free-form keys kept
    assert wire["helmValues"] == {"nvidia-device-plugin": {"some_key": {"nested_key": 1}}}
    assert wire["network"] == {"availabilityZoneCount": 2, "natGateways": "single"}


def test_hosted_platform_registers_what_platform_does() -> None:
    def registered(build) -> list[dict[str, Any]]:
        return engine.registrations(engine.run(build, stacks.base(region="us-east-2")))  # the args' region

    hosted = registered(lambda: PackagePlatform("research", TYPED))
    python = registered(lambda: Platform("research", DICT_ARGS))
    assert len(hosted) > 20
    assert hosted == python


def test_one_platform_args_typed_or_in_the_stack_files_spelling() -> None:
    """The Python Platform takes the generated PlatformArgs: typed sections with snake_case keys (the
    zones as a count under their own key) plan exactly as the stack file's camelCase spelling."""
    assert plan_args(TYPED).spec == plan_args(DICT_ARGS).spec
    both = {**DICT_ARGS, "network": {"availability_zone_count": 3, "availabilityZones": ["us-east-2a", "us-east-2b"]}}
    with pytest.raises(pulumi.InputPropertiesError) as caught:
        plan_args(both)  # type: ignore[arg-type]
    assert [e["property_path"] for e in caught.value.errors or []] == ["network.availabilityZoneCount"]
