"""The rule registry: the `@rule` decorator, verdicts and findings, and helpers the rule modules share.

A rule declares its slug, summary and the modes it applies to once, in `@rule(...)`. Its check yields
slug-less `Verdict`s (`error(...)`, `warning(...)`); the registry runs a rule only for its modes and
stamps each verdict with the rule's slug into a `Finding`. A slug registered twice is refused.

A rule that can also be read from any Pulumi program's resources (the policy pack) adds, beside its
plan check and under the same slug, a check over the program's facts (`derive/resources.Facts`):
`@on_resources(slug, severity)`. It yields `Blame`s (the resource's URN and what is wrong), which the
registry stamps into `Violation`s. The policy pack's policies are exactly these rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from eks_devices.core.config.stack import FAMILIES
from eks_devices.core.derive.resources import Facts, Resource, read
from eks_devices.core.families import FAMILY
from eks_devices.core.knowledge import catalog, charts, karpenter_metadata, versions
from eks_devices.core.model import ClaimPlan, Finding, Plan, PoolPlan, Severity
from eks_devices.core.vocabulary import MODES, Mode


@dataclass(frozen=True)
class Verdict:
    """What a check found, before the registry stamps the rule's slug on it."""

    severity: Severity
    path: str
    message: str
    fix: str


def error(path: str, message: str, fix: str) -> Verdict:
    return Verdict("error", path, message, fix)


def warning(path: str, message: str, fix: str) -> Verdict:
    return Verdict("warning", path, message, fix)


@dataclass(frozen=True)
class Blame:
    """What a check on a program's resources found, before the registry stamps the rule's slug on it:
    the resource to blame (its URN) and what is wrong."""

    urn: str
    message: str


@dataclass(frozen=True)
class Violation:
    """One broken rule in a program's resources: its slug, the resource to blame and what is wrong."""

    slug: str
    urn: str
    message: str


Check = Callable[[Plan], Iterable[Verdict]]
ResourceCheck = Callable[[Facts], Iterable[Blame]]

_SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def _name(check: Check) -> str:
    return f"{check.__module__}.{check.__qualname__}"


@dataclass(frozen=True)
class Rule:
    slug: str
    summary: str
    check: Check
    modes: tuple[Mode, ...] = MODES
    on_resources: ResourceCheck | None = None
    """The same rule read from a program's resources (the policy pack), when it can be."""
    severity: Severity = "error"
    """What its violations in a program's resources are: `error` (a mandatory policy) or `warning`."""

    def applies(self, mode: str) -> bool:
        return mode in self.modes

    def violations(self, facts: Facts) -> Iterator[Violation]:
        """The rule's violations in a program's resources: none when it cannot be read from them."""
        for blame in self.on_resources(facts) if self.on_resources else ():
            if not isinstance(blame, Blame):
                raise TypeError(f"rule {self.slug} ({_name(self.on_resources)}) yielded {blame!r}, not a Blame")
            yield Violation(self.slug, blame.urn, blame.message)

    def run(self, plan: Plan) -> Iterator[Finding]:
        """The rule's findings for the plan: none for a mode it is not for."""
        if not self.applies(plan.mode):
            return
        for verdict in self.check(plan):
            if not isinstance(verdict, Verdict):
                raise TypeError(f"rule {self.slug} ({_name(self.check)}) yielded {verdict!r}, not a Verdict: "
                                "yield error(...) or warning(...) and let the registry stamp the slug")
            yield Finding(self.slug, verdict.severity, verdict.path, verdict.message, verdict.fix)


