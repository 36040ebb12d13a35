"""Text that fits the terminal: lines wrapped at spaces only (a label, path or URN is never broken
mid-word; one longer than the width stays whole on its own line), values shown as JSON, and
upstream source citations dropped unless `--verbose` asks for them."""

from __future__ import annotations

import json
import re
import textwrap
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from eks_devices.cli.terminal import Plain

# A citation names an upstream file (`pkg/apis/v1/labels.go`, `templates/validation.yaml`) or a URL.
_SOURCE = re.compile(r"https?://|[\w.-]+/[\w./-]*\.(?:go|md|ya?ml|tpl|py|ts|json|txt)\b")
_PAREN = re.compile(r"[()]")


def value(v: Any) -> str:
    """A value as people type it in a stack file: JSON (`{"a": 1}`, `true`), never a Python repr."""
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True)


def without_citations(text: str) -> str:
    """`text` without the parenthesised groups (nested ones included) that cite an upstream source."""
    out: list[str] = []
    depth, start, kept = 0, 0, 0  # kept: where the text outside the groups resumes
    for paren in _PAREN.finditer(text):
        i = paren.start()
        if paren.group() == "(":
            if depth == 0:
                out.append(text[kept:i])
                start = i
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                group = text[start:i + 1]
                if not _SOURCE.search(group):
                    out.append(group)
                kept = i + 1
    out.append(text[start:] if depth else text[kept:])  # unbalanced: keep the rest as written
    return re.sub(r" +([,.;:])", r"\1", re.sub(r"  +", " ", "".join(out))).strip()


def cited(text: str, verbose: bool) -> str:
    return text if verbose else without_citations(text)


def lines(text: str, width: int, indent: str = "", hanging: str | None = None) -> list[str]:
    """`text` wrapped to `width` at spaces only; a word longer than the line stays whole."""
    out: list[str] = []
    for part in text.splitlines() or [""]:
        out.extend(textwrap.wrap(part, width=max(width, 20), initial_indent=indent,
                                 subsequent_indent=indent if hanging is None else hanging,
                                 break_long_words=False, break_on_hyphens=False) or [indent])
    return out


def say(console: Console | Plain, text: str, indent: str = "", hanging: str | None = None, style: str = "") -> None:
    """Print plain `text` (no markup read from it) wrapped to the console's width, in one print: a finding
    that lists a thousand pools is one call, not one per line; straight to the file when the console
    styles nothing (not a terminal, NO_COLOR), as rich would print it."""
    if console.color_system is None and not console.record:  # nothing to style: rich would pass the lines through
        console.file.write("\n".join(lines(text, console.width, indent, hanging)) + "\n")
        return
    from rich.markup import escape  # rich is loaded only where it styles (cli/terminal.py)

    wrapped = [escape(line) for line in lines(text, console.width, indent, hanging)]
    console.print("\n".join(f"[{style}]{line}[/{style}]" for line in wrapped) if style else "\n".join(wrapped),
                  overflow="ignore", crop=False, highlight=False, soft_wrap=True)
