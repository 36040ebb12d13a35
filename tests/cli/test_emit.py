"""`--json` output is the standard library's indented, key-sorted JSON, byte for byte, whichever encoder
wrote it (`cli/app.py` `_emit`)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eks_devices.cli import app

SCALARS = (st.none() | st.booleans() | st.text(max_size=12) | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=False, allow_infinity=False))
KEYS = st.text(max_size=8)  # (a dict of int keys: below)
DOCUMENTS = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(KEYS, inner, max_size=4), max_leaves=30)


def _emitted(data: Any, monkeypatch: pytest.MonkeyPatch, stream: io.TextIOBase) -> str:
    monkeypatch.setattr("sys.stdout", stream)
    app._emit(data)
    stream.flush()
    return stream.buffer.getvalue().decode() if isinstance(stream, io.TextIOWrapper) else stream.getvalue()


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(DOCUMENTS)
def test_the_output_is_the_standard_librarys_byte_for_byte(data: Any) -> None:
    expected = json.dumps(data, indent=2, sort_keys=True) + "\n"
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _emitted(data, monkeypatch, io.TextIOWrapper(io.BytesIO(), encoding="utf-8")) == expected
        assert _emitted(data, monkeypatch, io.StringIO()) == expected


@pytest.mark.parametrize(("data", "standard"), [
    ({"pools": [{"name": "gpu", "min": 0, "ratio": 0.5, "labels": {}}], "ok": True}, False),
    ({"description": "Trainium ≥ 2"}, True),  # orjson would not escape it
    ({"big": 2**70}, True),  # orjson refuses it
    ({1: "one"}, True),  # orjson refuses a key that is no string
])
def test_orjson_writes_what_it_writes_as_the_standard_library_does(
        data: Any, standard: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[Any] = []
    monkeypatch.setattr(app, "_emit_standard", taken.append)
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    app._emit(data)
    assert taken == ([data] if standard else [])


class Writes:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return len(text)


@pytest.mark.parametrize("size", [0, 3, 5000])
def test_the_standard_path_writes_what_json_dumps_makes_in_few_slices(monkeypatch: pytest.MonkeyPatch,
                                                                      size: int) -> None:
    """The standard library's path writes in slices: the same bytes as one `json.dumps`, without holding the
    whole text (or a list of its million pieces) at once, and without one system call per piece when Python's
    streams are unbuffered (PYTHONUNBUFFERED)."""
    data = {"resources": [{"name": f"r-{i}", "inputs": {"b": [i, None, True], "a": "é\n"}} for i in range(size)],
            "stack": "dev", "empty": {}, "none": []}
    out = Writes()
    monkeypatch.setattr(app.sys, "stdout", out)
    app._emit(data)  # non-ASCII text: the standard library's path
    assert "".join(out.calls) == json.dumps(data, indent=2, sort_keys=True) + "\n"
    pieces = sum(1 for _ in json.JSONEncoder(indent=2, sort_keys=True).iterencode(data))
    assert len(out.calls) <= pieces // 8192 + 1
    if size == 5000:
        assert len(out.calls) > 1  # sliced, not built whole
