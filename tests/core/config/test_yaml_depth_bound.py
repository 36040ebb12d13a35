"""`stack_file.depth_bound` is an upper bound on how deeply YAML nests, judged by libyaml's own events, for
generated documents in every style PyYAML writes and for the layouts that nest without moving right (compact
and indentless sequences, explicit keys, single-pair mappings in flow sequences); and the event scan it
lets `read_config` skip still refuses every bomb."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from eks_devices import ConfigError
from eks_devices.core.config import stack_file

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(alphabet="ab [{:-?,}]#'\"", max_size=12))
DATA = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(alphabet="abc -:", min_size=1, max_size=6), inner,
                                                  max_size=4)), max_leaves=60)


def depth(text: str) -> int:
    """How deeply libyaml's events nest collections."""
    deepest = level = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            level += 1
            deepest = max(deepest, level)
        elif isinstance(event, yaml.CollectionEndEvent):
            level -= 1
    return deepest


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(data=DATA, flow=st.sampled_from([False, True, None]), indent=st.integers(min_value=2, max_value=9),
       width=st.integers(min_value=10, max_value=200))
def test_the_bound_holds_for_every_style_pyyaml_writes(data: Any, flow: bool | None, indent: int, width: int) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow, indent=indent, width=width)
    assert depth(text) <= stack_file.depth_bound(text), text


def compact(n: int) -> str:  # `- - - a`: each level two columns right, on one line
    return "- " * n + "a\n"


def indentless(n: int) -> str:  # a mapping's sequence at the mapping's own column: two levels per column step
    return "".join(f"{'  ' * i}k{i}:\n{'  ' * i}- " + ("\n" if i < n - 1 else "x\n") for i in range(n))


def explicit(n: int) -> str:  # `? ` keys holding compact sequences
    return "? " * n + "a\n"


def pairs(n: int) -> str:  # a single-pair mapping inside each flow sequence: two levels per bracket
    return "[a: " * n + "b" + "]" * n + "\n"


def pairs_by_line(n: int) -> str:  # the same on short lines: the brackets alone bound it
    return "[a:\n" * n + "b\n" + "]\n" * n


@pytest.mark.parametrize("layout", [compact, indentless, explicit, pairs, pairs_by_line])
@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_the_bound_holds_where_nesting_does_not_move_right(layout: Any, n: int) -> None:
    text = layout(n)
    found = depth(text)
    assert found >= n and found <= stack_file.depth_bound(text), text


def test_a_generated_thousand_pool_file_is_read_without_the_scan(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """The fast path is really taken for a large block-style file, and never where an alias is written."""
    pools = {f"pool-{i:04d}": {"instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}} for i in range(1000)}
    text = yaml.safe_dump({"config": {"eks-devices:nodePools": pools}})
    scanned: list[str] = []
    real_parse = yaml.parse
    monkeypatch.setattr(yaml, "parse", lambda stream, **kw: scanned.append(stream) or real_parse(stream, **kw))
    assert len(stack_file.config_of(text.encode(), "t")["eks-devices:nodePools"]) == 1000
    assert not scanned
    aliased = "config:\n  a: &x [1]\n  b: *x\n"
    assert stack_file.config_of(aliased.encode(), "t")["b"] == [1] and scanned == [aliased]


@pytest.mark.parametrize("text", [
    "config:\n  a: " + "[" * 300 + "]" * 300 + "\n",
    "config:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(250)) + "  " * 251 + "x\n",
    "config:\n  a: &a [1]\n" + "".join(f"  b{i}: *a\n" for i in range(stack_file.MAX_ALIASES + 1)),
])
def test_bombs_are_still_refused(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        stack_file.config_of(text.encode(), "t")
    assert info.value.problems[0].given in ("YAML nested too deeply to read",
                                            f"more than {stack_file.MAX_ALIASES} YAML aliases")
