"""`cli/terminal.py` against rich itself: for every stream and environment that changes rich's answer, the
width and the terminal test agree with rich's Console, and `check` prints its text as rich did without
loading it (nor does any `--json`)."""

from __future__ import annotations

import io
import itertools
import os
import sys
from collections.abc import Iterator
from typing import IO

import pytest
from rich.console import Console

from eks_devices.cli import terminal
from eks_devices.cli.text import say
from support.cli import fresh
from support.stacks import ROOT

SETTINGS = {  # every variable rich's terminal and size rules read, unset (None) or set
    "TTY_COMPATIBLE": [None, "", "0", "1"],
    "FORCE_COLOR": [None, "", "1"],
    "TERM": [None, "dumb", "UNKNOWN", "xterm-256color"],
    "COLUMNS": [None, "", "0", "57", "wide"],
    "LINES": [None, "30"],
}
ENVIRONMENTS = [{k: v for k, v in zip(SETTINGS, values, strict=True) if v is not None}
                for values in itertools.product(*SETTINGS.values())]


@pytest.fixture(params=["pipe", "terminal"])
def stream(request: pytest.FixtureRequest) -> Iterator[IO[str]]:
    if request.param == "pipe":
        yield io.StringIO()
        return
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as opened:
        yield opened
    os.close(leader)


@pytest.mark.parametrize("size", [None, os.terminal_size((133, 40)), os.terminal_size((0, 0))])
def test_terminal_and_width_are_rich_s(stream: IO[str], size: os.terminal_size | None,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every environment, on a pipe and on a terminal, with no standard stream a terminal, one that is, and
    one that reports a zero size (a pseudo-terminal)."""

    def terminal_size(fd: int = 1) -> os.terminal_size:
        if size is None or fd != 2:  # only the last stream rich asks reports a size
            raise OSError("not a terminal")
        return size

    monkeypatch.setattr(os, "get_terminal_size", terminal_size)
    widths = set()
    for environ in ENVIRONMENTS:
        theirs = Console(file=stream, _environ=environ)
        assert terminal.is_terminal(stream, environ) is theirs.is_terminal, environ
        assert terminal.width(stream, environ) == theirs.width, environ
        widths.add(theirs.width)
    assert widths >= {0, 57, 80} | ({size.columns or 80} if size else set())  # every rule was reached


def test_check_prints_what_rich_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain writer gives the very text rich's Console gave `say` for the same words and width."""
    monkeypatch.setenv("COLUMNS", "44")
    words = "a finding about nodePools.gpu-very-long-pool-name-that-will-not-fit-on-one-line and its [fix] " * 3
    theirs, ours = io.StringIO(), io.StringIO()
    say(Console(file=theirs, force_terminal=True, soft_wrap=False), words, hanging="    ")
    monkeypatch.setattr(sys, "stdout", ours)
    shown = terminal.unstyled()
    say(shown, words, hanging="    ")
    assert isinstance(shown, terminal.Plain)
    assert ours.getvalue() == theirs.getvalue() and len(ours.getvalue().splitlines()) > 3


@pytest.mark.parametrize(("verb", "lines"), [(["check", "staging"], 3), (["preview", "dev", "--json"], 0)])
def test_unstyled_output_never_loads_rich(verb: list[str], lines: int) -> None:
    """`check`'s text (never styled) and any `--json` come without rich, even where rich would style:
    FORCE_COLOR set. `lines`: `check`'s two warnings and its verdict."""
    script = ("import sys\nfrom eks_devices.cli.app import app\nfrom typer.testing import CliRunner\n"
              f"r = CliRunner().invoke(app, [*{verb!r}, '--project-dir', {str(ROOT)!r}])\n"
              "print(r.exit_code, 'rich' in sys.modules, r.stdout.count('staging: '))")
    assert fresh(script, env={**os.environ, "FORCE_COLOR": "1"}).stdout.split() == ["0", "False", str(lines)]
