"""The `eks-devices` command, and Python snippets, as subprocesses running this checkout's package
(components/), not whatever an editable install of the environment points at."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.stacks import ROOT

COMPONENTS = ROOT / "components"


def environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (the current environment unless given) with this checkout's components/ first on PYTHONPATH."""
    out = dict(os.environ if env is None else env)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(COMPONENTS), out.get("PYTHONPATH", "")) if p)
    return out


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, command: tuple[str, ...] | None = None,
        timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """`python -m eks_devices <args>` (or `python <command> <args>`) in `cwd`."""
    head = command if command is not None else ("-m", "eks_devices")
    return subprocess.run([sys.executable, *head, *args], cwd=cwd, env=environment(env), capture_output=True,
                          text=True, timeout=timeout)


def fresh(script: str, cwd: Path = ROOT, env: dict[str, str] | None = None,
          timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """`python -c script` in a fresh interpreter, for what this one has imported already (which modules a
    path loads), with this checkout's components/ and tests/ importable; fails the test, with the
    script's stderr, unless it exits 0."""
    out = environment(env)
    out["PYTHONPATH"] = os.pathsep.join((out["PYTHONPATH"], str(ROOT / "tests")))
    ran = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=out, capture_output=True, text=True,
                         timeout=timeout)
    assert ran.returncode == 0, ran.stderr
    return ran


def git(root: Path, *args: str) -> None:
    """`git <args>` in `root` as a throwaway author, for a project whose history a test makes."""
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root, check=True,
                   capture_output=True)
