"""Kubernetes' format library in DRA selectors (`core/cel/named_formats.py`): what each format accepts and the
messages it gives, what the type checker and the cost estimate refuse, and the minor it is accepted from. Every
refusal here is one a real 1.36 API server makes; `tests/e2e/test_cel_selectors.py` keeps the evaluations
against its scheduler."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eks_devices.core import cel
from eks_devices.core.cel import named_formats

EFA = cel.device("dra.net", {"rdma": True, "rdmaDevice": "rdmap0", "pciAddress": "0000:00:05.0"})
# apimachinery's RegexError, word for word (its examples joined with "',  or '")
LABEL_RULE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
              "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def messages(name: str, text: str) -> list[str]:
    """What `format.<name>().validate(text)` holds: [] for optional.none()."""
    found = named_formats.validate(named_formats.NamedFormat(name), text)
    return [str(m) for m in found.value] if found.present else []


@pytest.mark.parametrize(("name", "valid", "invalid"), [
    ("dns1123Label", ["a", "0-a", "a" * 63], ["", "A", "a-", "-a", "a.b", "a" * 64, "a_b", "é"]),
    ("dns1123Subdomain", ["a.b-c.d", "0", "a" * 253], ["a..b", "a.", ".a", "A.b", "a" * 254, "a/b"]),
    ("dns1035Label", ["a", "a-0"], ["0a", "a-", "a.b", ""]),
    ("qualifiedName", ["a", "A.b_c-d", "example.com/MyName", "a" * 63], ["", "/a", "a/", "a/b/c", "-a", "A.com/x",
                                                                          "a" * 64]),
    # maskTrailingDash replaces the last two bytes with `a`: `A-` is checked as `a`, `ab-` as `aa`
    ("dns1123LabelPrefix", ["a-", "ab-", "A-", "a"], ["-", "a_b-", "-a", "Ab-", "a.b"]),
    ("dns1123SubdomainPrefix", ["a.b-", "a.-", "x-", "a..-"], ["a...-", ".a-"]),
    ("dns1035LabelPrefix", ["a-", "0-"], ["0a-", "0"]),
    ("labelValue", ["", "a", "A_b.c-D", "a" * 63], ["-a", "a-", "a/b", "a" * 64, "a b"]),
    ("uri", ["/a", "https://h/p?q#f", "mailto:x@y", "*"], ["", "a", "../a", "https://a:1:2/", "http://[1.2.3.4]/"]),
    ("uuid", ["123e4567-e89b-12d3-a456-426614174000", "123E4567E89B12D3A456426614174000"],
     ["123e4567-e89b-12d3-a456-42661417400", "g23e4567-e89b-12d3-a456-426614174000",
      "123e4567-e89b-12d3-a456-426614174000\n"]),
    ("byte", ["aGVsbG8=", "aGk=", "YWJj", "+/+/"], ["", "aGVsbG8", "a===", "aGVs bG8=", "YWJj\n"]),
    # Go's time.Parse("2006-01-02"): year 0 and leap days of leap years
    ("date", ["2021-01-01", "0000-02-29", "2024-02-29", "2000-02-29"],
     ["2023-02-29", "1900-02-29", "2021-1-01", "2021-13-01", "2021-00-10", "2021-01-32", "20210101", "2021-01-01 "]),
    # strfmt IsDateTime: what follows the first `t` alone must match, `.` takes any character
    ("datetime", ["2021-01-01T00:00:00Z", "2021-01-01t23:59:59.5+01:00", "2021-01-01T00:00:00x5z",
                  "2021-01-01T00:00:00ZTanything"],
     ["2021-01-01", "2021-01-01T24:00:00Z", "2021-01-01T00:60:00Z", "2021-13-01T00:00:00Z", "2021-01-01T00:00:00",
      "2021-01-01T00:00:00Z\n", "abc"]),
])
def test_each_format_accepts_what_kubernetes_validation_accepts(name: str, valid: list[str],
                                                                invalid: list[str]) -> None:
    assert {v: messages(name, v) for v in valid} == {v: [] for v in valid}
    assert [v for v in invalid if not messages(name, v)] == []


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("dns1123Label", "A", [LABEL_RULE]),
    ("dns1123Label", "a.b", ["must not contain dots"]),
    ("dns1123Label", "a" * 64, ["must be no more than 63 characters"]),
    ("dns1123Label", "a" * 64 + ".", ["must be no more than 63 characters", LABEL_RULE]),
    ("labelValue", "a" * 64, ["must be no more than 63 bytes"]),
    ("qualifiedName", "/a", ["prefix part must be non-empty"]),
    ("qualifiedName", "A.com/", [
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        "name part must be non-empty",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
    ("uri", "x", ['parse "x": invalid URI for request']),
    ("uri", 'https://a:1:2/"\n', ['parse "https://a:1:2/\\"\\n": net/url: invalid control character in URL']),
    ("uri", "https://a:1:2/", ['parse "https://a:1:2/": invalid port ":1:2" after host']),
    ("uri", "/%zé", ['parse "/%zé": invalid URL escape "%z\\xc3"']),
    ("uri", "http://[1.2.3.4]/", ['parse "http://[1.2.3.4]/": invalid IP-literal']),
    ("uuid", "x", ["does not match the UUID format"]),
    ("byte", "x", ["invalid base64"]),
    ("date", "x", ["invalid date"]),
    ("datetime", "x", ["invalid datetime"]),
])
def test_validate_gives_kubernetes_messages(name: str, text: str, expected: list[str]) -> None:
    assert messages(name, text) == expected


@pytest.mark.parametrize("expression", [
    "!format.dns1123Label().validate(device.attributes['dra.net'].rdmaDevice).hasValue()",
    "format.named('dns1123Label').value().validate('A').hasValue() && !format.named('nope').hasValue()",
    "format.named(device.driver).orValue(format.uuid()) == format.uuid()",  # not a format's name: none
    "format.uuid() == format.named('uuid').value() && format.uuid() in [format.byte(), format.uuid()]",
    "format.dns1123Label().validate('a.b').value() == ['must not contain dots']",
    "format.uri().validate('x').value()[0] == 'parse \"x\": invalid URI for request'",
    "[format.uuid(), format.byte()].all(f, f.validate('aGVsbG8=').hasValue() != (f == format.byte()))",
    "cel.bind(f, format.date(), !f.validate('2024-02-29').hasValue() && f.validate('2023-02-29').hasValue())",
    "device.attributes['dra.net'].exists(k, !format.named(k).hasValue())",
])
def test_selectors_use_the_library(expression: str) -> None:
    cel.compile_expression(expression)
    assert cel.evaluate(expression, EFA) is True


@pytest.mark.parametrize(("expression", "message"), [
    # the type checker
    ("format.named(1).hasValue()", r"'format.named' applied to \(int\)"),
    ("format.dns1123Label('x').validate('x').hasValue()", r"'format.dns1123Label' applied to \(string\)"),
    ("format.nope().validate('x').hasValue()", "undeclared reference to 'format'"),
    ("format.dns1123Label.validate('x').hasValue()", "undeclared reference to 'format'"),
    ("format.dns1123Label().validate(1).hasValue()", r"'validate' applied to \(kubernetes.NamedFormat.\(int\)\)"),
    ("format.dns1123Label().validate('a', 'b').hasValue()", r"'validate' applied to \(kubernetes.NamedFormat"),
    ("format.dns1123Label().validate('a')", "must return a bool, not optional"),
    ("format.dns1123Label() == 'dns1123Label'", r"'_==_' applied to \(kubernetes.NamedFormat, string\)"),
    ("format.uuid() < format.byte()", r"'_<_' applied to \(kubernetes.NamedFormat, kubernetes.NamedFormat\)"),
    ("'abc'.validate('x').hasValue()", r"'validate' applied to \(string.\(\)\)"),
    ("format.named('uuid').validate('x').hasValue()", r"'validate' applied to \(optional.\(\)\)"),
    ("format.dns1123Label().hasValue()", r"'hasValue' applied to \(kubernetes.NamedFormat.\(\)\)"),
    ("[format.uuid(), 1].size() == 2", "expected type 'kubernetes.NamedFormat' but found 'int'"),
    ("'%s'.format([format.uuid()]) == 'x'", "was given kubernetes.NamedFormat"),
    ("string(format.uuid()) == 'x'", r"'string' applied to \(kubernetes.NamedFormat\)"),
    ("optional.of(1).value() == 'a'", r"'_==_' applied to \(int, string\)"),
    # the cost estimate
    ("format.dns1123Label() != format.uuid()", "too complex"),
    ("format.named('uuid') == format.named('uuid')", "too complex"),
    ("device.driver.split('.').exists(p, format.dns1123Label().validate(p).hasValue())", "too complex"),
    ("format.uuid().validate(device.driver.charAt(1)).hasValue()", "too complex"),
    ("format.uuid().validate(url('/a').getHost()).hasValue()", "too complex"),
    ("format.uuid().validate('%s'.format([device.driver])).hasValue()", "too complex"),
    ("format.uuid().validate(url('/a?b=c').getQuery()['b'][0]).hasValue()", "too complex"),
    ("format.uuid().validate('x').value().exists(m, m.contains('UUID'))", "too complex"),
    ("format.uuid().validate('x').value()[0] + 'a' == 'a'", "too complex"),
    ("format.uuid().validate('x').value().join(', ') == 'x'", "too complex"),
    # the same unsized strings under the other size-dependent functions
    ("'%s'.format(['a']) + 'b' == 'ab'", "too complex"),
    ("device.driver.charAt(0).lowerAscii() == 'a'", "too complex"),
    ("isQuantity(device.driver.charAt(0))", "too complex"),
    ("url('/a').getEscapedPath().matches('a')", "too complex"),
    ("url('/?a=b').getQuery()['a'].exists(v, v.contains('b'))", "too complex"),
])
def test_the_compiler_refuses_what_the_api_server_refuses(expression: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(expression)


@pytest.mark.parametrize("expression", [
    "format.named(device.driver.split('.')[0]).hasValue()",  # a map lookup: cost 1
    "format.dns1123Subdomain().validate(device.driver + device.attributes['dra.net'].rdmaDevice).hasValue()",
    "format.uuid().validate(device.driver.replace('a', 'bb').substring(1).trim().upperAscii()).hasValue()",
    "lists.range(64).all(i, format.dns1123Subdomain().validate(device.driver).hasValue())",
    "'%s'.format(['a']).startsWith('a') && device.driver.charAt(0) == 'd'",
    "format.dns1123Label() == format.dns1123Label()",
    "format.uuid() == device.attributes['dra.net'].rdmaDevice",  # an attribute value (AnyType): bounded
])
def test_the_cost_estimate_bounds_these(expression: str) -> None:
    cel.compile_expression(expression)


def test_a_format_on_the_left_of_another_value_is_an_error() -> None:
    """cel-go dispatches `==` on the left operand: a string is unequal to a format, a format's `Equal` refuses."""
    assert cel.evaluate("!(device.attributes['dra.net'].rdmaDevice == format.uuid())", EFA) is True
    with pytest.raises(cel.CelError, match="no matching overload"):
        cel.evaluate("!(format.uuid() == device.attributes['dra.net'].rdmaDevice)", EFA)


