"""Preflight results as data (for `--json`) and as a table (for people)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from eks_devices.preflight.model import STATUSES, CheckResult

COLOURS = {"pass": "green", "warn": "yellow", "fail": "red", "not-run": "cyan"}


def summary(results: list[CheckResult]) -> dict[str, int]:
    return {status: sum(1 for r in results if r.status == status) for status in STATUSES}


def results_data(results: list[CheckResult]) -> dict[str, Any]:
    return {"results": [r.as_dict() for r in results], "summary": summary(results)}


def print_results(console: Console, results: list[CheckResult], title: str) -> None:
    table = Table(title=title, show_lines=True)
    for column in ("status", "check", "subject", "detail", "fix"):
        table.add_column(column, overflow="fold")
    for r in results:
        fix = r.fix + (f" [needs {r.iam_action}]" if r.iam_action else "")
        table.add_row(Text(r.status, style=COLOURS[r.status]), Text(r.check), Text(r.subject), Text(r.detail),
                      Text(fix))
    console.print(table)
    counts = summary(results)
    console.print(f"{counts['pass']} passed, {counts['warn']} warning(s), {counts['fail']} failed, "
                  f"{counts['not-run']} not run")
