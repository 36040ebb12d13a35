"""Input errors for Python callers: every problem at once, each with its property path, raised as
`pulumi.InputPropertiesError` before a component registers anything (the engine shows one entry per
property, and a multi-language host reports them as INVALID_ARGUMENT)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NoReturn

import pulumi

from eks_devices.core.config.errors import ConfigError
from eks_devices.core.model import Plan

Problem = tuple[str, str]  # (property path, reason)


def reject(component: str, problems: Iterable[Problem]) -> NoReturn:
    """Raise one InputPropertiesError listing every problem, one entry per property path (the reasons of
    several problems at one path joined, in order); nothing has been created."""
    found = list(problems)
    reasons: dict[str, list[str]] = {}
    for path, reason in found:
        reasons.setdefault(path, []).append(reason)
    lines = "\n".join(f"  - {path}: {reason}" for path, reason in found)
    raise pulumi.InputPropertiesError(
        f"{component}: {len(found)} input problem(s), nothing created\n{lines}",
        [{"property_path": path, "reason": "; ".join(said)} for path, said in reasons.items()])


def name_problems(name: object) -> list[Problem]:
    """A component's name is non-empty text: the Pulumi SDK raises a bare TypeError for anything else
    (after the component's checks), and the name prefixes every child's name."""
    if not isinstance(name, str) or not name.strip():
        return [("name", f"given {name!r}; accepted: a non-empty name (every child resource's name starts with it)")]
    return []


def provider_problems(provider: object, required: bool = False) -> list[Problem]:
    """A Kubernetes provider given as something else (a kubeconfig, a cluster), which the SDK would only
    refuse at the first object's registration with an AttributeError; or none where one is `required`:
    without it, Pulumi's default provider applies the objects to whatever cluster the ambient kubeconfig
    names."""
    accepted = "accepted: the cluster's Kubernetes provider, pulumi_kubernetes.Provider(name, kubeconfig=...)"
    if provider is None:
        return [("k8sProvider", f"given None; {accepted}")] if required else []
    if isinstance(provider, pulumi.ProviderResource):
        return []
    return [("k8sProvider", f"given a {type(provider).__name__}; {accepted}")]


def check_name(component: str, name: object) -> None:
    """Refuse a name that is not non-empty text (`name_problems`)."""
    if problems := name_problems(name):
        reject(component, problems)


def finding_problems(plan: Plan) -> list[Problem]:
    """The plan's error findings, each at the configuration path it blames."""
    return [(f.path, f"{f.slug}: {f.message} (fix: {f.fix})") for f in plan.errors]


def config_problems(exc: ConfigError, paths: dict[str, str] | None = None) -> list[Problem]:
    """A ConfigError's problems, their paths renamed where `paths` maps a stack key to an argument."""
    renamed = paths or {}
    out = []
    for p in exc.problems:
        head, dot, rest = p.path.partition(".")
        path = renamed.get(head, head) + dot + rest
        out.append((path, f"given {p.given}; accepted: {p.accepted}"))
    return out


def check_plan(component: str, plan: Plan, extra: Iterable[Problem] = ()) -> None:
    """Refuse a plan with error findings (a caller may hand in one the program would have refused)."""
    if not isinstance(plan, Plan):
        reject(component, [("plan", f"given a {type(plan).__name__}; accepted: an eks_devices Plan "
                                    "(eks_devices.build(eks_devices.parse(config)))")])
    problems = [*finding_problems(plan), *extra]
    if problems:
        reject(component, problems)
