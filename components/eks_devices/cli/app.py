"""`eks-devices`: preview a stack's device plan, list the rules and the instance catalogue.

Exit codes: 0 clean (warnings allowed), 1 error findings, 2 unreadable or invalid configuration.
Every verb takes `--json` for machines.

No `from __future__ import annotations` here: typer reads every command's annotations on each run, and
as text they would be compiled and evaluated again each time (~6 ms of every command's CPU).
"""

import json
import os
import sys
import time
from dataclasses import replace
from enum import StrEnum
from importlib.metadata import version as package_version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import orjson
import typer

from eks_devices.cli import collector, terminal
from eks_devices.cli.text import cited, say
from eks_devices.core import planner as planning
from eks_devices.core.config import stack_file
from eks_devices.core.config.stack import ConfigError, Spec
from eks_devices.core.knowledge import catalog, karpenter_metadata
from eks_devices.core.rules import RULES

if TYPE_CHECKING:
    from rich.console import Console

    from eks_devices.offline.preview import ProgramRun


class _FlagHelp:
    """`--help` is a flag: shown without typer's `<bool>` type label, like the other flags."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""
        return option


class _Command(_FlagHelp, typer.core.TyperCommand):
    pass


class _Group(_FlagHelp, typer.core.TyperGroup):
    pass


app = typer.Typer(cls=_Group, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode="markdown")


def out() -> "Console":
    """stdout's rich Console, made on first use: wraps at the terminal's width, or COLUMNS; 80 when neither says."""
    return terminal.rich_console()


def err(line: str) -> None:
    """A line on stderr as written: progress and errors are never styled nor wrapped (scripts grep them)."""
    sys.stderr.write(line + "\n")


def _show_version(show: bool) -> None:
    if show:
        sys.stdout.write(f"eks-devices {package_version('eks-devices')}\n")
        raise typer.Exit(0)


@app.callback()
def _options(version: Annotated[bool, typer.Option("--version", metavar="", callback=_show_version, is_eager=True,
                                                   help="Print the toolkit's version and exit.")] = False) -> None:
    """Plan, check and preview EKS clusters for GPUs, EFA and Neuron devices."""

STACK_HELP = "Stack name: reads `Pulumi.<STACK>.yaml` in Pulumi.yaml's stackConfigDir."  # a code span keeps `<STACK>`
JsonFlag = Annotated[bool, typer.Option("--json", metavar="", help="Print machine-readable JSON.")]
Verbose = Annotated[bool, typer.Option("--verbose", metavar="", help="Cite the upstream sources of reasons and fixes.")]
AGAINST_HELP = ("Baseline: a stack file, a git revision of the stack's file (`HEAD~1`, `origin/main`), or the JSON "
                "of `pulumi stack output devicePlan --json`.")
Against = Annotated[str | None, typer.Option("--against", help=AGAINST_HELP + " Warns about device manager flips.")]
ProjectDir = Annotated[Path | None, typer.Option("--project-dir", help="Directory holding Pulumi.yaml "
                                                 "(default: the nearest one above the current directory).")]


def _emit(data: Any) -> None:
    """Write `data` as JSON, indented, keys sorted, as the standard library writes it. orjson writes the
    same bytes ~40x faster (the standard library indents in pure Python: 0.19 s of a 1,000-pool
    preview's CPU); what orjson would write otherwise (non-ASCII text, which the standard library
    escapes; an integer beyond 64 bits or a key that is no string, which orjson refuses) takes the
    standard library's path. Only a NaN or an infinity, invalid JSON as the standard library writes
    it, reads null here."""
    try:
        encoded: bytes | None = orjson.dumps(
            data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        encoded = None
    binary = getattr(sys.stdout, "buffer", None)
    if encoded is None or not encoded.isascii():
        _emit_standard(data)
    elif binary is None:  # a text-only stream
        sys.stdout.write(encoded.decode("ascii"))
    else:
        sys.stdout.flush()  # what was written as text goes first
        binary.write(encoded)
        binary.flush()


def _emit_standard(data: Any) -> None:
    """`data` through the standard library's encoder, written in slices of a few thousand pieces: a
    1,000-pool preview's 9 MB would otherwise be built first as a list of a million pieces and then one
    string (~40 MiB at the peak), and one write per piece (`json.dump`) is one system call each with
    PYTHONUNBUFFERED set."""
    pieces: list[str] = []
    for piece in json.JSONEncoder(indent=2, sort_keys=True).iterencode(data):
        pieces.append(piece)
        if len(pieces) == 8192:
            sys.stdout.write("".join(pieces))
            pieces.clear()
    pieces.append("\n")
    sys.stdout.write("".join(pieces))


def _load(stack: str, project_dir: Path | None) -> tuple[dict[str, Any], Spec]:
    """The stack's configuration, with its project's Pulumi.yaml config merged in, and its Spec."""
    project = stack_file.find_project(project_dir)
    return stack_file.load_with_config(stack, stack_file.stacks_dir(project), project)


def load_plan(stack: str, project_dir: Path | None, as_json: bool,
              program: bool = False) -> tuple[dict[str, Any], planning.Plan]:
    """Load and plan a stack, or exit 2 with every configuration problem; with `program` (the verb runs
    the project's program), also exit 2 for a stack describing an existing cluster, which that program
    would create. The stack file's configuration comes back too: the program runs with it as read."""
    try:
        config, spec = _load(stack, project_dir)
    except stack_file.StackNotFound as exc:
        _fail(2, str(exc), as_json, {"stacks": exc.existing})
    except ConfigError as exc:
        problems = [{"path": p.path, "given": p.given, "accepted": p.accepted} for p in exc.problems]
        _fail(2, str(exc), as_json, {"problems": problems})
    if program and spec.cluster.existing:
        _fail(2, f"stack {stack} describes an existing cluster (cluster.existing: true), which the project's program "
                 f"would create: `eks-devices check {stack}` checks its pools against what it runs, and a program "
                 "using eks_devices.ClusterDevices adds them (docs/reuse.md)", as_json, {})
    return config, planning.build(spec)


def _fail(code: int, message: str, as_json: bool, extra: dict[str, Any]) -> NoReturn:
    if as_json:
        _emit({"error": message.splitlines()[0], **extra})
    else:
        err(message)
    raise typer.Exit(code)


def _reason(exc: Exception) -> str:
    """Why the program failed, in one line: the innermost reason (a traceback's last line), or for a
    missing configuration key both of Pulumi's lines, the key and how to set it."""
    from pulumi import ConfigMissingError  # loaded with the program

    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    return "; ".join(lines) if isinstance(exc, ConfigMissingError) else lines[-1]


def _run_offline(stack: str, project_dir: Path | None, as_json: bool, config: dict[str, Any],
                 plan: planning.Plan, label: str = "") -> "ProgramRun":
    """Run the project's program for a stack with `config` (its stack file's, as read, or a baseline's)
    under the mock engine, with progress on stderr; `plan`, built from that configuration, is handed to
    the program."""
    from eks_devices.offline.preview import run_program  # Pulumi loads only for the verbs that run the program

    collector.off()
    started = time.monotonic()
    err(f"running the Pulumi program for stack {stack}{f' ({label})' if label else ''} under the mock engine…")
    try:
        run = run_program(stack_file.find_project(project_dir), stack, config, plan, collector.young_generation)
    except (FileNotFoundError, stack_file.ProjectInvalid) as exc:
        _fail(2, str(exc), as_json, {})
    except Exception as exc:  # the program failed as `pulumi up` would: one line, the innermost reason
        if os.environ.get("EKS_DEVICES_TRACEBACK"):
            raise
        _fail(1, f"the Pulumi program failed for stack {stack}: {_reason(exc)} "
                 "(EKS_DEVICES_TRACEBACK=1 shows where)", as_json, {})
    finally:
        collector.off()  # what the output is made of lives to the end
    err(f"program finished in {time.monotonic() - started:.1f}s: {len(run.recording.resources)} resources")
    return run


@app.command(cls=_Command)
def preview(
    stack: Annotated[str, typer.Argument(help=STACK_HELP)] = "dev",
    as_json: JsonFlag = False,
    against: Against = None,
    project_dir: ProjectDir = None,
    verbose: Verbose = False,
) -> None:
    """Run the project's Pulumi program for a stack under Pulumi's mock engine and show what
    `pulumi up` would build: the findings first, then the device plan (a pools x families matrix of
    managers, why where it is not the default, the releases serving them) and the resource tree.
    Needs no AWS account and no Pulumi CLI.
    With `--against BASELINE`, warns about every pool and family whose device manager flips
    compared with the baseline (an upgrade resolving `auto` differently replaces those nodes)."""
    from eks_devices.cli import report

    flips = _flips(stack, against, project_dir, as_json) if against is not None else None
    config, plan = load_plan(stack, project_dir, as_json, program=True)
    run = _run_offline(stack, project_dir, as_json, config, plan)
    if as_json:
        from eks_devices.offline.preview import resources_data

        extra = {} if flips is None else {"managerFlips": flips[1], "baseline": flips[0]}
        _emit({"stack": stack, "resources": resources_data(run.recording),
               "resourceCounts": run.recording.counts(), **report.plan_data(plan), **extra})
    else:
        from eks_devices.offline.preview import print_tree

        report.print_plan(out(), plan, f"Stack {stack}", verbose)
        print_tree(out(), run.recording, f"Stack {stack}")
        if run.rejected:
            out().print("Nothing would be deployed: the program refuses stacks with error findings.")
    if flips is not None and not as_json:
        from eks_devices.cli.diff_view import flip_warnings

        for line in flip_warnings(flips[1], flips[0]) or [f"no device manager flips compared with {flips[0]}"]:
            err(line)
    raise typer.Exit(1 if plan.errors else 0)


def _load_both(stack: str, against: str, project_dir: Path | None,
               as_json: bool) -> tuple[dict[str, Any], planning.Plan, Any, planning.Plan]:
    """The stack's configuration and plan, the baseline (see `offline.baseline`) and its plan; or exit 2
    naming every problem of both at once."""
    from eks_devices.core.config.stack import parse
    from eks_devices.offline import baseline as baselines

    problems: list[dict[str, str]] = []
    config: dict[str, Any] = {}
    plan = base = None
    try:
        config, spec = _load(stack, project_dir)
        plan = planning.build(spec)
    except stack_file.StackNotFound as exc:
        _fail(2, str(exc), as_json, {"stacks": exc.existing})
    except ConfigError as exc:
        problems += [{"in": f"stack {stack}", "path": p.path, "given": p.given, "accepted": p.accepted}
                     for p in exc.problems]
    try:
        project = stack_file.find_project(project_dir)
        found = baselines.resolve(against, stack, project)
        found = replace(found, config=stack_file.with_project_config(found.config, project, stack, found.pulumi_yaml))
        base = planning.build(parse(found.config, source=f"baseline {found.source}"))
    except (baselines.BaselineError, ConfigError) as exc:
        found_problems = list(exc.problems)
        if isinstance(exc, stack_file.DuplicateKeys) and exc.config is not None:
            try:  # the rest of the baseline, as YAML reads it, is checked too
                parse(exc.config, source=f"baseline {against}")
            except ConfigError as more:
                found_problems += more.problems
        problems += [{"in": f"baseline {against}", "path": p.path, "given": p.given, "accepted": p.accepted}
                     for p in found_problems]
    if problems or plan is None or base is None:
        lines = "\n".join(f"  - {p['in']}: {p['path']}: given {p['given']}; accepted: {p['accepted']}"
                          for p in problems)
        _fail(2, f"stack {stack} against {against!r}: {len(problems)} problem(s), nothing compared\n{lines}",
              as_json, {"problems": problems})
    return config, plan, found, base


def _flips(stack: str, against: str, project_dir: Path | None,
           as_json: bool) -> tuple[str, list[dict[str, str]]]:
    from eks_devices.cli import report
    from eks_devices.offline.diff import manager_flips

    _, plan, found, base = _load_both(stack, against, project_dir, as_json)
    flips = manager_flips(report.plan_data(base), report.plan_data(plan))
    return found.source, [{"pool": p, "family": f, "before": b, "after": a} for p, f, b, a in flips]


class FailOn(StrEnum):
    replace = "replace"
    roll_reserved = "roll-reserved"
    never = "never"


@app.command("diff", cls=_Command)
def diff_command(
    stack: Annotated[str, typer.Argument(help=STACK_HELP)],
    against: Annotated[str, typer.Option("--against", help=AGAINST_HELP)],
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help=(
        "`replace`: exit 1 when a stateful resource would be replaced or deleted, or an update would fail "
        "(for CI); `roll-reserved`: exit 1 when the nodes of a pool on reserved capacity or a capacity block "
        "would be rolled or replaced; `never` (default)."))]
    = FailOn.never,
    as_json: JsonFlag = False,
    project_dir: ProjectDir = None,
    verbose: Verbose = False,
) -> None:
    """What `pulumi up` would do to the stack deployed from BASELINE, offline: runs the program under
    the mock engine for both and lists per resource create / update (the changed inputs) / replace
    (why) / delete, grouped by component, then per pool and family the device manager before → after,
    the nodes replaced, reserved capacity released first, the releases removed and the workloads
    that lose their nodes. Exit 0 when it could compare; 1 when the stack has error findings, and with
    `--fail-on replace` when a stateful resource would be replaced or deleted or an update would fail,
    with `--fail-on roll-reserved` when a reserved-capacity pool's nodes would be rolled or replaced;
    2 on unusable input."""
    from eks_devices.cli import report
    from eks_devices.offline import diff as differ

    config, plan, found, base = _load_both(stack, against, project_dir, as_json)
    if base.errors:
        lines = "\n".join(f"  - {f.slug} at {f.path}: {f.message}" for f in base.errors)
        _fail(2, f"baseline {found.source} has {len(base.errors)} error finding(s) under this toolkit version: "
                 f"the program would register nothing for it, nothing compared\n{lines}", as_json,
              {"findings": [f.as_dict() for f in base.errors]})
    if plan.errors:
        if as_json:
            _emit({"stack": stack, "baseline": found.source, "findings": [f.as_dict() for f in plan.findings]})
        else:
            report.print_findings(out(), list(plan.findings), verbose)
            out().print("Nothing compared: pulumi up refuses stacks with error findings.")
        raise typer.Exit(1)
    before = _run_offline(stack, project_dir, as_json, found.config, base, label=f"baseline {found.source}")
    after = _run_offline(stack, project_dir, as_json, config, plan)
    changes = differ.compare(before.recording, after.recording)
    story = differ.device_story(report.plan_data(base), report.plan_data(plan), changes,
                                (before.recording, after.recording))
    counts = differ.summary(changes)
    losses = differ.stateful_losses(changes)
    if as_json:
        _emit({"stack": stack, "baseline": found.source, "baselineKind": found.kind, "summary": counts,
               "changes": [c.as_dict() for c in changes], "devices": story,
               "statefulReplacedOrDeleted": [c.urn for c in losses]})
    else:
        from eks_devices.cli.diff_view import print_diff

        print_diff(out(), f"Stack {stack} against {found.source}", changes, story, counts, verbose)
    stop = {FailOn.replace: bool(losses), FailOn.roll_reserved: bool(story["reservedCapacityRolled"])}
    raise typer.Exit(1 if stop.get(fail_on) else 0)


