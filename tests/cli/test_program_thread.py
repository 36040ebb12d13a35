"""The CLI's verbs that run the Pulumi program run it on a thread of its own (`offline/engine.py`
`_on_own_thread`): `check` never loads the event loop, and Ctrl-C reaches a running preview."""

from __future__ import annotations

from support.cli import fresh
from support.stacks import ROOT


def test_check_loads_neither_asyncio_nor_pulumi() -> None:
    """Only the verbs that run the program pay for the event loop's modules (and the SDK's)."""
    script = ("import sys\nfrom eks_devices.cli.app import app\nfrom typer.testing import CliRunner\n"
              f"r = CliRunner().invoke(app, ['check', 'staging', '--project-dir', {str(ROOT)!r}])\n"
              "print(r.exit_code, 'asyncio' in sys.modules, 'pulumi' in sys.modules)")
    assert fresh(script).stdout.split() == ["0", "False", "False"]


def test_ctrl_c_stops_a_preview_at_once_with_exit_130(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With the program on its own thread the command's thread waits for it, where Ctrl-C reaches it:
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
