"""The CLI runs the Pulumi program on a thread of its own: the SDK captures the whole Python stack for
each resource it registers, and the command's own frames need not be in it. What the program returns
or raises comes back to the caller unchanged."""

from __future__ import annotations

import asyncio
import threading
import traceback

import pytest

from eks_devices.cli import app
from support.cli import fresh
from support.stacks import ROOT


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
    # the thread's body and the work: none of the caller's 30 frames (and pytest's), nor `threading`'s
    assert seen["depth"] == 2


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
    script = ("import sys\nfrom eks_devices.cli.app import app\nfrom typer.testing import CliRunner\n"
              f"r = CliRunner().invoke(app, ['check', 'staging', '--project-dir', {str(ROOT)!r}])\n"
              "print(r.exit_code, 'asyncio' in sys.modules, 'pulumi' in sys.modules)")
    assert fresh(script).stdout.split() == ["0", "False", "False"]


def test_ctrl_c_stops_a_preview_at_once_with_exit_130(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With the program on its own thread the command's thread waits in `join`, where Ctrl-C reaches it:
    the preview stops at once (exit 130, nothing on stdout). Before, Ctrl-C while the SDK's event loop
    registered the resources was lost and the preview ran to the end."""
    import signal
    import subprocess
    import sys
    import time

    import yaml

    from support import stacks
    from support.cli import environment
    from support.stacks import ROOT

    pools = {f"pool-{i:03d}": {"instanceTypes": ["g6.xlarge"]} for i in range(1000)}
    (tmp_path / "Pulumi.yaml").write_text("name: eks-devices\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.big.yaml").write_text(yaml.safe_dump({"config": stacks.config(pools=pools)}))
    child = subprocess.Popen([sys.executable, "-m", "eks_devices", "preview", "big", "--json", "--project-dir",
                              str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment(),
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert child.stderr is not None
        assert "running the Pulumi program" in child.stderr.readline().decode()
        time.sleep(1.5)  # the program's resources are registering (1,000 pools take seconds)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=30)
    finally:
        child.kill()
    assert (child.returncode, out) == (130, b"")
