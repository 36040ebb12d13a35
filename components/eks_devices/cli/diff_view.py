"""`eks-devices diff` for people: the resource changes grouped by component, then the device story."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from eks_devices.offline.diff import RESERVED_CAPACITY, Change

SYMBOL = {"create": "[green]+ create[/green]", "update": "[yellow]~ update[/yellow]",
          "replace": "[magenta]+- replace[/magenta]", "delete": "[red]- delete[/red]"}


def _detail(c: Change) -> str:
    lines = []
    if c.reasons:
        lines.extend(escape(r) for r in c.reasons)
    elif c.changed:
        lines.append("changed: " + escape(", ".join(c.changed)))
    if c.previous_urn and c.action != "replace":
        lines.append(f"was {escape(c.previous_urn)} (an alias keeps it)")
    if c.rollout:
        lines.append(f"[bold]rolls nodes[/bold]: {escape(c.rollout)}")
    if c.action == "replace" and c.delete_before_replace:
        lines.append("delete before replace: the old one goes first")
    if c.stateful and c.action in ("replace", "delete"):
        lines.append(f"[bold]stateful[/bold]: loses {escape(c.loses)}")
    if c.protected and c.action in ("replace", "delete"):
        lines.append("[red]protected[/red]: pulumi up refuses this until `protect` is lifted")
    if c.fails:
        lines.append("[red]pulumi up fails or stalls on this change[/red]")
    return "\n".join(lines)


def print_diff(console: Console, title: str, changes: list[Change], story: dict[str, Any],
               counts: dict[str, int]) -> None:
    console.print(f"[bold]{escape(title)}[/bold]")
    if not changes:
        console.print("No resource changes: pulumi up would leave every resource as it is.")
    components: dict[str, list[Change]] = {}
    for c in changes:
        components.setdefault(c.component, []).append(c)
    for component, items in components.items():
        table = Table(title=escape(component), show_lines=True, title_justify="left")
        for column in ("action", "type", "name", "why / what"):
            table.add_column(column, overflow="fold")
        for c in items:
            table.add_row(SYMBOL[c.action], escape(c.type), escape(c.name), _detail(c))
        console.print(table)
    _print_story(console, story)
    console.print(", ".join(f"{n} to {action}" for action, n in counts.items()))


def _print_story(console: Console, story: dict[str, Any]) -> None:
    if story["pools"]:
        table = Table(title="Devices per pool", show_lines=True, title_justify="left")
        for column in ("pool", "family: manager before → after", "nodes", "workloads that lose their nodes"):
            table.add_column(column, overflow="fold")
        for s in story["pools"]:
            managers = "\n".join(f"{f}: {m['before']} → {m['after']}" + (" [bold](flips)[/bold]" if m["flips"] else "")
                                 for f, m in s["managers"].items()) or "-"
            nodes = s["nodes"] + ("\nreserved capacity released first" if s["reservedCapacityReleasedFirst"]
                                  else "\nold nodes deleted first" if s["oldNodesDeletedFirst"] else "")
            held = [k for k in (s["provisioning"] if s["provisioning"] == "static" else "",
                                s["capacity"] if s["capacity"] in RESERVED_CAPACITY else "") if k]
            nodes += "".join(f"\n{k} pool" for k in held) + "".join(f"\n{why}" for why in s["rolledBecause"])
            table.add_row(escape(s["pool"]), managers, nodes, escape("\n".join(s["workloadsLosingNodes"])) or "-")
        console.print(table)
    if story["releasesRemoved"]:
        console.print("Helm releases removed: " + escape(", ".join(story["releasesRemoved"])))
    if story["releasesAdded"]:
        console.print("Helm releases added: " + escape(", ".join(story["releasesAdded"])))
    if story["nodesRolled"]:
        console.print("Nodes rolled (updated in place, every node replaced): "
                      + escape(", ".join(story["nodesRolled"])))
    for drift in story["amiDrift"]:
        console.print(f"AMI drift: pool {escape(drift['pool'])} ({escape(drift['provisioning'])}, "
                      f"{escape(drift['capacity'])}) selects {escape(drift['alias'])}: {escape(drift['why'])}")
    for warning in story["warnings"]:
        console.print("[yellow]warning[/yellow]: " + escape(warning))


def flip_warnings(flips: list[dict[str, str]], baseline: str) -> list[str]:
    """One line per `auto` manager that resolves differently than in the baseline."""
    return [f"warning: pool {f['pool']} {f['family']}: the manager flips from {f['before']} to {f['after']} "
            f"compared with {baseline}; its nodes are replaced by `pulumi up`" for f in flips]