@app.command("preflight", cls=_Command)
def preflight_command(
    stack: Annotated[str, typer.Argument(help=STACK_HELP)],
    region: Annotated[str | None, typer.Option(help="AWS region (default: the stack's aws:region).")] = None,
    profile: Annotated[str | None, typer.Option(
        help="AWS profile (default: the stack's aws:profile, else the standard credential chain).")] = None,
    allow_not_run: Annotated[bool, typer.Option("--allow-not-run", metavar="", help=(
        "Exit 0 even when some checks could not run (denied or failing calls).")) ] = False,
    as_json: JsonFlag = False,
    project_dir: ProjectDir = None,
    verbose: Verbose = False,
) -> None:
    """Check the AWS account before `pulumi up`, read-only: subnets and NAT, zones, instance types,
    capacity reservations, and an existing cluster. Exit 0 when every check ran and none failed, 1 on
    failures, 2 when the stack or the credentials cannot be used, 3 when checks could not run (unless
    `--allow-not-run`)."""
    from eks_devices import preflight as pf  # boto3 loads only for this verb
    from eks_devices.cli import report

    _, plan = load_plan(stack, project_dir, as_json)
    if region is not None and region != plan.spec.region:
        _fail(2, f"--region {region} differs from the stack's aws:region {plan.spec.region}: preflight checks "
                 "the region the stack deploys to (change aws:region in the stack file instead)", as_json, {})
    target = plan.spec.region
    try:
        results = pf.run_preflight(plan, pf.open_session(profile or plan.spec.aws_profile, region), region=target)
    except pf.PreflightAborted as exc:  # one line, never wrapped: scripts grep it
        if as_json:
            _emit({"error": f"preflight: {exc}"})
        else:
            err(f"preflight: {exc}")
        raise typer.Exit(2) from None
    failed = any(r.status == "fail" for r in results)
    blocked = any(r.blocked for r in results)
    if as_json:
        _emit({"stack": stack, "region": target, "planErrors": len(plan.errors), **pf.results_data(results)})
    else:
        report.print_preflight(out(), results, f"Preflight of stack {stack} in {target}", verbose)
        if plan.errors:
            out().print(f"The plan itself has {len(plan.errors)} error finding(s): run `eks-devices preview {stack}`.")
    if blocked and not as_json:
        names = ", ".join(dict.fromkeys(r.check for r in results if r.blocked))
        out().print(f"Some checks could not run ({names}): exit 3; --allow-not-run accepts that.")
    raise typer.Exit(1 if failed else 3 if blocked and not allow_not_run else 0)


