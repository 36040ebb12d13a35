"""The device plan as data (for `--json`) and as text (for people), shared by the CLI verbs. rich loads in
the functions that draw text, so `--json` never loads it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from eks_devices.cli.text import cited, say, value
from eks_devices.core.config.stack import FAMILIES
from eks_devices.core.manifests.nodes import uses_placement_group
from eks_devices.core.model import Finding, Plan

if TYPE_CHECKING:  # the preflight package loads boto3: only its verb imports it at run time
    from rich.console import Console

    from eks_devices.preflight.model import CheckResult


def plan_data(plan: Plan) -> dict[str, Any]:
    """The plan with stable keys and sorted contents, so two runs give identical JSON."""
    pools = {}
    for name, pool in sorted(plan.pools.items()):
        pools[name] = {
            "provisioning": pool.provisioning,
            "replicas": pool.replicas,
            "instanceTypes": list(pool.instance_types),
            "capacity": pool.capacity,
            "ami": pool.ami,
            "amiVersion": pool.ami_version,
            "capacityReservationIds": list(pool.config.capacity_reservation_ids),
            "availabilityZone": pool.config.availability_zone,
            "placementGroup": uses_placement_group(plan.mode, pool),
            "renamedFrom": pool.config.renamed_from,
            "managers": {
                family: {"manager": res.manager, "requested": res.requested, "reason": res.reason,
                         "release": pool.releases.get(family)}
                for family, res in pool.managers.items()
            },
            "labels": dict(sorted(pool.labels.items())),
            "taints": list(pool.taints),
        }
    releases = {
        key: {"chart": r.chart, "version": r.version, "namespace": r.namespace, "family": r.family,
              "manager": r.manager, "scope": r.scope, "pools": list(r.pools), "values": r.values}
        for key, r in sorted(plan.releases.items())
    }
    data: dict[str, Any] = {
        "mode": plan.mode,
        "kubernetesVersion": plan.spec.cluster.version,
        "pools": pools,
        "releases": releases,
        "deviceClasses": [
            {"name": c.name, "driver": c.driver, "owner": c.owner, "expression": c.expression,
             "extendedResourceName": c.extended_resource_name}
            for c in sorted(plan.device_classes, key=lambda c: c.name)
        ],
        "claims": claims_data(plan),
        "findings": [f.as_dict() for f in plan.findings],
        "summary": {"errors": len(plan.errors), "warnings": len(plan.findings) - len(plan.errors)},
    }
    if plan.karpenter:
        data["karpenter"] = {"version": plan.karpenter.version, "draSettings": plan.karpenter.dra_settings,
                             "staticCapacity": plan.karpenter.static_capacity, "values": plan.karpenter.values,
                             "installed": plan.karpenter.installed}
    return data


def claims_data(plan: Plan) -> dict[str, Any]:
    """Per declared claim: its object, nodeSelector and, per pool, whether and where it fits."""
    out: dict[str, Any] = {}
    for c in plan.claims:
        out[c.name] = {
            "kind": c.config.kind,
            "object": c.built.kind if c.built else None,
            "namespace": c.config.namespace,
            "families": list(c.families),
            "nodeSelector": dict(sorted(c.node_selector.items())),
            "pools": {
                name: {"fits": fit.fits, "summary": fit.summary,
                       "instanceTypes": {n.instance_type: {"fits": n.fits, "perNode": n.per_node, "reason": n.reason}
                                         for n in fit.nodes}}
                for name, fit in sorted(c.pools.items())
            },
        }
    return out


def print_claims(console: Console, plan: Plan) -> None:
    """Per claim its object and nodeSelector, then per pool "fits on: p5.48xlarge (x1 per node)" or why not."""
    if not plan.claims:
        return
    console.print("[bold]Claims[/bold]")
    for c in plan.claims:
        selector = ", ".join(f"{k}={v}" for k, v in sorted(c.node_selector.items())) or "-"
        say(console, f"{c.name} ({c.built.kind if c.built else 'extended resources'}), nodeSelector {selector}",
            indent="  ", hanging="      ")
        for name, fit in sorted(c.pools.items()):
            say(console, f"{name}: {fit.summary}", indent="    ", hanging="      ",
                style="green" if fit.fits else "red")


def _pinned(res: Any) -> bool:
    return res.requested not in ("auto", "none") and res.requested == res.manager


def _noted(res: Any) -> bool:
    """Whether a manager's reason is worth a line: not the default (`auto` resolving to DRA where it is
    supported, or to none where the pool has no such devices) and not simply what the stack file says."""
    return res.requested == "auto" and res.manager not in ("dra", "none", "inferred")


def print_plan(console: Console, plan: Plan, title: str, verbose: bool = False) -> None:
    """Findings first, then the pools x families matrix of managers, the reasons that are not the
    default, the releases, DeviceClasses, Karpenter settings and claims."""
    from rich import box
    from rich.markup import escape
    from rich.measure import Measurement
    from rich.table import Table

    console.print(f"[bold]{escape(title)}[/bold]  mode {plan.mode}, Kubernetes {plan.spec.cluster.version}")
    print_findings(console, list(plan.findings), verbose)
    families = [f for f in FAMILIES if any(p.managers[f].manager != "none" or p.managers[f].requested not in
                                           ("auto", "none") for p in plan.pools.values())] or list(FAMILIES)
    table = Table(title="Device managers (pool x family)", box=box.SIMPLE_HEAD, title_justify="left",
                  pad_edge=False)
    table.add_column("pool", no_wrap=True)
    table.add_column("provisioning", no_wrap=True)
    for family in families:
        table.add_column(family, no_wrap=True)
    notes: dict[str, list[str]] = {}
    for name, pool in sorted(plan.pools.items()):
        cells = []
        for family in families:
            res = pool.managers[family]
            cells.append("-" if res.manager == "none" and res.requested in ("auto", "none")
                         else res.manager + ("*" if _pinned(res) else ""))
            if _noted(res):
                notes.setdefault(res.reason, []).append(f"{name} {family}")
        table.add_row(name, pool.provisioning + (f" x{pool.replicas}" if pool.replicas is not None else ""), *cells)
    # pool names and manager words are never broken: a table wider than the terminal is printed whole
    natural = Measurement.get(console, console.options.update_width(10_000), table).maximum
    width, console.width = console.width, max(console.width, natural)
    try:
        console.print(table, crop=False)
    finally:
        console.width = width
    say(console, f"auto resolves to DRA where it is supported ({plan.mode}, Kubernetes {plan.spec.cluster.version}); "
                 "*: pinned in the stack file; -: no such devices.", indent="  ", hanging="  ")
    for reason, where in notes.items():
        say(console, f"{', '.join(where)}: {cited(reason, verbose)}", indent="  ", hanging="    ")
    inferred = [f"{name} ({', '.join(f for f in FAMILIES if pool.manager(f) == 'inferred')})"
                for name, pool in sorted(plan.pools.items()) if any(pool.manager(f) == "inferred" for f in FAMILIES)]
    if inferred:
        say(console, f"Inferred device managers: {', '.join(inferred)}. These NodePools carry no "
                     "eks.amazonaws.com/device-manager-* label: Auto Mode makes each node a DRA node or a "
                     "device-plugin node from the Pods it launches the node for, so one pool serves both kinds "
                     "of Pods (select a node's manager by its own eks.amazonaws.com/device-manager-<family> label).")
    console.print()
    if plan.releases:
        console.print("[bold]Device software (Helm releases)[/bold]")
        for key, r in sorted(plan.releases.items()):
            say(console, f"{key}: {r.chart} {r.version} in {r.namespace}, pools {', '.join(r.pools)}; "
                         f"nodes {', '.join(f'{k}={v}' for k, v in r.scope.items())}", indent="  ", hanging="    ")
    elif plan.mode == "auto-mode":
        console.print("Device software: none installed; Auto Mode runs its own drivers and plugins.")
    if plan.device_classes:
        console.print("[bold]DeviceClasses[/bold]")
        for c in sorted(plan.device_classes, key=lambda c: c.name):
            served = f", serves {c.extended_resource_name}" if c.extended_resource_name else ""
            owner = "eks-devices" if c.created_by_toolkit else f"chart ({c.owner})"
            say(console, f"{c.name}: driver {c.driver}, created by {owner}{served}", indent="  ", hanging="    ")
    karpenter = plan.karpenter
    if karpenter:
        needs = value(karpenter.dra_settings) if karpenter.dra_settings else "none"
        static = f"StaticCapacity {'on' if karpenter.static_capacity else 'off'}"
        if karpenter.installed:
            say(console, f"Karpenter {karpenter.version}: DRA settings {needs}, {static}", hanging="  ")
        else:
            say(console, f"Karpenter {karpenter.version}, the cluster's own release: settings "
                         f"{value(karpenter.values['settings'])} stated; the pools need DRA settings {needs}, {static}",
                hanging="  ")
    print_claims(console, plan)


def print_findings(console: Console, findings: list[Finding], verbose: bool = False) -> None:
    """Each finding (severity, rule, config path, message) and its fix; citations only when `verbose`."""
    if not findings:
        console.print("[green]No findings.[/green]")
        return
    errors = sum(1 for f in findings if f.severity == "error")
    console.print(f"[bold]Findings[/bold]: {errors} error(s), {len(findings) - errors} warning(s)")
    for f in findings:
        say(console, f"{f.severity} {f.slug} at {f.path}: {cited(f.message, verbose)}", indent="  ", hanging="    ",
            style="red" if f.severity == "error" else "yellow")
        say(console, f"fix: {cited(f.fix, verbose)}", indent="    ", hanging="      ")


PREFLIGHT_STYLES = {"pass": "green", "warn": "yellow", "fail": "red", "not-run": "cyan"}


def print_preflight(console: Console, results: Sequence[CheckResult], title: str, verbose: bool = False) -> None:
    """Each preflight verdict as wrapped lines (status, check, subject, detail, then its fix and the IAM
    action it lacked), fitting the terminal; citations only when `verbose`; then the counts."""
    from rich.markup import escape

    console.print(f"[bold]{escape(title)}[/bold]")
    for r in results:
        say(console, f"{r.status} {r.check} {r.subject}: {cited(r.detail, verbose)}", indent="  ", hanging="    ",
            style=PREFLIGHT_STYLES[r.status])
        fix = cited(r.fix, verbose) + (f" [needs {r.iam_action}]" if r.iam_action else "")
        if fix.strip():
            say(console, f"fix: {fix.strip()}", indent="    ", hanging="      ")
    counts = Counter(r.status for r in results)
    console.print(f"{counts['pass']} passed, {counts['warn']} warning(s), {counts['fail']} failed, "
                  f"{counts['not-run']} not run")
