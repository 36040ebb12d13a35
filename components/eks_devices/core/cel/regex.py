"""Regular expressions as CEL's `matches` reads them: RE2 (google-re2, the binding of RE2 itself), a partial
match, the pattern's errors reported as `CelError` rather than logged to stderr."""

from __future__ import annotations

from functools import cache
from typing import Any

import re2
from celpy import celtypes

from eks_devices.core.cel.errors import CelError

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 otherwise writes every refused pattern to stderr


@cache
def compile_pattern(pattern: str) -> Any:
    """The compiled pattern; CelError naming RE2's reason when RE2 refuses it (lookahead, backreferences)."""
    try:
        return re2.compile(pattern, options=_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise CelError(f"invalid regular expression {pattern!r} (RE2: {reason})") from None


def matches(text: Any, pattern: Any) -> celtypes.BoolType:
    """`text.matches(pattern)`: whether RE2 finds the pattern anywhere in the text (cel-go `matches`)."""
    if not isinstance(text, str) or not isinstance(pattern, str):  # celpy concatenates to a plain str
        raise TypeError(f"no such overload: matches on {type(text).__name__} and {type(pattern).__name__}")
    return celtypes.BoolType(compile_pattern(str(pattern)).search(str(text)) is not None)