class Registry:
    """Rules by slug, in registration order."""

    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}

    def rule(self, slug: str, summary: str, modes: Iterable[Mode] = MODES) -> Callable[[Check], Check]:
        """Register a check under a stable slug, for the given modes (all by default)."""
        if not _SLUG.fullmatch(slug):
            raise ValueError(f"rule slug {slug!r} is not lower-case words joined by hyphens")
        if not summary.strip():
            raise ValueError(f"rule {slug} has an empty summary")
        if isinstance(modes, str):
            raise ValueError(f"rule {slug}: modes must be a collection of modes, not the string {modes!r}")
        given = tuple(modes)
        unknown = [m for m in given if m not in MODES]
        if unknown or not given:
            raise ValueError(f"rule {slug}: unknown modes {unknown or given!r}; modes are {', '.join(MODES)}")
        ordered = tuple(m for m in MODES if m in given)

        def register(check: Check) -> Check:
            if slug in self.rules:
                raise ValueError(f"rule slug {slug!r} registered twice: by {_name(self.rules[slug].check)} "
                                 f"and by {_name(check)}")
            self.rules[slug] = Rule(slug, summary, check, ordered)
            return check
        return register

    def on_resources(self, slug: str, severity: Severity = "error") -> Callable[[ResourceCheck], ResourceCheck]:
        """Add to the registered rule `slug` its check over a program's resources, whose violations have
        `severity`. One per rule; the rule's plan check is registered first (same module, above)."""
        if severity not in ("error", "warning"):
            raise ValueError(f"rule {slug}: severity {severity!r} is not error or warning")

        def register(check: ResourceCheck) -> ResourceCheck:
            known = self.rules.get(slug)
            if known is None:
                raise ValueError(f"{_name(check)} checks resources for rule {slug!r}, which is not registered")
            if known.on_resources is not None:
                raise ValueError(f"rule {slug!r} checked on resources twice: by {_name(known.on_resources)} "
                                 f"and by {_name(check)}")
            self.rules[slug] = replace(known, on_resources=check, severity=severity)
            return check
        return register

    def resource_rules(self) -> list[Rule]:
        """The rules that can be read from a program's resources: the policy pack's policies."""
        return [r for r in self.rules.values() if r.on_resources is not None]

    def check_resources(self, resources: list[Resource], slugs: Iterable[str] | None = None) -> list[Violation]:
        """Every violation in a program's resources of the named rules (all that read resources by default)."""
        facts = read(resources)
        chosen = [self.rules[s] for s in slugs] if slugs is not None else self.resource_rules()
        return [v for r in chosen for v in r.violations(facts)]

    def evaluate(self, plan: Plan) -> list[Finding]:
        """Run every rule for the plan's mode; findings errors first, then by path, for stable output."""
        found = [f for r in self.rules.values() for f in r.run(plan)]
        return sorted(found, key=lambda f: (f.severity != "error", f.path, f.slug))

    def markdown_table(self) -> str:
        """The rule table of docs/rules.md: slug (with its modes unless it is for all), what it checks,
        and the policy pack's enforcement where the rule is read from a program's resources too."""
        rows = ["| slug | checks | policy pack |", "|---|---|---|"]
        for r in self.rules.values():
            modes = "" if r.modes == MODES else f" ({', '.join(r.modes)})"
            policy = "" if r.on_resources is None else "mandatory" if r.severity == "error" else "advisory"
            rows.append(f"| `{r.slug}`{modes} | {r.summary.replace('|', '&#124;')} | {policy} |")
        return "\n".join(rows) + "\n"


REGISTRY = Registry()
RULES = REGISTRY.rules
rule = REGISTRY.rule
on_resources = REGISTRY.on_resources
check_resources = REGISTRY.check_resources
resource_rules = REGISTRY.resource_rules
evaluate = REGISTRY.evaluate
markdown_table = REGISTRY.markdown_table


def at(pool: PoolPlan, field: str) -> str:
    return f"nodePools.{pool.name}.{field}"


def values_at(release: str, values_path: str) -> str:
    """The config path of a value in a release's override: `helmValues.<release>.<path>`, a list index in
    the stack's notation (`tolerations.0.value`, as every config path spells it; Helm's `tolerations[0]`
    would find no key in the stack file)."""
    return f"helmValues.{release}." + re.sub(r"\[(\d+)\]", r".\1", values_path)


def claim_at(claim: ClaimPlan, field: str = "") -> str:
    return f"claims.{claim.name}" + (f".{field}" if field else "")


def pool_entry(claim: ClaimPlan, pool: str) -> str:
    """The entry of a claim's `pools` that names a pool (`claims.x.pools.1`): what a finding about the claim
    on that pool blames."""
    pools = list(claim.config.pools)
    return claim_at(claim, f"pools.{pools.index(pool)}" if pool in pools else "pools")


def stack_claims(plan: Plan) -> Iterator[ClaimPlan]:
    yield from plan.claims


def dra_pools(plan: Plan, families: Iterable[str] = FAMILIES, inferred: bool = False) -> Iterator[
        tuple[PoolPlan, str]]:
    """(pool, family) for every family a pool manages with DRA (and, with `inferred`, where Auto Mode may)."""
    managers = ("dra", "inferred") if inferred else ("dra",)
    for pool in plan.pools.values():
        for family in families:
            if pool.manager(family) in managers:  # type: ignore[arg-type]
                yield pool, family


