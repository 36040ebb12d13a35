"""Where the command's text goes: rich's Console for the verbs that style or draw tables, and a plain writer
for `check`, whose text is never styled: it needs only the width rich would wrap to, and so never loads
rich (~25 ms of its CPU at 1,000 pools, docs/performance.md).

`width` follows rich's own rule (rich/console.py: `Console.size`, `is_terminal`, `is_dumb_terminal`) where
this module can follow it; on Windows, in Jupyter and in IDLE rich has rules of its own, and rich answers.
`tests/cli/test_terminal.py` holds the width to rich's for every environment that changes it.
"""

from __future__ import annotations

import builtins
import functools
import os
import sys
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

_STD_FILENOS = (0, 1, 2)  # rich asks stdin, stdout and stderr for the terminal's size, in that order
_DUMB = ("dumb", "unknown")  # TERM values rich gives 80 columns


def _rich_has_own_rules() -> bool:
    return (sys.platform == "win32" or hasattr(builtins, "get_ipython")
            or type(sys.stdin).__module__.startswith("idlelib"))


def is_terminal(stream: IO[str], environ: Mapping[str, str]) -> bool:
    """Whether rich takes `stream` for a terminal: TTY_COMPATIBLE 0/1, else FORCE_COLOR set (non-empty), else
    the stream's isatty."""
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    if (force := environ.get("FORCE_COLOR")) is not None:
        return force != ""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed file: not a terminal to rich
        return False


def width(stream: IO[str], environ: Mapping[str, str]) -> int:
    """The width rich wraps `stream`'s text to: COLUMNS when both it and LINES are numbers; 80 on a dumb
    terminal; else COLUMNS when a number, else the size of the first standard stream that is a terminal, else 80."""
    columns, lines = environ.get("COLUMNS", ""), environ.get("LINES", "")
    if columns.isdigit() and lines.isdigit():
        return int(columns)
    if environ.get("TERM", "").lower() in _DUMB and is_terminal(stream, environ):
        return 80
    if columns.isdigit():
        return int(columns)
    for fileno in _STD_FILENOS:
        try:
            return os.get_terminal_size(fileno).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


class Plain:
    """Writes unstyled text to stdout at rich's width, as it was when made: what `text.say` needs of a console."""

    color_system = None
    record = False

    def __init__(self) -> None:
        self.file = sys.stdout
        self.width = width(self.file, os.environ)


@functools.cache
def rich_console() -> Console:
    """The process's rich Console for stdout, wrapping at the width (stderr's lines are written as they are)."""
    from rich.console import Console

    return Console(soft_wrap=False)


def unstyled() -> Console | Plain:
    """stdout for text that is never styled: the plain writer, or rich's Console where rich has rules of
    its own."""
    return rich_console() if _rich_has_own_rules() else Plain()
