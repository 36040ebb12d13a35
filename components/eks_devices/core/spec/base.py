"""The base of every stack-configuration model: camelCase keys in YAML, unknown keys rejected,
instances immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from eks_devices.core.spec.keys import camel_case


class Model(BaseModel):
    """Base: camelCase keys in YAML, unknown keys rejected, instances immutable."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=camel_case, validate_by_name=False, validate_by_alias=True
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