@app.command(cls=_Command)
def render(
    stack: Annotated[str, typer.Argument(help=STACK_HELP)],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder to write the manifests into.")],
    as_json: JsonFlag = False,
    project_dir: ProjectDir = None,
) -> None:
    """Write every Kubernetes object the program would apply (DeviceClasses, NodePools, NodeClasses,
    claims, namespaces) and each Helm release's values as YAML, one folder per kind, for GitOps and
    review. Every object is validated first; nothing is written unless all of them pass. Values known
    only after deploy are written as `<known after deploy: ...>`. The folder is render's: a later
    render replaces what it wrote there, and a non-empty folder it did not write is refused (exit 2), as is a
    stack describing an existing cluster (the project's program would create one)."""
    from eks_devices.cli import report

    config, plan = load_plan(stack, project_dir, as_json, program=True)
    if plan.errors:
        if as_json:
            _emit({"stack": stack, "written": [], "findings": [f.as_dict() for f in plan.findings]})
        else:
            report.print_findings(out(), list(plan.findings))
            out().print("Nothing rendered: the program refuses stacks with error findings.")
        raise typer.Exit(1)
    from eks_devices.offline import render as rendering

    try:
        rendering.check_out_dir(out_dir)
    except rendering.OutputFolderError as exc:
        _fail(2, str(exc), as_json, {"written": []})
    recording = _run_offline(stack, project_dir, as_json, config, plan).recording
    items = rendering.objects(recording)
    version = rendering.schema_version(plan.spec.cluster.kubernetes)
    invalid = {item.path: found for item in items if (found := rendering.problems(item, version))}
    if invalid:
        lines = [f"{path}: {problem}" for path, found in invalid.items() for problem in found]
        _fail(1, f"{len(lines)} schema problem(s) (Kubernetes {version}), nothing written\n" + "\n".join(lines),
              as_json, {"problems": lines})
    try:
        written = rendering.write(rendering.marked(items, recording), out_dir)
    except rendering.OutputFolderError as exc:
        _fail(2, str(exc), as_json, {"written": []})
    if as_json:
        _emit({"stack": stack, "kubernetesSchema": version,
               "written": [str(p.relative_to(out_dir)) for p in written],
               "findings": [f.as_dict() for f in plan.findings]})
        return
    if plan.findings:  # warnings only: error findings rendered nothing above
        report.print_findings(out(), list(plan.findings))
    counts: dict[str, int] = {}
    for item in items:
        folder = item.path.split("/", 1)[0]
        counts[folder] = counts.get(folder, 0) + 1
    out().print(f"{len(written)} files written to {out_dir}, validated against Kubernetes {version}")
    from rich.table import Table

    table = Table()
    table.add_column("folder")
    table.add_column("files", justify="right")
    for folder, count in sorted(counts.items()):
        table.add_row(folder, str(count))
    out().print(table)


