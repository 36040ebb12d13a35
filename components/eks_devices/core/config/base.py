"""The base of every stack-configuration model: camelCase keys in YAML, unknown keys rejected,
instances immutable, and a field's docstring as its description (the stack file's JSON Schema and
the component package's types are generated from the models and carry it; `description`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from eks_devices.core.config.keys import camel_case
from eks_devices.core.docstrings import attribute_doc


class Model(BaseModel):
    """Base: camelCase keys in YAML, unknown keys rejected, instances immutable, fields described
    by their docstrings (read by `description` when a schema is generated, not at import)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=camel_case, validate_by_name=False, validate_by_alias=True,
    )


def empty_list() -> list[Any]:
    """The `default_factory` of list fields. pydantic reads a factory's signature when the model is built;
    for the builtin `list` that means tokenizing its text signature (~5 ms of every command's start), for
    a function it does not."""
    return []


def description(model: type[BaseModel], name: str) -> str | None:
    """A field's description: the one its `Field` gives, else the docstring under it."""
    return model.model_fields[name].description or attribute_doc(model, name)


def known_keys() -> set[str]:
    """Every key any configuration model accepts (their camelCase aliases), for "did you mean"."""
    keys: set[str] = set()
    pending: list[type[BaseModel]] = [Model]
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        keys.update(field.alias or name for name, field in model.model_fields.items())
    return keys
