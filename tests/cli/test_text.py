"""`cli.text`: wrapping at spaces only, JSON values, and citations dropped unless verbose."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from eks_devices.cli.text import cited, lines, say, value, without_citations
from eks_devices.core.knowledge import rollouts


def test_a_nested_citation_is_dropped_and_plain_parentheses_stay() -> None:
    text = "labels: its nodes are replaced (" + rollouts.source(rollouts.NODE_POOL) + ")"
    assert without_citations(text) == "labels: its nodes are replaced"
    assert without_citations("x (see https://docs.aws.amazon.com/eks/) and (x1 per node).") == "x and (x1 per node)."
    assert without_citations("fits on: p5.48xlarge (x1 per node)") == "fits on: p5.48xlarge (x1 per node)"
    assert cited(text, verbose=True) == text


def test_values_are_json() -> None:
    assert value({"enableDRA": True}) == '{"enableDRA": true}'
    assert value(["a", 1]) == '["a", 1]' and value("plain") == "plain" and value(None) == "null"


WORD = st.text(alphabet="abcdefghij./=-_:", min_size=1, max_size=40)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(words=st.lists(WORD, min_size=1, max_size=30), width=st.integers(min_value=20, max_value=120))
def test_lines_never_break_a_word_and_fit_unless_one_word_is_longer(words: list[str], width: int) -> None:
    out = lines(" ".join(words), width, indent="  ", hanging="    ")
    assert [w for line in out for w in line.split()] == words  # every word whole, in order
    for line in out:
        assert len(line) <= width or len(line.split()) == 1


def test_say_prints_no_line_longer_than_the_console() -> None:
    console = Console(file=io.StringIO(), width=40, color_system=None)
    say(console, "label eks-devices.io/device-manager-nvidia=device-plugin on every node of pool a", indent="  ")
    printed = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert printed == ["  label", "  eks-devices.io/device-manager-nvidia=device-plugin", "  on every node of pool a"]


def _char_by_char(text: str) -> str:
    """The reading of citations the scan by parentheses replaced: one character at a time."""
    import re

    from eks_devices.cli.text import _SOURCE

    out: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0 and not _SOURCE.search(text[start:i + 1]):
                out.append(text[start:i + 1])
            continue
        if depth == 0:
            out.append(ch)
    if depth:
        out.append(text[start:])
    return re.sub(r" +([,.;:])", r"\1", re.sub(r"  +", " ", "".join(out))).strip()


PIECE = st.sampled_from(["(", ")", " ", "a", "x1 per node", "see https://x.io/", "pkg/a.go", ",", ".", "  "])


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(pieces=st.lists(PIECE, max_size=25))
def test_citations_drop_as_a_character_by_character_reading_drops_them(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert without_citations(text) == _char_by_char(text)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(words=st.lists(st.text(alphabet="ab[]/=:(). ", min_size=1, max_size=30), min_size=1, max_size=20),
       width=st.integers(min_value=20, max_value=100), style=st.sampled_from(["", "bold", "red"]))
def test_say_without_styles_prints_what_rich_prints(words: list[str], width: int, style: str) -> None:
    """A console that styles nothing (not a terminal, as under CI or a pipe) is written to directly;
    the bytes are rich's own (a recording console still goes through rich)."""
    direct = Console(file=io.StringIO(), width=width, color_system=None)
    through_rich = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    text = " ".join(words)
    say(direct, text, indent="  ", hanging="    ", style=style)
    say(through_rich, text, indent="  ", hanging="    ", style=style)
    assert direct.file.getvalue() == through_rich.file.getvalue()  # type: ignore[attr-defined]
