"""Preflight results as data (for `--json`); the CLI prints them for people (`cli/report.py`)."""

from __future__ import annotations

from typing import Any

from eks_devices.preflight.model import STATUSES, CheckResult


def summary(results: list[CheckResult]) -> dict[str, int]:
    return {status: sum(1 for r in results if r.status == status) for status in STATUSES}


def results_data(results: list[CheckResult]) -> dict[str, Any]:
    return {"results": [r.as_dict() for r in results], "summary": summary(results)}