def auto_mode_plugin_only(plan: Plan, pool: PoolPlan, family: str) -> bool:
    """DRA asked in Auto Mode of a family it runs on the device plugin only (Neuron): one rule
    (the family's `auto-mode-<family>-plugin-only`) says so; the others keep quiet about its consequences."""
    return (plan.mode == "auto-mode" and not FAMILY[family].auto_mode_dra  # type: ignore[index]
            and pool.manager(family) == "dra")  # type: ignore[arg-type]


def refused_labels(plan: Plan, refused: Callable[[str], bool]) -> Iterator[tuple[PoolPlan, str]]:
    """(pool, label key) for every pool label `refused` says the mode's API refuses."""
    for pool in plan.pools.values():
        for key in sorted(k for k in pool.labels if refused(k)):
            yield pool, key


def pool_types(pool: PoolPlan) -> list[catalog.InstanceType]:
    return [catalog.instance_types()[t] for t in pool.instance_types]


def dra_kubernetes(mode: str, family: str) -> tuple[int, int]:
    """The Kubernetes minor a family's DRA needs in a mode (Auto Mode's own, else the family's driver's)."""
    if mode == "auto-mode":
        return versions.AUTO_MODE_DRA_KUBERNETES
    return FAMILY[family].dra_kubernetes  # type: ignore[index]


def _driver_words(family: str) -> str:
    """How the fix names what needs the version: DRA itself, or a family driver that needs a later one."""
    devices = FAMILY[family]  # type: ignore[index]
    if devices.dra_kubernetes > versions.DRA_KUBERNETES:
        return f"{devices.releases['dra']}, the {devices.title} DRA driver,"
    return "DRA"


def dra_fix(plan: Plan, pool: PoolPlan, families: Iterable[str]) -> str:
    """What puts `families` of the pool on DRA, in words that can be applied: the Kubernetes version
    the mode's driver needs, `devices.<family>: dra` where the stack chose another manager, and a
    static pool where the mode has no DRA device metadata for a dynamic pool's types."""
    wanted = [f for f in families if not pool.serves(f, "dra")]  # type: ignore[arg-type]
    need = max((dra_kubernetes(plan.mode, f) for f in wanted), default=(0, 0))
    parts = []
    if plan.spec.cluster.kubernetes < need:
        drivers = sorted({"Auto Mode's DRA drivers" if plan.mode == "auto-mode" else _driver_words(f)
                          for f in wanted if plan.spec.cluster.kubernetes < dra_kubernetes(plan.mode, f)})
        needs = "need" if len(drivers) > 1 or plan.mode == "auto-mode" else "needs"
        parts.append(f'set cluster.version "{need[0]}.{need[1]}" or later ({" and ".join(drivers)} {needs} it)')
    if (plan.mode == "karpenter" and pool.provisioning == "dynamic"
            and plan.spec.cluster.karpenter_version < (1, 15, 0)):
        parts.append("set cluster.karpenter.version to 1.15.0 or later (dynamic DRA provisioning needs it)")
    for family in wanted:
        off, serves = charts.kept_off(family, "dra", (t.name for t in pool_types(pool) if t.has(family)))
        if off:
            parts.append(f"allow only {serves} instanceTypes in nodePools.{pool.name} (the "
                         f"{FAMILY[family].title} DRA driver's chart keeps off {', '.join(off)})")  # type: ignore[index]
    explicit = [f for f in wanted if pool.managers[f].requested != "auto"]  # type: ignore[index]
    metadata = karpenter_metadata.for_version(plan.spec.cluster.karpenter.version)
    lacking = sorted({t.name for t in pool_types(pool) for f in wanted if t.has(f) and not (
        t.auto_mode_dra_metadata if plan.mode == "auto-mode" else metadata.covers(t, f))})
    static = pool.provisioning == "dynamic" and plan.mode != "managed-node-groups" and lacking
    if static:
        parts.append(f"make nodePools.{pool.name} static (provisioning: static with replicas): {plan.mode} has no "
                     f"DRA device metadata for {', '.join(lacking)}, so a dynamic pool never launches them for DRA "
                     "claims")
    settings = [f"nodePools.{pool.name}.devices.{f}: dra" for f in (wanted if static else explicit)]
    if settings:
        parts.append("set " + " and ".join(settings))
    elif not parts:
        parts.append(" and ".join(f"set nodePools.{pool.name}.devices.{f}: dra" for f in wanted))
    return "; ".join(parts)
