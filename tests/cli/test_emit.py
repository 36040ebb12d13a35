"""`--json` output is written in slices: the same bytes as one `json.dumps`, without holding the whole
text (or a list of its million pieces) at once, and without one system call per piece when Python's
streams are unbuffered (PYTHONUNBUFFERED)."""

from __future__ import annotations

import json

import pytest

from eks_devices.cli import app


class Writes:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return len(text)


@pytest.mark.parametrize("size", [0, 3, 5000])
def test_emit_writes_what_json_dumps_makes_in_few_slices(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    data = {"resources": [{"name": f"r-{i}", "inputs": {"b": [i, None, True], "a": "é\n"}} for i in range(size)],
            "stack": "dev", "empty": {}, "none": []}
    out = Writes()
    monkeypatch.setattr(app.sys, "stdout", out)
    app._emit(data)
    assert "".join(out.calls) == json.dumps(data, indent=2, sort_keys=True) + "\n"
    pieces = sum(1 for _ in json.JSONEncoder(indent=2, sort_keys=True).iterencode(data))
    assert len(out.calls) <= pieces // 8192 + 1
    if size == 5000:
        assert len(out.calls) > 1  # sliced, not built whole
