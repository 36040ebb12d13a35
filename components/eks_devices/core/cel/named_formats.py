"""Kubernetes' format library (in the base environment from 1.31), for cel-python.

k8s.io/apiserver v0.36.3 `pkg/cel/library/format.go`: `format.named(name)` gives an optional `NamedFormat`
(`optional.none()` for an unknown name), `format.<name>()` gives one directly, and `<format>.validate(s)` gives
`optional.none()` when `s` is valid, else the validator's messages as an optional list of strings. Formats are
equal when their names are (`pkg/cel/format.go` `Format.Equal`). The validators are Kubernetes' own, whose
patterns and messages are kept here as facts:

- the names: k8s.io/apimachinery v0.36.3 `pkg/api/validation/generic.go` (`NameIsDNSLabel`, `NameIsDNSSubdomain`,
  `NameIsDNS1035Label`; a prefix has its trailing dash masked by `maskTrailingDash`, which replaces the last
  two bytes with `a`), `pkg/util/validation/validation.go` (`IsDNS1123Label`, `IsDNS1123Subdomain`,
  `IsDNS1035Label`: lengths in bytes, "characters" in the message) and `pkg/api/validate/content/kube.go`
  (`IsLabelKey` for `qualifiedName`, `IsLabelValue`: "bytes" in the message);
- `uri`: Go's `url.ParseRequestURI` (`urls.py`), its error as Go prints it (`parse "<s>": <reason>`);
- `uuid`, `byte`, `date`, `datetime`: k8s.io/kube-openapi `pkg/validation/strfmt` (`UUIDPattern`, govalidator's
  `Base64` pattern, `IsDate`: Go's `time.Parse("2006-01-02")`, `IsDateTime`: a date, `t`, then
  `DateTimePattern` on what follows the first `t` only).

Go's regexp anchors `$` at the very end (Python's `$` also before a final newline): patterns are matched with
`fullmatch`, on the string's UTF-8 bytes where Go counts or slices bytes.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celpy import celtypes

from eks_devices.core.cel.optional import NONE, Optional
from eks_devices.core.cel.urls import go_quote, parse_request_uri

LIBRARY = "Kubernetes' format library"

# k8s.io/apimachinery v0.36.3 pkg/util/validation/validation.go and pkg/api/validate/content/{dns,kube}.go
_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _LABEL_KEY + ")?"
_DNS1123_LABEL_MESSAGE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                          "must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_MESSAGE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                              "or '.', and must start and end with an alphanumeric character")
_DNS1035_LABEL_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                          "alphabetic character, and end with an alphanumeric character")
_LABEL_KEY_MESSAGE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                      "alphanumeric character")
_LABEL_VALUE_MESSAGE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                        "'.', and must start and end with an alphanumeric character")
# k8s.io/kube-openapi pkg/validation/strfmt/default.go, time.go; pkg/internal/third_party/govalidator/patterns.go
_UUID = "[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}"
_BASE64 = "(?:[A-Za-z0-9+\\/]{4})*(?:[A-Za-z0-9+\\/]{2}==|[A-Za-z0-9+\\/]{3}=|[A-Za-z0-9+\\/]{4})"
_TIME = "([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))"


def _matches(pattern: str, raw: bytes, flags: int = 0) -> bool:
    return re.fullmatch(pattern.encode(), raw, flags) is not None


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery `RegexError`: the message, its examples and the pattern."""
    shown = "".join(f"{' or ' if i else ''}'{example}', " for i, example in enumerate(examples))
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _too_long(limit: int, unit: str) -> str:
    return f"must be no more than {limit} {unit}"


def _dns1123_label(raw: bytes) -> list[str]:
    errors = [_too_long(63, "characters")] if len(raw) > 63 else []
    if not _matches(_DNS1123_LABEL, raw):
        errors.append("must not contain dots" if _matches(_DNS1123_SUBDOMAIN, raw) else _regex_error(
            _DNS1123_LABEL_MESSAGE, _DNS1123_LABEL, "my-name", "123-abc"))
    return errors


def _dns1123_subdomain(raw: bytes, unit: str = "characters") -> list[str]:
    errors = [_too_long(253, unit)] if len(raw) > 253 else []
    if not _matches(_DNS1123_SUBDOMAIN, raw):
        errors.append(_regex_error(_DNS1123_SUBDOMAIN_MESSAGE, _DNS1123_SUBDOMAIN, "example.com"))
    return errors


def _dns1035_label(raw: bytes) -> list[str]:
    errors = [_too_long(63, "characters")] if len(raw) > 63 else []
    if not _matches(_DNS1035_LABEL, raw):
        errors.append(_regex_error(_DNS1035_LABEL_MESSAGE, _DNS1035_LABEL, "my-name", "abc-123"))
    return errors


def _prefix(validate: Callable[[bytes], list[str]]) -> Callable[[bytes], list[str]]:
    """A name that will have a suffix appended (`maskTrailingDash`: `ab-` is checked as `aa`)."""
    def apply(raw: bytes) -> list[str]:
        return validate(raw[:-2] + b"a" if len(raw) > 1 and raw.endswith(b"-") else raw)
    return apply


