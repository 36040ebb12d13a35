"""The base of every stack-configuration model: camelCase keys in YAML, unknown keys rejected,
instances immutable, and a field's docstring as its description (the stack file's JSON Schema and
the component package's types are generated from the models and carry it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from eks_devices.core.config.keys import camel_case


class Model(BaseModel):
    """Base: camelCase keys in YAML, unknown keys rejected, instances immutable, fields described
    by their docstrings."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=camel_case, validate_by_name=False, validate_by_alias=True,
        use_attribute_docstrings=True,
    )


def known_keys() -> set[str]:
    """Every key any configuration model accepts (their camelCase aliases), for "did you mean"."""
    keys: set[str] = set()
    pending: list[type[BaseModel]] = [Model]
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        keys.update(field.alias or name for name, field in model.model_fields.items())
    return keys
