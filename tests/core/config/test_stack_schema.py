"""The stack files' JSON Schema (`schemas/stack.schema.json`): committed fresh, a valid draft 2020-12
schema, met by every shipped stack, broken by typos, and in step with what `parse` accepts."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from eks_devices import ConfigError, parse
from eks_devices.core.config.stack import NAMESPACE

ROOT = Path(__file__).resolve().parents[3]
SCHEMA_FILE = ROOT / "schemas" / "stack.schema.json"
STACK_FILES = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))
MODELINE = "# yaml-language-server: $schema=../schemas/stack.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))


def errors(validator: jsonschema.Draft202012Validator, document: dict[str, Any]) -> list[str]:
    return sorted("/".join(str(p) for p in e.absolute_path) for e in validator.iter_errors(document))


def test_it_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA_FILE.read_text()))


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_every_shipped_stack_validates_and_names_the_schema(validator: jsonschema.Draft202012Validator,
                                                            path: Path) -> None:
    assert path.read_text().splitlines()[0] == MODELINE
    assert errors(validator, yaml.safe_load(path.read_text())) == []


def shipped(name: str = "staging") -> dict[str, Any]:
    return copy.deepcopy(yaml.safe_load((ROOT / "stacks" / f"Pulumi.{name}.yaml").read_text()))


def _pool_typo(doc: dict[str, Any]) -> None:
    pool = doc["config"]["eks-devices:nodePools"]["gpu-dra"]
    pool["instanceType"] = pool.pop("instanceTypes")


def _section_typo(doc: dict[str, Any]) -> None:
    doc["config"]["eks-devices:nodePool"] = doc["config"].pop("eks-devices:nodePools")


def _snake_case(doc: dict[str, Any]) -> None:
    doc["config"]["eks-devices:cluster"]["system_node_group"] = {"size": 2}


def _bad_enum(doc: dict[str, Any]) -> None:
    doc["config"]["eks-devices:nodePools"]["gpu-dra"]["devices"] = {"nvidia": "plugin"}


def _top_level_typo(doc: dict[str, Any]) -> None:
    doc["configs"] = doc.pop("config")


@pytest.mark.parametrize(("change", "where"), [
    (_pool_typo, "config/eks-devices:nodePools/gpu-dra"),
    (_section_typo, "config"),
    (_snake_case, "config/eks-devices:cluster"),
    (_bad_enum, "config/eks-devices:nodePools/gpu-dra/devices/nvidia"),
    (_top_level_typo, ""),
])
def test_a_typo_does_not_validate(validator: jsonschema.Draft202012Validator, change: Any, where: str) -> None:
    doc = shipped()
    change(doc)
    assert where in errors(validator, doc)


def test_other_namespaces_and_pulumi_keys_are_left_alone(validator: jsonschema.Draft202012Validator) -> None:
    doc = shipped("dev")
    doc["config"]["kubernetes:context"] = "ml"
    doc["config"]["aws:profile"] = "platform"
    doc["secretsprovider"] = "awskms://alias/pulumi"
    assert errors(validator, doc) == []
    doc["config"]["aws:profile"] = None  # the schema wants a profile name, as parse does
    assert errors(validator, doc) == ["config/aws:profile"]


def test_every_key_of_the_schema_is_one_parse_reads() -> None:
    """The schema comes from the models, `parse` maps stack keys onto them: both must agree."""
    keys = json.loads(SCHEMA_FILE.read_text())["properties"]["config"]["properties"]
    assert {"aws:region", "aws:profile", f"{NAMESPACE}:cluster", f"{NAMESPACE}:nodePools"} <= set(keys)
    base = {f"{NAMESPACE}:cluster": {"name": "ml", "version": "1.36", "mode": "karpenter"}}
    for key in keys:
        try:
            parse({**base, key: base.get(key, {})})
        except ConfigError as exc:
            assert not [p for p in exc.problems if p.path == key and p.given.startswith("unknown key")], key


# Pulumi's project config types (pulumi/pulumi sdk/go/common/workspace/project.json, `simpleConfigType`).
PULUMI_TYPES = ("string", "integer", "boolean", "array")


def test_pulumi_yaml_types_what_pulumi_can_type() -> None:
    """A key whose schema is a string, integer, boolean or array declares that type in Pulumi.yaml;
    an object (Pulumi has no type for it) declares none, so no stack's value is refused by Pulumi."""
    declared = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["config"]
    keys = json.loads(SCHEMA_FILE.read_text())["properties"]["config"]["properties"]
    for key, declaration in declared.items():
        kind = keys[f"{NAMESPACE}:{key}"].get("type")
        assert declaration.get("type") == (kind if kind in PULUMI_TYPES else None), key
