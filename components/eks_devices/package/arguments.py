"""The package's arguments, as the engine sends them, checked and planned before anything is
constructed: every problem at once, one property error each (`nodePools.trn.instanceTypes`,
`network.availabilityZoneCount`), so the provider answers INVALID_ARGUMENT instead of failing
inside a component's constructor, where the engine would get one error without property paths.

The wire carries the stack configuration's own camelCase keys (`PlatformArgs` spelt as the analyzer
names its properties); numbers arrive as floats.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pulumi

from eks_devices.cluster import endpoint_problems
from eks_devices.core.config.keys import camel_case
from eks_devices.core.model import Plan
from eks_devices.inputs import Problem, reject
from eks_devices.platform import STACK_KEYS, plan_args

COMPONENT = "Platform"


# wire argument (`nodePools`) → the Python Platform's PlatformArgs key (`node_pools`)
ARGUMENTS = {camel_case(k): k for k in STACK_KEYS}


def plan_inputs(inputs: Mapping[str, Any]) -> Plan:
    """The Plan for the arguments, or `pulumi.InputPropertiesError` listing every problem."""
    outputs = [(path, "given an Output (unknown until deployed); accepted: a plain value — the device plan "
                      "decides at construct time which resources exist") for path in output_paths(inputs)]
    if outputs:
        reject(COMPONENT, outputs)
    unknown = sorted(set(inputs) - set(ARGUMENTS))
    problems: list[Problem] = [(k, f"unknown argument; accepted: {', '.join(sorted(ARGUMENTS))}") for k in unknown]
    args = {ARGUMENTS[k]: integers(v) for k, v in inputs.items() if k in ARGUMENTS}
    try:
        plan = plan_args(args)  # type: ignore[arg-type]
    except pulumi.InputPropertiesError as exc:
        problems.extend((error["property_path"], error["reason"]) for error in exc.errors or [])
        reject(COMPONENT, problems)
    problems.extend(endpoint_problems(plan.spec.cluster.endpoint))
    if problems:
        reject(COMPONENT, problems)
    return plan


def output_paths(value: Any, path: str = "") -> Iterator[str]:
    """Property paths of Outputs inside `value` (the arguments are plain)."""
    if isinstance(value, pulumi.Output):
        yield path or "(arguments)"
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from output_paths(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from output_paths(v, f"{path}[{i}]")


def integers(value: Any) -> Any:
    """`value` with integral floats as ints: the wire carries every number as a double, and the
    configuration's counts, sizes and Helm values are integers."""
    if isinstance(value, Mapping):
        return {k: integers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [integers(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