class Format(StrEnum):
    text = "text"
    json = "json"
    github = "github"


@app.command("check", cls=_Command)
def check_command(
    stacks: Annotated[list[str] | None, typer.Argument(help="Stack names (default: every stack file).")] = None,
    output: Annotated[Format, typer.Option("--format", help="text, json, or github (workflow annotations).")] =
    Format.text,
    as_json: JsonFlag = False,
    project_dir: ProjectDir = None,
    verbose: Verbose = False,
) -> None:
    """Parse, plan and check stacks without running the program: the fast path for editors,
    pre-commit hooks and CI. Exit 0 clean (warnings allowed), 1 error findings, 2 configuration
    problems or a missing stack (the worst over the stacks)."""
    from eks_devices.cli import check as checking

    collector.off()
    project = stack_file.find_project(project_dir)
    checked = checking.check(list(stacks or []), stack_file.stacks_dir(project), project)
    if as_json or output is Format.json:
        _emit({"stacks": [s.as_dict() for s in checked.stacks], "exitCode": checked.code})
    elif output is Format.github:
        sys.stdout.write("".join(line + "\n" for line in checking.github_annotations(checked, project)))
    else:
        shown = terminal.unstyled()  # check styles nothing: its fast path needs rich's width, not rich
        for s in checked.stacks:
            if s.missing:
                err(f"{s.name}: no stack file {s.path}")
            for p in s.problems:
                say(shown, f"{s.name}: {p}", hanging="    ")
            for f in s.findings:
                say(shown, f"{s.name}: {f.severity} {f.slug} at {f.path}: {cited(f.message, verbose)} "
                    f"(fix: {cited(f.fix, verbose)})", hanging="    ")
            say(shown, f"{s.name}: {s.verdict}")
    raise typer.Exit(checked.code)


