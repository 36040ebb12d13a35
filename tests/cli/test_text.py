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
