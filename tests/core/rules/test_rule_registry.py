"""The rule registry: a rule declares its slug, summary and modes once; the registry stamps the slug on
its findings, runs it only for its modes, refuses duplicate slugs and unknown modes, and generates the
the rule table in docs/rules.md."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from eks_devices.core.derive.resources import Facts
from eks_devices.core.model import Finding, Plan
from eks_devices.core.rules import (
    RULES,
    Blame,
    Registry,
    Verdict,
    Violation,
    error,
    markdown_table,
    registry,
    resource_rules,
    rule,
    warning,
)
from eks_devices.core.vocabulary import MODES
from support import stacks

ROOT = Path(__file__).parents[3]
RULES_DIR = ROOT / "components" / "eks_devices" / "core" / "rules"


def _documented_rule_table() -> str:
    section = (ROOT / "docs" / "rules.md").read_text()
    return "".join(line + "\n" for line in section.splitlines() if line.startswith("|"))


@pytest.fixture(scope="module")
def small_plan() -> Plan:
    return stacks.plan("karpenter", pools={"gpu": {"instanceTypes": ["g6.xlarge"]}})


def test_the_registry_stamps_each_verdict_with_the_rule_slug(small_plan: Plan) -> None:
    reg = Registry()

    @reg.rule("two-verdicts", "yields an error and a warning")
    def _check(plan: Plan) -> Iterator[Verdict]:
        yield warning("b.path", "a warning", "fix b")
        yield error("a.path", "an error", "fix a")

    assert reg.evaluate(small_plan) == [  # errors first, then by path
        Finding("two-verdicts", "error", "a.path", "an error", "fix a"),
        Finding("two-verdicts", "warning", "b.path", "a warning", "fix b"),
    ]
    assert reg.rules["two-verdicts"].check is _check  # the decorator hands the function back


def test_a_check_yielding_anything_but_a_verdict_is_refused(small_plan: Plan) -> None:
    reg = Registry()

    @reg.rule("old-style", "yields a Finding")
    def _check(plan: Plan) -> Iterator[Finding]:
        yield Finding("old-style", "error", "p", "m", "f")

    with pytest.raises(TypeError, match="old-style"):
        reg.evaluate(small_plan)


def test_a_duplicate_slug_is_refused_naming_both_functions() -> None:
    reg = Registry()

    @reg.rule("twice", "first")
    def _first(plan: Plan) -> Iterator[Verdict]:
        yield from ()

    def _second(plan: Plan) -> Iterator[Verdict]:
        yield from ()

    with pytest.raises(ValueError, match=r"'twice' registered twice.*_first.*_second"):
        reg.rule("twice", "second")(_second)
    assert reg.rules["twice"].check is _first


def test_the_catalogue_refuses_a_slug_it_already_has() -> None:
    before = dict(RULES)
    with pytest.raises(ValueError, match="one-manager-per-node"):
        rule("one-manager-per-node", "again")(lambda plan: iter(()))
    assert before == RULES


@pytest.mark.parametrize("modes", [("karpneter",), (), "karpenter"])
def test_unknown_modes_are_refused(modes: object) -> None:
    with pytest.raises(ValueError, match="modes"):
        Registry().rule("some-rule", "checks", modes=modes)  # type: ignore[arg-type]


def test_a_rule_restricted_to_a_mode_runs_only_for_that_mode() -> None:
    reg, ran = Registry(), []

    @reg.rule("karpenter-only", "karpenter only", modes=("karpenter",))
    def _check(plan: Plan) -> Iterator[Verdict]:
        ran.append(plan.mode)
        yield error("cluster.mode", "ran", "nothing")

    pools = {"gpu": {"instanceTypes": ["g6.xlarge"], "provisioning": "static", "replicas": 1}}
    plans = {mode: stacks.plan(mode, pools=pools) for mode in MODES}
    assert [f.slug for f in reg.evaluate(plans["karpenter"])] == ["karpenter-only"]
    assert reg.evaluate(plans["auto-mode"]) == reg.evaluate(plans["managed-node-groups"]) == []
    assert ran == ["karpenter"]  # the check is not even called for other modes
    assert reg.rules["karpenter-only"].modes == ("karpenter",)
    assert reg.rules["karpenter-only"].applies("karpenter") and not reg.rules["karpenter-only"].applies("auto-mode")


def test_modes_default_to_all_and_keep_the_vocabulary_order() -> None:
    reg = Registry()
    reg.rule("everywhere", "all modes")(lambda plan: iter(()))
    reg.rule("two", "two modes", modes=("managed-node-groups", "auto-mode"))(lambda plan: iter(()))
    assert reg.rules["everywhere"].modes == MODES
    assert reg.rules["two"].modes == ("auto-mode", "managed-node-groups")


def test_the_catalogue_mode_restrictions_hold_on_a_real_plan() -> None:
    """A Karpenter-only rule that fires on a Karpenter stack stays silent on the same pools elsewhere."""
    pools = {"p": {"instanceTypes": ["p5.48xlarge"], "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}}
    assert "karpenter-mig-static-only" in stacks.slugs(stacks.plan("karpenter", pools=pools))
    assert RULES["karpenter-mig-static-only"].modes == ("karpenter",)
    assert "karpenter-mig-static-only" not in stacks.slugs(stacks.plan("auto-mode", pools=pools))


def test_no_rule_module_builds_findings_or_repeats_a_slug() -> None:
    """Only the registry makes Findings; no rule's body spells its own slug."""
    for path in sorted(RULES_DIR.glob("*.py")):
        if path.name != "registry.py":
            assert "Finding(" not in path.read_text(), path.name
    for slug, r in RULES.items():
        for check in (r.check, r.on_resources) if r.on_resources else (r.check,):
            body = ast.parse(textwrap.dedent(inspect.getsource(check))).body[0]
            assert isinstance(body, ast.FunctionDef)
            strings = {n.value for stmt in body.body for n in ast.walk(stmt) if isinstance(n, ast.Constant)}
            assert slug not in strings, f"{slug}: the check spells its own slug"


