"""The CLI runs the Pulumi program on a thread of its own: the SDK captures the whole Python stack for
each resource it registers, and the command's own frames need not be in it. What the program returns
or raises comes back to the caller unchanged."""

from __future__ import annotations

import asyncio
import threading
import traceback

import pytest

from eks_devices.cli import app


def test_the_work_runs_on_another_thread_with_an_event_loop_of_its_own() -> None:
    seen: dict[str, object] = {}

    def work(a: int, b: int) -> int:
        seen["thread"] = threading.current_thread()
        seen["loop"] = asyncio.get_event_loop()
        seen["depth"] = len(traceback.extract_stack())
        return a + b

    def deep(n: int) -> int:
        return app._on_fresh_thread(work, 2, 3) if n == 0 else deep(n - 1)

    assert deep(30) == 5
    assert seen["thread"] is not threading.current_thread()
    loop = seen["loop"]
    assert isinstance(loop, asyncio.AbstractEventLoop) and loop.is_closed()  # closed once the work is done
    assert seen["depth"] < 10  # none of the caller's 30 frames (and pytest's) are on the work's stack


def test_an_exception_comes_back_as_raised() -> None:
    class Refused(Exception):
        pass

    raised = Refused("no")

    def work() -> None:
        raise raised

    with pytest.raises(Refused) as caught:
        app._on_fresh_thread(work)
    assert caught.value is raised


def test_check_loads_neither_asyncio_nor_pulumi() -> None:
    """Only the verbs that run the program pay for the event loop's modules (and the SDK's)."""
    import os
    import subprocess
    import sys

    from support.stacks import ROOT

    script = ("import sys\nfrom eks_devices.cli.app import app\nfrom typer.testing import CliRunner\n"
              f"r = CliRunner().invoke(app, ['check', 'staging', '--project-dir', {str(ROOT)!r}])\n"
              "print(r.exit_code, 'asyncio' in sys.modules, 'pulumi' in sys.modules)")
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "components")})
    assert ran.stdout.split() == ["0", "False", "False"]
