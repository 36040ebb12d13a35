"""`eks-devices diff` for people: the resource changes grouped by component, then the device story."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from eks_devices.cli.text import cited, say
from eks_devices.core.vocabulary import reserves
from eks_devices.offline.diff import Change

SYMBOL = {"create": ("+ create", "green"), "update": ("~ update", "yellow"), "replace": ("+- replace", "magenta"),
          "delete": ("- delete", "red")}
_IN = "      "  # the indent of a change's or a pool's detail lines


def _detail(c: Change, verbose: bool) -> list[tuple[str, str]]:
    """(style, line) pairs saying why a resource changes; citations only when `verbose`."""
    lines: list[tuple[str, str]] = []
    if c.reasons:
        lines.extend(("", cited(r, verbose)) for r in c.reasons)
    elif c.changed:
        lines.append(("", "changed: " + ", ".join(c.changed)))
        if c.unknown:  # computed from a replaced resource's outputs (`diff._cascade`)
            lines.append(("", "unknown in the preview pulumi up shows (computed from a resource being replaced): "
                              + ", ".join(c.unknown)))
    if c.previous_urn and c.action != "replace":
        lines.append(("", f"was {c.previous_urn} (an alias keeps it)"))
    if c.rollout:
        lines.append(("bold", f"rolls nodes: {cited(c.rollout, verbose)}"))
    if c.action == "replace" and c.delete_before_replace:
        lines.append(("", "delete before replace: the old one goes first"))
    if c.stateful and c.action in ("replace", "delete"):
        lines.append(("bold", f"stateful: loses {c.loses}"))
    if c.protected and c.action in ("replace", "delete"):
        lines.append(("red", "protected: pulumi up refuses this until `protect` is lifted"))
    if c.fails:
        lines.append(("red", "pulumi up fails or stalls on this change"))
    return lines


def print_diff(console: Console, title: str, changes: list[Change], story: dict[str, Any],
               counts: dict[str, int], verbose: bool = False) -> None:
    """The resource changes grouped by component, then the device story; wrapped to the console's width."""
    console.print(f"[bold]{escape(title)}[/bold]")
    if not changes:
        console.print("No resource changes: pulumi up would leave every resource as it is.")
    components: dict[str, list[Change]] = {}
    for c in changes:
        components.setdefault(c.component, []).append(c)
    for component, items in components.items():
        say(console, component, style="bold")
        for c in items:
            symbol, colour = SYMBOL[c.action]
            say(console, f"{symbol} {c.type} {c.name}", indent="  ", hanging=_IN, style=colour)
            for style, line in _detail(c, verbose):
                say(console, line, indent=_IN, hanging=_IN + "  ", style=style)
    _print_story(console, story, verbose)
    console.print(", ".join(f"{n} to {action}" for action, n in counts.items()))


def _managers(s: dict[str, Any]) -> str:
    """`<family>: <manager>, …` when kept; `<family>: <old> → <new>` when it changes (`(flips)` on a kept
    pool; `-` is the side where a created or deleted pool has none)."""
    return ", ".join(f"{f}: {m['before']}" if m["before"] == m["after"] else
                     f"{f}: {m['before']} → {m['after']}" + (" (flips)" if m["flips"] else "")
                     for f, m in s["managers"].items()) or "no device managers"


def _print_story(console: Console, story: dict[str, Any], verbose: bool) -> None:
    if story["pools"]:
        console.print("[bold]Devices per pool[/bold]")
        for s in story["pools"]:
            name = s["pool"] + (f" (renamed from {s['renamedFrom']}, the same pool)" if s.get("renamedFrom") else "")
            held = [f"{k} pool" for k in (s["provisioning"] if s["provisioning"] == "static" else "",
                                          s["capacity"] if reserves(s["capacity"]) else "") if k]
            first = ("reserved capacity released first" if s["reservedCapacityReleasedFirst"]
                     else "old nodes deleted first" if s["oldNodesDeletedFirst"] else "")
            say(console, f"{name}: nodes {s['nodes']}" + "".join(f"; {k}" for k in (first, *held) if k),
                indent="  ", hanging=_IN)
            say(console, _managers(s), indent=_IN, hanging=_IN + "  ")
            for why in s["rolledBecause"]:
                say(console, f"rolled: {cited(why, verbose)}", indent=_IN, hanging=_IN + "  ")
            for who in s["workloadsLosingNodes"]:
                say(console, who, indent=_IN, hanging=_IN + "  ", style="yellow")
    if story["releasesRemoved"]:
        say(console, "Helm releases removed: " + ", ".join(story["releasesRemoved"]))
    if story["releasesAdded"]:
        say(console, "Helm releases added: " + ", ".join(story["releasesAdded"]))
    partly = {s["pool"] for s in story["pools"] if s["nodes"] == "partly rolled"}
    if whole := [p for p in story["nodesRolled"] if p not in partly]:
        say(console, "Nodes rolled (updated in place, every node replaced): " + ", ".join(whole))
    if some := [p for p in story["nodesRolled"] if p in partly]:
        say(console, "Nodes partly rolled (updated in place, only some nodes replaced): " + ", ".join(some))
    for drift in story["amiDrift"]:
        say(console, f"AMI drift: pool {drift['pool']} ({drift['provisioning']}, {drift['capacity']}) selects "
                     f"{drift['alias']}: {cited(drift['why'], verbose)}", hanging="  ")
    for warning in story["warnings"]:
        say(console, "warning: " + warning, hanging="  ", style="yellow")


def flip_warnings(flips: list[dict[str, str]], baseline: str) -> list[str]:
    """One line per `auto` manager that resolves differently than in the baseline."""
    return [f"warning: pool {f['pool']} {f['family']}: the manager flips from {f['before']} to {f['after']} "
            f"compared with {baseline}; its nodes are replaced by `pulumi up`" for f in flips]
