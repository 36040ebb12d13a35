"""The JSON Schema of a stack file (`Pulumi.<stack>.yaml`), generated from the configuration models.

Editors with the YAML language server read it through the modeline each shipped stack starts with
(`# yaml-language-server: $schema=../schemas/stack.schema.json`) and then complete keys, show the
accepted values and underline typos while the file is written. It is derived from `Spec` (pydantic's
`model_json_schema`, camelCase aliases), so a field added to a model appears in it when it is
regenerated; `tests/core/test_stack_schema.py` fails while the committed copy is stale:

    PYTHONPATH=components python -m eks_devices.core.spec.schema > schemas/stack.schema.json

The schema checks shape (keys, types, enums, patterns); rules across fields stay with `parse` and
the rule catalogue (`eks-devices check`).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from eks_devices.core.spec.keys import stack_key
from eks_devices.core.spec.stack import NAMESPACE, Spec

# Pulumi's own top-level keys of a stack file besides `config` (Pulumi docs, "Stack settings file").
STACK_FILE_KEYS = ("secretsprovider", "encryptedkey", "encryptionsalt", "environment")


def _tidy(node: Any) -> Any:
    """Drop pydantic's generated titles (the key already names the field)."""
    if isinstance(node, dict):
        return {k: _tidy(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [_tidy(v) for v in node]
    return node


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional field's schema without its `null` branch: a stack omits the key instead."""
    branches = [b for b in schema.get("anyOf", []) if b != {"type": "null"}]
    if len(branches) == 1:
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
        return {**branches[0], **rest}
    return {k: v for k, v in schema.items() if not (k == "default" and v is None)}


def stack_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a whole stack file."""
    spec = _tidy(Spec.model_json_schema(by_alias=True, mode="validation"))
    properties = {stack_key(name): _not_null(spec["properties"][field.alias or name])
                  for name, field in Spec.model_fields.items()}
    required = [stack_key(name) for name, field in Spec.model_fields.items() if field.is_required()]
    config = {
        "type": "object",
        "description": f"The stack's configuration: {NAMESPACE}:* keys, aws:region, aws:profile, and other "
                       "namespaces' keys (left to their own programs and providers).",
        "properties": properties,
        "required": required,
        # Keys of other namespaces belong to other programs and providers; an unknown key of ours is a typo.
        "patternProperties": {f"^(?!{NAMESPACE}:)[^:]+:.+$": {}},
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Pulumi.<stack>.yaml of the {NAMESPACE} project",
        "type": "object",
        "properties": {"config": config, **{key: {} for key in STACK_FILE_KEYS}},
        "required": ["config"],
        "additionalProperties": False,
        "$defs": spec.get("$defs", {}),
    }


def render() -> str:
    """The schema as committed: sorted keys, two-space indent, one trailing newline."""
    return json.dumps(stack_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