def _qualified_name(raw: bytes) -> list[str]:
    """`IsLabelKey`: an optional DNS subdomain prefix and `/`, then a name of at most 63 bytes."""
    key_error = _regex_error(_LABEL_KEY_MESSAGE, _LABEL_KEY, "MyName", "my.name", "123-abc")
    parts = raw.split(b"/")
    if len(parts) > 2:
        return [f"a valid label key {key_error} with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    errors: list[str] = []
    if len(parts) == 2:
        if not parts[0]:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend(f"prefix part {e}" for e in _dns1123_subdomain(parts[0], "bytes"))
    name = parts[-1]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append(f"name part {_too_long(63, 'bytes')}")
    if not _matches(_LABEL_KEY, name):
        errors.append(f"name part {key_error}")
    return errors


def _label_value(raw: bytes) -> list[str]:
    errors = [_too_long(63, "bytes")] if len(raw) > 63 else []
    if not _matches(_LABEL_VALUE, raw):
        errors.append(_regex_error(_LABEL_VALUE_MESSAGE, _LABEL_VALUE, "MyValue", "my_value", "12345"))
    return errors


def _uri(raw: bytes) -> list[str]:
    reason = parse_request_uri(raw)
    return [] if reason is None else [f"parse {go_quote(raw)}: {reason}"]


def _is_date(raw: bytes) -> bool:
    """Go `time.Parse("2006-01-02", s)`: four, two and two ASCII digits, a month and a day of that month."""
    if not _matches("[0-9]{4}-[0-9]{2}-[0-9]{2}", raw):
        return False
    year, month, day = int(raw[:4]), int(raw[5:7]), int(raw[8:])
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]


def _is_datetime(text: str) -> bool:
    """strfmt `IsDateTime`: lowered, split on `t`; the first part a date, the second the time pattern."""
    if len(text.encode()) < 4:
        return False
    # Go lowers every letter, but only `t` and `z` decide here (`.` in the pattern takes any character)
    parts = text.translate(_ASCII_LOWER).split("t")
    if len(parts) < 2 or not _is_date(parts[0].encode()):
        return False
    found = re.fullmatch(_TIME, parts[1])
    return found is not None and found[1] <= "23" and found[2] <= "59" and found[3] <= "59"


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _check(test: Callable[[bytes], bool], message: str) -> Callable[[bytes], list[str]]:
    return lambda raw: [] if test(raw) else [message]


# the library's names, each with its validator (format.go `ConstantFormats`)
VALIDATORS: dict[str, Callable[[bytes], list[str]]] = {
    "dns1123Label": _dns1123_label,
    "dns1123Subdomain": _dns1123_subdomain,
    "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name,
    "dns1123LabelPrefix": _prefix(_dns1123_label),
    "dns1123SubdomainPrefix": _prefix(_dns1123_subdomain),
    "dns1035LabelPrefix": _prefix(_dns1035_label),
    "labelValue": _label_value,
    "uri": _uri,
    "uuid": _check(lambda raw: _matches(_UUID, raw, re.IGNORECASE), "does not match the UUID format"),
    "byte": _check(lambda raw: _matches(_BASE64, raw), "invalid base64"),
    "date": _check(_is_date, "invalid date"),
    "datetime": _check(lambda raw: _is_datetime(raw.decode()), "invalid datetime"),
}


@dataclass(frozen=True)
class NamedFormat:
    """A CEL `kubernetes.NamedFormat`: one of the library's formats, equal to another of the same name."""
    name: str

    def __repr__(self) -> str:
        return f"format.{self.name}()"


def _named(name: Any) -> Optional:
    if not isinstance(name, str):
        raise TypeError(f"no such overload: format.named on {type(name).__name__}")
    return Optional(NamedFormat(str(name)), True) if str(name) in VALIDATORS else NONE


def validate(fmt: Any, text: Any) -> Optional:
    """`<format>.validate(s)`: `optional.none()` if valid, else the messages."""
    if not isinstance(fmt, NamedFormat) or not isinstance(text, str):
        raise TypeError(f"no such overload: validate on {type(fmt).__name__}, {type(text).__name__}")
    errors = VALIDATORS[fmt.name](str(text).encode())
    return Optional(celtypes.ListType(celtypes.StringType(e) for e in errors), True) if errors else NONE


def left_dispatched(equality: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """`==` / `!=` with a format on the left: cel-go asks the left operand (`types.Equal`), and `Format.Equal`
    (k8s.io/apiserver v0.36.3 `pkg/cel/format.go`) gives "no such overload" for anything but a format; a format
    on the right of another value is simply unequal."""
    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, NamedFormat) and not isinstance(b, NamedFormat):
            raise TypeError(f"no such overload: _==_ on NamedFormat, {type(b).__name__}")
        return equality(a, b)
    return apply


def _constant(name: str) -> Callable[[], NamedFormat]:
    return lambda: NamedFormat(name)


FUNCTIONS: dict[str, Any] = {"format.named": _named, "validate": validate,
                             **{f"format.{name}": _constant(name) for name in VALIDATORS}}
NAMESPACED = {name for name in FUNCTIONS if name.startswith("format.")}
# k8s.io/apiserver v0.36.3 pkg/cel/environment/base.go introduces the library at 1.31: a 1.32 API server, which
# checks new selectors against 1.31's environment, is the first to accept it (`extensions.ACCEPTED_FROM`)
ACCEPTED_FROM: dict[str, tuple[tuple[int, int], str]] = {name: ((1, 32), LIBRARY) for name in FUNCTIONS}
