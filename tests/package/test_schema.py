"""The multi-language package's schema: committed, current, valid against Pulumi's metaschema, and
the shape the issue promises (plain inputs mirroring the stack configuration, enums from the
vocabulary, the outputs, the secret kubeconfig)."""

from __future__ import annotations

import json
import re
import typing
from enum import Enum
from pathlib import Path

import jsonschema
import pytest

from eks_devices.core import vocabulary
from eks_devices.core.spec import cluster as cluster_spec
from eks_devices.core.spec import stack as stack_spec
from eks_devices.core.spec.base import Model
from eks_devices.package import types
from eks_devices.package.provider import schema_text
from support.stacks import ROOT

SCHEMA = ROOT / "components" / "schema.json"
METASCHEMA = Path(__file__).parent.parent / "data" / "pulumi-package-metaschema.json"
TOKEN = "eks-devices:index:Platform"


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(schema_text())


def test_committed_schema_is_current() -> None:
    assert SCHEMA.read_text() == schema_text(), (
        "components/schema.json is stale: regenerate it with "
        "`PYTHONPATH=components python -c 'from eks_devices.package.provider import schema_text; "
        "print(schema_text(), end=\"\")' > components/schema.json`")


def metaschema() -> dict:
    """Pulumi's metaschema; its semver pattern uses `(?<name>…)` groups, which Python's `re` spells `(?P<name>…)`."""
    text = METASCHEMA.read_text()
    return json.loads(re.sub(r"\(\?<([A-Za-z]\w*)>", r"(?P<\1>", text))


def test_schema_is_valid_against_pulumis_metaschema(schema: dict) -> None:
    validator = jsonschema.Draft202012Validator(metaschema())
    errors = sorted(validator.iter_errors(schema), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def test_metaschema_catches_a_broken_schema(schema: dict) -> None:
    broken = json.loads(json.dumps(schema))
    broken["resources"][TOKEN]["inputProperties"]["cluster"]["plain"] = "yes"
    broken["name"] = "eks devices"
    errors = list(jsonschema.Draft202012Validator(metaschema()).iter_errors(broken))
    assert len(errors) >= 2


def test_platform_inputs_are_plain_and_mirror_the_stack_keys(schema: dict) -> None:
    platform = schema["resources"][TOKEN]
    inputs = platform["inputProperties"]
    assert set(inputs) == {"cluster", "region", "profile", "network", "nodePools", "deviceClasses", "claims",
                           "helmValues", "chartVersions"}
    assert platform["requiredInputs"] == ["cluster"]
    assert all(p.get("plain") is True for p in inputs.values())
    for name, typ in schema["types"].items():
        if typ.get("type") == "object" and name.endswith("Config"):
            assert all(p.get("plain") is True for p in typ["properties"].values()), name
    assert inputs["nodePools"]["additionalProperties"]["$ref"] == "#/types/eks-devices:index:NodePoolConfig"
    assert inputs["helmValues"]["additionalProperties"]["additionalProperties"]["$ref"] == "pulumi.json#/Any"
    zones = schema["types"]["eks-devices:index:NetworkConfig"]["properties"]
    assert zones["availabilityZoneCount"]["type"] == "integer"
    assert zones["availabilityZones"]["items"]["type"] == "string"


def test_platform_outputs(schema: dict) -> None:
    props = schema["resources"][TOKEN]["properties"]
    assert set(props) == {"clusterName", "kubeconfig", "vpcId", "privateSubnetIds", "publicSubnetIds",
                          "nodeRoleArn", "kubernetesProvider", "devicePlan"}
    assert props["kubeconfig"]["secret"] is True
    assert props["kubernetesProvider"]["$ref"].startswith("/kubernetes/v")
    assert props["kubernetesProvider"]["$ref"].endswith("#/provider")
    assert props["devicePlan"]["$ref"] == "#/types/eks-devices:index:DevicePlan"
    assert [d["name"] for d in schema["dependencies"]] == ["kubernetes"]


ENUMS = {
    types.Mode: vocabulary.Mode, types.DeviceManager: vocabulary.ManagerChoice,
    types.Provisioning: vocabulary.Provisioning, types.Capacity: vocabulary.Capacity,
    types.AmiFamily: vocabulary.AmiFamily,
    types.NatGateways: cluster_spec.Network.model_fields["nat_gateways"].annotation,
    types.SubnetKind: stack_spec.NodePool.model_fields["subnets"].annotation,
    types.EfaAlignment: stack_spec.Efa.model_fields["align_with"].annotation,
    types.InterfaceType: stack_spec.NetworkInterface.model_fields["interface_type"].annotation,
    types.GpuSharingStrategy: stack_spec.GpuSharing.model_fields["strategy"].annotation,
    types.TaintEffect: stack_spec.Taint.model_fields["effect"].annotation,
    types.LogType: typing.get_args(cluster_spec.Cluster.model_fields["logging"].annotation)[0],
}


@pytest.mark.parametrize("enum", list(ENUMS), ids=lambda e: e.__name__)
def test_enums_equal_the_vocabulary(enum: type[Enum], schema: dict) -> None:
    assert [m.value for m in enum] == list(typing.get_args(ENUMS[enum]))
    assert [v["value"] for v in schema["types"][f"eks-devices:index:{enum.__name__}"]["enum"]] == [m.value for m in enum]


# typed section → the configuration model it mirrors
MIRRORS = {
    types.NetworkConfig: cluster_spec.Network, types.EndpointConfig: cluster_spec.Endpoint,
    types.SystemNodeGroupConfig: cluster_spec.SystemNodeGroup, types.AutoModeConfig: cluster_spec.AutoMode,
    types.KarpenterConfig: cluster_spec.Karpenter, types.ClusterConfig: cluster_spec.Cluster,
    types.DeviceManagers: stack_spec.Devices, types.NetworkInterfaceConfig: stack_spec.NetworkInterface,
    types.EfaConfig: stack_spec.Efa, types.GpuSharingConfig: stack_spec.GpuSharing, types.TaintConfig: stack_spec.Taint,
    types.LimitsConfig: stack_spec.Limits, types.NodePoolConfig: stack_spec.NodePool,
    types.DeviceClassConfig: stack_spec.ExtraDeviceClass,
}


def aliases(model: type[Model]) -> set[str]:
    return {f.alias or n for n, f in model.model_fields.items()}


@pytest.mark.parametrize("typed", list(MIRRORS), ids=lambda t: t.__name__)
def test_typed_sections_mirror_the_configuration_models(typed: type, schema: dict) -> None:
    keys = set(schema["types"][f"eks-devices:index:{typed.__name__}"]["properties"])
    expected = aliases(MIRRORS[typed])
    if typed is types.NetworkConfig:  # the stack's `availabilityZones: N | [names]`, split in two
        expected |= {"availabilityZoneCount"}
    assert keys == expected
    required = set(schema["types"][f"eks-devices:index:{typed.__name__}"].get("required", []))
    assert required == {f.alias or n for n, f in MIRRORS[typed].model_fields.items() if f.is_required()}


def test_no_input_type_is_named_args(schema: dict) -> None:
    # Python codegen appends `Args` to input types: `…ArgsArgs` would follow
    assert not [t for t in schema["types"] if t.endswith("Args")]
