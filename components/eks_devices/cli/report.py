"""The device plan as data (for `--json`) and as text (for people), shared by the CLI verbs."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from eks_devices.core.manifests.nodes import uses_placement_group
from eks_devices.core.model import Finding, Plan
from eks_devices.core.spec.stack import FAMILIES


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
    """One row per claim and pool: "fits on: p5.48xlarge (x1 per node)" or why not."""
    if not plan.claims:
        return
    table = Table(title="Claims", show_lines=True)
    for column in ("claim", "object", "nodeSelector", "pool", "fit"):
        table.add_column(column, overflow="fold")
    for c in plan.claims:
        first = True
        selector = ", ".join(f"{k}={v}" for k, v in sorted(c.node_selector.items())) or "-"
        for name, fit in sorted(c.pools.items()):
            colour = "green" if fit.fits else "red"
            table.add_row(escape(c.name) if first else "",
                          (c.built.kind if c.built else "extended resources") if first else "",
                          escape(selector) if first else "", name, f"[{colour}]{escape(fit.summary)}[/{colour}]")
            first = False
    console.print(table)


def print_plan(console: Console, plan: Plan, title: str) -> None:
    console.print(f"[bold]{title}[/bold]  mode {plan.mode}, Kubernetes {plan.spec.cluster.version}")
    table = Table(title="Device plan", show_lines=True)
    for column in ("pool", "provisioning", "instance types", "family", "manager", "served by", "why"):
        table.add_column(column, overflow="fold")
    for name, pool in sorted(plan.pools.items()):
        first = True
        for family in FAMILIES:
            res = pool.managers[family]
            if res.manager == "none" and res.requested in ("auto", "none"):
                continue
            table.add_row(
                name if first else "",
                (pool.provisioning + (f" x{pool.replicas}" if pool.replicas is not None else "")) if first else "",
                ", ".join(pool.instance_types) if first else "",
                family, res.manager, pool.releases.get(family, "-"), res.reason)
            first = False
        if first:
            table.add_row(name, pool.provisioning, ", ".join(pool.instance_types), "-", "none", "-",
                          "no accelerated devices")
    console.print(table)
    inferred = [f"{name} ({', '.join(f for f in FAMILIES if pool.manager(f) == 'inferred')})"
                for name, pool in sorted(plan.pools.items()) if any(pool.manager(f) == "inferred" for f in FAMILIES)]
    if inferred:
        console.print(f"Inferred device managers: {escape(', '.join(inferred))}. These NodePools carry no "
                      "eks.amazonaws.com/device-manager-* label: Auto Mode makes each node a DRA node or a "
                      "device-plugin node from the Pods it launches the node for, so one pool serves both kinds "
                      "of Pods (select a node's manager by its own eks.amazonaws.com/device-manager-<family> label).")
    if plan.releases:
        rel = Table(title="Device software (Helm releases)")
        for column in ("release", "chart", "version", "namespace", "node scope", "pools"):
            rel.add_column(column, overflow="fold")
        for key, r in sorted(plan.releases.items()):
            rel.add_row(key, r.chart, r.version, r.namespace,
                        ", ".join(f"{k}={v}" for k, v in r.scope.items()), ", ".join(r.pools))
        console.print(rel)
    elif plan.mode == "auto-mode":
        console.print("Device software: none installed; Auto Mode runs its own drivers and plugins.")
    if plan.device_classes:
        dc = Table(title="DeviceClasses")
        for column in ("name", "driver", "created by", "serves extended resource"):
            dc.add_column(column)
        for c in sorted(plan.device_classes, key=lambda c: c.name):
            dc.add_row(c.name, c.driver, "eks-devices" if c.created_by_toolkit else f"chart ({c.owner})",
                       c.extended_resource_name or "-")
        console.print(dc)
    if plan.karpenter and not plan.karpenter.installed:
        console.print(f"Karpenter {plan.karpenter.version}, the cluster's own release: settings "
                      f"{json.dumps(plan.karpenter.values['settings'])} stated; the pools need DRA settings "
                      f"{json.dumps(plan.karpenter.dra_settings) if plan.karpenter.dra_settings else 'none'}, "
                      f"StaticCapacity {'on' if plan.karpenter.static_capacity else 'off'}", markup=False)
    elif plan.karpenter:
        console.print(f"Karpenter {plan.karpenter.version}: DRA settings {plan.karpenter.dra_settings or 'none'}, "
                      f"StaticCapacity {'on' if plan.karpenter.static_capacity else 'off'}")
    print_claims(console, plan)
    print_findings(console, list(plan.findings))


def print_findings(console: Console, findings: list[Finding]) -> None:
    if not findings:
        console.print("[green]No findings.[/green]")
        return
    for f in findings:
        colour = "red" if f.severity == "error" else "yellow"
        console.print(f"[{colour}]{f.severity}[/{colour}] [bold]{f.slug}[/bold] at {f.path}: {f.message}")
        console.print(f"    fix: {f.fix}")
    errors = sum(1 for f in findings if f.severity == "error")
    console.print(f"{errors} error(s), {len(findings) - errors} warning(s)")
