"""The base of every stack-configuration model: camelCase keys in YAML, unknown keys rejected,
instances immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Model(BaseModel):
    """Base: camelCase keys in YAML, unknown keys rejected, instances immutable."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )
