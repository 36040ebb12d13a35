"""The multi-language package's schema: valid against Pulumi's metaschema, and the shape the issue
promises (plain inputs mirroring the stack configuration, the outputs, the secret kubeconfig). That
it is current, and generated from the configuration models, is `test_generated.py`'s."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from eks_devices.package.provider import schema_text
from support.stacks import ROOT

SCHEMA = ROOT / "components" / "schema.json"
METASCHEMA = Path(__file__).parent.parent / "data" / "pulumi-package-metaschema.json"
TOKEN = "eks-devices:index:Platform"


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(schema_text())


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
                           "helmValues", "chartVersions", "digests"}
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


def test_no_input_type_is_named_args(schema: dict) -> None:
    # Python codegen appends `Args` to input types: `…ArgsArgs` would follow
    assert not [t for t in schema["types"] if t.endswith("Args")]


def test_cluster_devices_takes_plain_sections_and_the_clusters_own_resources(schema: dict) -> None:
    hosted = schema["resources"]["eks-devices:index:ClusterDevices"]
    inputs = hosted["inputProperties"]
    sections = {"cluster", "nodePools", "claims", "deviceClasses", "helmValues", "chartVersions", "region",
                "discoveryTag"}
    resources = {"k8sProvider", "nodeRoleName", "nodeRoleArn", "privateSubnetIds", "privateSubnetsByZone",
                 "clusterSecurityGroupId", "efaSecurityGroupId", "publicSubnetsByZone"}
    assert set(inputs) == sections | resources
    assert all(inputs[k].get("plain") is True for k in sections)
    assert not any(inputs[k].get("plain") for k in resources)  # Outputs of the team's program are fine
    assert inputs["k8sProvider"]["$ref"].endswith("#/provider")
    assert inputs["cluster"]["$ref"] == "#/types/eks-devices:index:ClusterConfig"
    assert sorted(hosted["requiredInputs"]) == ["cluster", "clusterSecurityGroupId", "k8sProvider", "nodeRoleArn",
                                                "nodeRoleName", "privateSubnetIds", "privateSubnetsByZone"]
    assert set(hosted["properties"]) == {"nodePoolNames", "devicePlan"}
    assert hosted["properties"]["devicePlan"]["$ref"] == "#/types/eks-devices:index:DevicePlan"
    assert hosted["description"].startswith("Node pools, device software and claims on an EKS cluster")
