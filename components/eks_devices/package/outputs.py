"""The hosted `Platform`'s `devicePlan` output, as types Pulumi's component analyzer reads: per pool
and device family the manager and why, the releases serving them, and the warnings (written from a
Plan by `component.device_plan`)."""

# No `from __future__ import annotations`: the analyzer reads these annotations at run time.

from typing import NotRequired, TypedDict


class ManagerDecision(TypedDict):
    """A pool's device manager for one family, why, and the release that runs it."""

    manager: str
    requested: str
    reason: str
    release: NotRequired[str]


class PoolDevices(TypedDict):
    """One pool in the device plan."""

    managers: dict[str, ManagerDecision]
    labels: dict[str, str]
    instance_types: list[str]


class DeviceRelease(TypedDict):
    """One Helm release of device software and the pools it serves."""

    chart: str
    version: str
    namespace: str
    family: str
    manager: str
    pools: list[str]


class PlanFinding(TypedDict):
    """A rule's warning on the configuration (error findings refuse the arguments)."""

    slug: str
    severity: str
    path: str
    message: str
    fix: str


class DevicePlan(TypedDict):
    """Per pool and device family the manager and why, the releases, and the findings."""

    mode: str
    pools: dict[str, PoolDevices]
    releases: dict[str, DeviceRelease]
    findings: list[PlanFinding]