def test_the_markdown_table_marks_modes_only_when_not_all() -> None:
    reg = Registry()
    reg.rule("everywhere", "checks a | b")(lambda plan: iter(()))
    reg.rule("karp", "checks karpenter", modes=("karpenter",))(lambda plan: iter(()))
    reg.on_resources("karp", "warning")(lambda facts: iter(()))
    assert reg.markdown_table() == ("| slug | checks | policy pack |\n|---|---|---|\n"
                                    "| `everywhere` | checks a &#124; b |  |\n"
                                    "| `karp` (karpenter) | checks karpenter | advisory |\n")


def test_the_documented_rule_table_is_generated_from_the_registry() -> None:
    expected = markdown_table()
    assert expected == registry.REGISTRY.markdown_table()
    assert _documented_rule_table() == expected, (
        "docs/rules.md's table is stale: replace it with the output of "
        "`PYTHONPATH=components python -m eks_devices.core.rules`:\n\n" + expected)


def test_a_resource_check_joins_its_registered_rule_and_is_stamped_with_its_slug() -> None:
    reg = Registry()
    reg.rule("pair", "checked on plans and on resources")(lambda plan: iter(()))

    @reg.on_resources("pair", "warning")
    def _pair(facts: Facts) -> Iterator[Blame]:
        yield Blame("urn:b", f"{len(facts.shapes)} shapes")

    assert [r.slug for r in reg.resource_rules()] == ["pair"]
    assert reg.rules["pair"].severity == "warning"
    assert reg.check_resources([]) == [Violation("pair", "urn:b", "0 shapes")]


def test_a_resource_check_needs_its_rule_once_and_yields_blames() -> None:
    reg = Registry()
    with pytest.raises(ValueError, match="'ghost', which is not registered"):
        reg.on_resources("ghost")(lambda facts: iter(()))
    reg.rule("once", "a rule")(lambda plan: iter(()))
    reg.on_resources("once")(lambda facts: iter([("urn", "a tuple, not a Blame")]))
    with pytest.raises(ValueError, match="checked on resources twice"):
        reg.on_resources("once")(lambda facts: iter(()))
    with pytest.raises(ValueError, match="severity 'fatal'"):
        reg.on_resources("once", "fatal")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a Blame"):
        reg.check_resources([])


def test_the_policy_pack_rules_are_the_catalogue_rules_read_from_resources() -> None:
    """One rule engine: every rule the policy pack enforces is a registered rule with a plan check too, and
    no module under core/ keeps a table of checks of its own."""
    assert {r.slug for r in resource_rules()} == {
        "one-manager-per-node", "karpenter-dra-gates-exclusive", "karpenter-dra-gates-match-drivers",
        "efa-not-shareable", "efa-partial-interfaces", "device-software-unserved", "device-software-installable",
        "chart-render-refused"}
    assert all(r.check is not None and r.on_resources is not None for r in resource_rules())
    core = ROOT / "components" / "eks_devices" / "core"
    tables = [p.relative_to(core) for p in core.rglob("*.py") if "CHECKS" in p.read_text()]
    assert tables == []
