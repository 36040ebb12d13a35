"""`eks-devices`: preview a stack's device plan, list the rules and the instance catalogue.

Exit codes: 0 clean (warnings allowed), 1 error findings, 2 unreadable or invalid configuration.
Every verb takes `--json` for machines.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from . import catalog, report, stack_file
from . import plan as planning
from .rules import RULES
from .spec import ConfigError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Plan, check and preview EKS clusters for GPUs, EFA and Neuron devices.")
out = Console(soft_wrap=False, width=160)
err = Console(stderr=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
ProjectDir = Annotated[Path | None, typer.Option("--project-dir", help="Directory holding Pulumi.yaml "
                                                 "(default: the nearest one above the current directory).")]


def _emit(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")


def _stacks_dir(project_dir: Path | None) -> Path:
    return stack_file.find_project(project_dir) / "stacks"


def load_plan(stack: str, project_dir: Path | None, as_json: bool) -> planning.Plan:
    """Load and plan a stack, or exit 2 with every configuration problem."""
    try:
        spec = stack_file.load(stack, _stacks_dir(project_dir))
    except stack_file.StackNotFound as exc:
        _fail(2, str(exc), as_json, {"stacks": exc.existing})
    except ConfigError as exc:
        problems = [{"path": p.path, "given": p.given, "accepted": p.accepted} for p in exc.problems]
        _fail(2, str(exc), as_json, {"problems": problems})
    return planning.build(spec)


def _fail(code: int, message: str, as_json: bool, extra: dict[str, Any]) -> None:
    if as_json:
        _emit({"error": message.splitlines()[0], **extra})
    else:
        err.print(message, markup=False, highlight=False)
    raise typer.Exit(code)


@app.command()
def preview(
    stack: Annotated[str, typer.Argument(help="Stack name: reads stacks/Pulumi.<STACK>.yaml.")] = "dev",
    as_json: JsonFlag = False,
    project_dir: ProjectDir = None,
) -> None:
    """Show the device plan of a stack: per pool and family the manager and why, the releases,
    DeviceClasses and findings. Needs no AWS account and no Pulumi CLI."""
    plan = load_plan(stack, project_dir, as_json)
    if as_json:
        _emit({"stack": stack, **report.plan_data(plan)})
    else:
        report.print_plan(out, plan, f"Stack {stack}")
    raise typer.Exit(1 if plan.errors else 0)


@app.command("preflight")
def preflight_command(
    stack: Annotated[str, typer.Argument(help="Stack name: reads stacks/Pulumi.<STACK>.yaml.")],
    region: Annotated[str | None, typer.Option(help="AWS region (default: the stack's aws:region).")] = None,
    profile: Annotated[str | None, typer.Option(help="AWS profile (default: the standard credential chain).")] = None,
    as_json: JsonFlag = False,
    project_dir: ProjectDir = None,
) -> None:
    """Check the AWS account before `pulumi up`, read-only: subnets and NAT, zones, instance types,
    capacity reservations, and an existing cluster. Exit 0 when nothing failed, 1 on failures, 2 when
    the stack or the credentials cannot be used."""
    from . import preflight as pf  # boto3 loads only for this verb

    plan = load_plan(stack, project_dir, as_json)
    target = region or plan.spec.region
    try:
        results = pf.run_preflight(plan, pf.open_session(profile, region), region=target)
    except pf.PreflightAborted as exc:  # one line, never wrapped: scripts grep it
        if as_json:
            _emit({"error": f"preflight: {exc}"})
        else:
            err.print(f"preflight: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    failed = any(r.status == "fail" for r in results)
    if as_json:
        _emit({"stack": stack, "region": target, "planErrors": len(plan.errors), **pf.results_data(results)})
    else:
        pf.print_results(out, results, f"Preflight of stack {stack} in {target}")
        if plan.errors:
            out.print(f"The plan itself has {len(plan.errors)} error finding(s): run `eks-devices preview {stack}`.")
    raise typer.Exit(1 if failed else 0)


@app.command()
def rules(as_json: JsonFlag = False) -> None:
    """List the rule catalogue: every check run before deploy."""
    if as_json:
        _emit([{"slug": r.slug, "summary": r.summary} for r in RULES.values()])
        return
    table = Table(title=f"{len(RULES)} rules")
    table.add_column("slug")
    table.add_column("checks")
    for r in RULES.values():
        table.add_row(r.slug, r.summary)
    out.print(table)


@app.command("catalog")
def show_catalog(
    as_json: JsonFlag = False,
    refresh: Annotated[bool, typer.Option(help="Rewrite the snapshot from EC2 DescribeInstanceTypes "
                                               "(needs AWS credentials; read-only).")] = False,
    region: Annotated[str, typer.Option(help="Region to describe when refreshing.")] = "us-east-1",
) -> None:
    """List the accelerated instance types the toolkit knows."""
    if refresh:
        from .catalog_refresh import refresh as do_refresh

        try:
            count = do_refresh(region)
        except Exception as exc:  # botocore raises many kinds; all mean the same to the user here
            err.print(f"catalog refresh failed: {exc}", markup=False)
            raise typer.Exit(1) from None
        catalog.instance_types.cache_clear()
        err.print(f"wrote {count} instance types")
    types = catalog.instance_types()
    if as_json:
        _emit([{**t.__dict__, "migCapable": t.mig_capable, "karpenterDraMetadata": t.karpenter_dra_metadata,
                "autoModeDraMetadata": t.auto_mode_dra_metadata} for t in types.values()])
        return
    table = Table(title=f"{len(types)} instance types")
    for column in ("type", "arch", "GPUs", "Neuron", "EFA", "MIG", "DRA metadata (Karpenter / Auto Mode)"):
        table.add_column(column)
    for t in types.values():
        gpus = f"{t.gpu_count} x {t.gpu_model}" if t.has_nvidia else "-"
        neuron = f"{t.neuron_count} x {t.neuron_model}" if t.has_neuron else "-"
        table.add_row(t.name, t.architecture, gpus, neuron, str(t.max_efa_interfaces) if t.has_efa else "-",
                      "yes" if t.mig_capable else "-",
                      f"{'yes' if t.karpenter_dra_metadata else 'no'} / {'yes' if t.auto_mode_dra_metadata else 'no'}")
    out.print(table)


def main() -> None:
    app()
