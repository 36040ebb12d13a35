"""The bridge between Pulumi's stack configuration and the pure core.

`pulumi up` and the offline preview read the stack through here: every `eks-devices:*` key
(structured values arrive as JSON text) plus `aws:region` and `aws:profile`, parsed into a Spec and planned. Any
configuration problem or error finding raises one `pulumi.RunError` before a resource exists.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from eks_devices.core import planner as planning
from eks_devices.core.config.stack import NAMESPACE, ConfigError, near_namespace, parse


def stack_config() -> dict[str, Any]:
    """The stack's configuration keys this project reads, with structured values decoded."""
    return _ours({**runtime_config.get_config_env(), **runtime_config.CONFIG.get()})


def _ours(merged: dict[str, Any]) -> dict[str, Any]:
    """The keys this project reads from config as the engine hands it over (structured values as JSON
    text), with structured values decoded."""
    out: dict[str, Any] = {}
    for key, value in merged.items():
        if not (key.startswith(f"{NAMESPACE}:") or key in ("aws:region", "aws:profile") or near_namespace(key)):
            continue
        if isinstance(value, str) and value[:1] in ("{", "["):
            # undecodable text is left as is; the spec then reports it with the accepted shape
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(value)
        out[key] = value
    return out


def device_plan_output(plan_data: dict[str, Any]) -> Any:
    """The `devicePlan` stack output: the plan with the stack config it was made from
    (`stackConfig`), so `eks-devices diff --against` can rebuild a deployed stack offline. A secret
    when any of those config keys is a secret, so the output never shows a secret in plain text."""
    config = stack_config()
    data = {**plan_data, "stackConfig": config}
    if any(runtime_config.is_config_secret(key) for key in config):
        return pulumi.Output.secret(data)
    return data


class PlanRejected(pulumi.RunError):
    """The stack cannot be deployed: configuration problems or error findings, all listed."""


# A plan its runner already built for a stack configuration (`handed_plan`): set only for the extent of
# one program run, so nothing outlives the run or leaks into another.
_HANDED: ContextVar[tuple[dict[str, Any], planning.Plan] | None] = ContextVar("eks_devices_handed_plan",
                                                                              default=None)


@contextlib.contextmanager
def handed_plan(config: dict[str, Any], plan: planning.Plan) -> Iterator[None]:
    """Within the block, `plan_for_stack` takes `plan` (built by the caller from the stack
    configuration `config`, as in a stack file) instead of planning again, when the running stack's
    configuration is that same `config`; any other configuration is planned as usual. The caller reports
    the plan's warning findings itself: the program logs them only for a plan it builds."""
    engine_form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    token = _HANDED.set((_ours(engine_form), plan))
    try:
        yield
    finally:
        _HANDED.reset(token)


def plan_for_stack() -> planning.Plan:
    """Parse and plan the current stack (or take the plan `handed_plan` gives for its exact
    configuration), or raise PlanRejected naming every problem."""
    config, handed = stack_config(), _HANDED.get()
    if handed is not None and handed[0] == config:
        plan = handed[1]  # its runner reports the warnings (the CLI: wrapped, citations only with --verbose)
    else:
        try:
            spec = parse(config, source=f"stack {pulumi.get_stack()}")
        except ConfigError as exc:
            raise PlanRejected(str(exc)) from None
        plan = planning.build(spec)
        for finding in plan.findings:  # `pulumi up` shows them on the deployment
            if finding.severity == "warning":
                pulumi.log.warn(f"{finding.slug} at {finding.path}: {finding.message} (fix: {finding.fix})")
    if plan.errors:
        lines = "\n".join(f"  - {f.slug} at {f.path}: {f.message} (fix: {f.fix})" for f in plan.errors)
        count = len(plan.errors)
        raise PlanRejected(f"stack {pulumi.get_stack()}: {count} error finding(s), nothing deployed\n{lines}")
    return plan
