"""The e2e tier: real engines as the oracle. Every test here carries the `e2e` marker and shares one
control plane per test process. Without built engines the tier is skipped (said once, with the command
that enables it); under CI (`CI` set) it fails instead, so CI never passes without it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from e2e import controlplane, pulumi_cli
from e2e.oci_registry import Registry

HERE = Path(__file__).parent
_skipped: list[str] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


# The Kubernetes minors a control plane can emulate for the tests (`control_plane_at`), each on ports of its own.
EMULATED_SLOTS = {"1.34": 1, "1.35": 2}


def _start(emulated: str = "") -> controlplane.ControlPlane:
    """Start a control plane (emulating `emulated`), or skip the test (fail it under CI) without engines."""
    try:
        return controlplane.start(emulated=emulated, slot=EMULATED_SLOTS.get(emulated, 0))
    except controlplane.EnginesMissing as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the e2e tier must run in CI, but {exc}: run `{controlplane.ENABLE}` first")
        _skipped.append(str(exc))
        pytest.skip(f"e2e tier skipped ({exc}); `{controlplane.ENABLE}` enables it")


@pytest.fixture(scope="session")
def control_plane() -> Iterator[controlplane.ControlPlane]:
    """The control plane of the engines' own Kubernetes minor (1.36)."""
    plane = _start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def control_plane_at() -> Iterator[Callable[[str], controlplane.ControlPlane]]:
    """`control_plane_at("1.34")`: a control plane emulating that Kubernetes minor (one of EMULATED_SLOTS),
    started the first time a test of this process asks for it and kept for the session."""
    started: dict[str, controlplane.ControlPlane] = {}

    def at(minor: str) -> controlplane.ControlPlane:
        if minor not in EMULATED_SLOTS:
            raise ValueError(f"no control plane emulates Kubernetes {minor!r}: one of {sorted(EMULATED_SLOTS)}")
        if minor not in started:
            started[minor] = _start(minor)
        return started[minor]

    try:
        yield at
    finally:
        for plane in started.values():
            plane.stop()



@pytest.fixture(scope="module")
def registry(control_plane: controlplane.ControlPlane) -> Iterator[Registry]:
    """A local OCI registry for charts, serving with the API server's certificate (issued for localhost
    by the control plane's CA, which the provider trusts through SSL_CERT_FILE)."""
    served = Registry(control_plane.folder / "apiserver.crt", control_plane.folder / "apiserver.key")
    yield served
    served.stop()


@pytest.fixture(scope="module")
def pulumi_env(control_plane: controlplane.ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A Pulumi home with the provider built from its Go module, a file backend, and no downloads."""
    return pulumi_cli.prepare(control_plane, tmp_path_factory.mktemp("pulumi-home"), tmp_path_factory.mktemp("backend"))


@pytest.fixture(scope="module")
def chart_env(control_plane: controlplane.ControlPlane, pulumi_env: dict[str, str]) -> dict[str, str]:
    """`pulumi_env` trusting the control plane's CA, for the provider's Helm to pull from the `registry`."""
    return {**pulumi_env, "SSL_CERT_FILE": str(control_plane.folder / "ca.crt")}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _skipped:
        terminalreporter.write_line(
            f"e2e tier (real engines) skipped: {_skipped[0]}; run `{controlplane.ENABLE}` to enable it")