def test_the_library_is_accepted_from_1_32() -> None:
    """base.go introduces it at 1.31; a server checks new selectors against its previous minor's environment."""
    expression = "format.named('uuid').hasValue() && !format.dns1123Label().validate(device.driver).hasValue()"
    cel.compile_expression(expression, (1, 32))
    with pytest.raises(cel.CelError, match=r"Kubernetes' format library \(format.dns1123Label, format.named, "
                                           r"validate\) is refused by a Kubernetes 1.31 API server"):
        cel.compile_expression(expression, (1, 31))


# -- generated names against oracles written from the formats' definitions, not their patterns -----------
_NAME_CHARS = "abz09-.A_é"


def _label_oracle(text: str, first: str) -> bool:
    """RFC 1123 / 1035 label: 1-63 bytes of lower-case alphanumerics and '-', an alphanumeric at each end (a letter
    first for RFC 1035: `first`)."""
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-")
    return (0 < len(text.encode()) <= 63 and set(text) <= allowed and text[0] in first and text[-1] != "-")


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(st.text(alphabet=_NAME_CHARS, max_size=70))
def test_generated_labels_agree_with_the_rfc_definitions(text: str) -> None:
    alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
    assert (messages("dns1123Label", text) == []) == _label_oracle(text, alnum)
    assert (messages("dns1035Label", text) == []) == _label_oracle(text, alnum[:26])
    value_ok = text == "" or (len(text.encode()) <= 63 and all(c.isascii() and (c.isalnum() or c in "-_.")
                                                                for c in text) and text[0].isalnum()
                              and text[-1].isalnum())
    assert (messages("labelValue", text) == []) == value_ok


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.dates(), st.sampled_from(["", "x", " ", "T"]), st.integers(0, 2))
def test_generated_dates_agree_with_python_dates(day: date, suffix: str, cut: int) -> None:
    """A date Python can hold is valid in its ISO spelling; one cut short or followed by text is not."""
    text = day.isoformat()[:10 - cut] + suffix
    assert (messages("date", text) == []) == (suffix == "" and cut == 0)
