"""Version numbers as comparable tuples: Kubernetes minors ("1.36") and semver ("1.15.0")."""

from __future__ import annotations

import re

KUBERNETES_VERSION = re.compile(r"^(\d+)\.(\d+)$")
SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$")


def kubernetes(text: str) -> tuple[int, int]:
    """`"1.36"` → `(1, 36)`; raises ValueError for anything else."""
    match = KUBERNETES_VERSION.fullmatch(text)
    if not match:
        raise ValueError(f"not a Kubernetes minor version: {text!r}")
    return int(match[1]), int(match[2])


def semver(text: str) -> tuple[int, int, int]:
    """`"1.15.0"` → `(1, 15, 0)`; raises ValueError for anything else."""
    match = SEMVER.fullmatch(text)
    if not match:
        raise ValueError(f"not a semantic version: {text!r}")
    return int(match[1]), int(match[2]), int(match[3])


def show(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)
