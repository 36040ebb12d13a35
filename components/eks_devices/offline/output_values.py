"""Output values on the wire: what the engine is sent for a remote component, and what the mocks get.

The real engine supports output values, so the Python SDK sends a remote component's `Output`
inputs as output values, each with its dependencies (pulumi 3.272.0 `pulumi/runtime/resource.py`
`prepare_resource`, ~236: `keep_output_values=remote`); the SDK's mock monitor reports no such
support (`pulumi/runtime/mocks.py` `SupportsFeature` and `GetDeploymentInfo`, ~357-381). The
recording monitor reports it (`with_output_values`), keeps the wire form (`sent`) and hands the
mocks what they always saw (`for_mocks`).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2

OUTPUT_VALUES = resource_pb2.RESOURCE_MONITOR_FEATURE_OUTPUT_VALUES
SIG, SECRET, RESOURCE, OUTPUT = (rpc._special_sig_key, rpc._special_secret_sig, rpc._special_resource_sig,
                                 rpc._special_output_value_sig)
UNKNOWN = rpc.UNKNOWN


def with_output_values(info: Any) -> Any:
    """The mock monitor's deployment info, plus output values (as the real engine reports)."""
    features = set(info.supportedFeatures) | {OUTPUT_VALUES}
    return resource_pb2.DeploymentInfo(supportedFeatures=sorted(features))


def sent(struct: Any) -> dict[str, Any]:
    """A request's inputs exactly as on the wire: output values, secrets and references keep their markers."""
    return json_format.MessageToDict(struct)


def for_mocks(request: Any) -> Any:
    """A copy of a registration with each output value as an engine without output values gets it
    (its value, a secret, or unknown), so the mocks see exactly what they saw before. Only remote
    components are sent output values (`keep_output_values=remote`)."""
    if not request.remote:
        return request
    wire = sent(request.object)
    plain = _without_output_values(wire)
    if plain == wire:
        return request
    copy = type(request)()
    copy.CopyFrom(request)
    copy.object.Clear()
    json_format.ParseDict(plain, copy.object)
    return copy


def _without_output_values(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(SIG) == OUTPUT:
            inner = _without_output_values(value["value"]) if "value" in value else UNKNOWN
            return {SIG: SECRET, "value": inner} if value.get("secret") else inner
        return {k: _without_output_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_output_values(v) for v in value]
    return value


def values_of(value: Any) -> Any:
    """A resolved value: output values and secrets by their value."""
    if isinstance(value, dict):
        if value.get(SIG) in (OUTPUT, SECRET):
            return values_of(value.get("value"))
        return {k: values_of(v) for k, v in value.items()}
    if isinstance(value, list):
        return [values_of(v) for v in value]
    return value