@app.command(cls=_Command)
def rules(as_json: JsonFlag = False) -> None:
    """List the rule catalogue: every check run before deploy."""
    if as_json:
        _emit([{"slug": r.slug, "summary": r.summary} for r in RULES.values()])
        return
    from rich.table import Table

    table = Table(title=f"{len(RULES)} rules")
    table.add_column("slug")
    table.add_column("checks")
    for r in RULES.values():
        table.add_row(r.slug, r.summary)
    out().print(table)


@app.command("catalog", cls=_Command)
def show_catalog(
    as_json: JsonFlag = False,
    refresh: Annotated[bool, typer.Option(metavar="", help="Rewrite the snapshot from EC2 DescribeInstanceTypes "
                                               "(needs AWS credentials; read-only).")] = False,
    region: Annotated[str, typer.Option(help="Region to describe when refreshing.")] = "us-east-1",
) -> None:
    """List the accelerated instance types the toolkit knows."""
    if refresh:
        from eks_devices.preflight.catalogue import refresh as do_refresh

        try:
            count = do_refresh(region)
        except Exception as exc:  # botocore raises many kinds; all mean the same to the user here
            err(f"catalog refresh failed: {exc}")
            raise typer.Exit(1) from None
        catalog.instance_types.cache_clear()
        err(f"wrote {count} instance types")
    types = catalog.instance_types()
    if as_json:
        _emit([{**t.__dict__, "migCapable": t.mig_capable, "karpenterDraMetadata": t.karpenter_dra_metadata,
                "autoModeDraMetadata": t.auto_mode_dra_metadata} for t in types.values()])
        return
    from fractions import Fraction

    from rich.table import Table

    table = Table(title=f"{len(types)} instance types")
    for column in ("type", "arch", "GPUs", "Neuron", "EFA", "MIG",
                   f"DRA metadata (Karpenter {karpenter_metadata.pinned().release} / Auto Mode)"):
        table.add_column(column)
    for t in types.values():
        gpus = f"{t.gpu_count} x {t.gpu_model}" if t.has_nvidia else "-"
        if t.gpu_partition:
            gpus += f" ({Fraction(t.gpu_partition).limit_denominator(64)} of one)"
        neurons = f"{t.neuron_count} x {t.neuron_model}" if t.has_neuron else "-"
        table.add_row(t.name, t.architecture, gpus, neurons, str(t.max_efa_interfaces) if t.has_efa else "-",
                      "yes" if t.mig_capable else "-",
                      f"{'yes' if t.karpenter_dra_metadata else 'no'} / {'yes' if t.auto_mode_dra_metadata else 'no'}")
    out().print(table)


def main() -> NoReturn:
    """Run the command and end the process without interpreter teardown: tearing down the Pulumi
    SDK modules a preview loads takes about half a second and nothing needs it (no files are open,
    no exit handler of ours runs); the output is flushed and the exit code kept."""
    try:
        app()
        code = 0
    except SystemExit as exc:
        if isinstance(exc.code, str):
            sys.stderr.write(exc.code + "\n")
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
