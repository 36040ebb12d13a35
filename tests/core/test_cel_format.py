"""`"...".format([...])` in DRA selectors (`core/cel/formatting.py`): each expected string is what cel-go v0.26.0's
strings extension (version 2, as Kubernetes configures it) returns for the call, and each refusal is one its
format validator makes at compile time; `tests/e2e/test_cel_selectors.py` keeps some against a real API server."""

from __future__ import annotations

import pytest

from eks_devices.core import cel

GPU = cel.device("gpu.nvidia.com", {"productName": "NVIDIA H100", "index": 3, "mig": False,
                                    "driverVersion": {"version": "580.82.7"}})


@pytest.mark.parametrize(("call", "expected"), [
    ('"%s %d %f".format(["a", 1, 1.5])', "a 1 1.500000"),
    ('"%s %s".format([1, "a"])', "1 a"),  # the argument list is exempt from one element type
    ('"%%%s%%".format(["a"])', "%a%"),
    ('"%.3s".format(["abc"])', "abc"),  # a precision only %f reads
    # %s of a double: Go's strconv.FormatFloat(f, 'g', -1, 64)
    ('"%s".format([64.2])', "64.2"),
    ('"%s".format([1234567.0])', "1.234567e+06"),
    ('"%s".format([999999.0])', "999999"),
    ('"%s".format([1e-05])', "1e-05"),
    ('"%s".format([0.0001])', "0.0001"),
    ('"%s".format([-0.0])', "-0"),
    ('"%s".format([0.1 + 0.2])', "0.30000000000000004"),
    ('"%s".format([1.7976931348623157e308])', "1.7976931348623157e+308"),
    # lists and maps: doubles as %.6f, strings quoted as Go's %q, a map ordered by its printed keys
    ('"%s".format([[1, 2.5, "a", true, null, b"x"]])', '[1, 2.500000, "a", true, null, b"x"]'),
    ('"%s".format([{"b": 1, "a": [2.0], 3: "x"}])', '{"a":[2.000000], "b":1, 3:"x"}'),
    ('"%s".format([{-1: 1, 10: 2, 2: 3}])', "{-1:1, 10:2, 2:3}"),
    ('"%s".format([["a\\tb", "\\u00a0", "\\u200b", "é"]])', '["a\\tb", "\\u00a0", "\\u200b", "é"]'),
    # %f: en-US digits of golang.org/x/text/message
    ('"%f".format([3.14])', "3.140000"),
    ('"%.2f".format([1234.5])', "1,234.50"),
    ('"%.0f%.0f%.0f".format([2.5, 1.5, -0.5])', "22-0"),
    ('"%f".format([-0.0])', "0.000000"),
    ('"%.2f".format([1e23])', "99,999,999,999,999,991,611,392.00"),
    ('"%f%f".format(["NaN", "-Infinity"])', "NaN-∞"),
    # %e: six decimals whatever the precision, a superscript exponent
    ('"%e".format([2.71828])', "2.718280×10⁰⁰"),
    ('"%.2e".format([1234.5])', "1.234500×10⁰³"),
    ('"%e".format([-1e-10])', "-1.000000×10⁻¹⁰"),
    ('"%e".format([1e100])', "1.000000×10¹⁰⁰"),
    ('"%e".format(["Infinity"])', "     ∞"),
    # %b, %x, %X, %o
    ('"%b%b%b".format([5, true, -5])', "1011-101"),
    ('"%x %X".format([255, 255])', "ff FF"),
    ('"%x%X%x".format(["é", b"\\x01\\xab", -255])', "c3a901AB-ff"),
    ('"%o%o".format([8, -8])', "10-10"),
    ('"%X".format([18446744073709551615u])', "FFFFFFFFFFFFFFFF"),
    # device attributes, made dyn (the validator refuses an attribute's static type, `any`)
    ("\"%s-%d\".format([dyn(device.attributes['gpu.nvidia.com'].productName), "
     "dyn(device.attributes['gpu.nvidia.com'].index)])", "NVIDIA H100-3"),
    ("\"%b %s\".format([dyn(device.attributes['gpu.nvidia.com'].mig), device.driver])", "0 gpu.nvidia.com"),
    # a list that is not a literal is not checked: an argument more than the clauses is ignored
    ("\"%s\".format(device.attributes['gpu.nvidia.com'].productName.split(' '))", "NVIDIA"),
])
def test_format_prints_as_cel_go_prints(call: str, expected: str) -> None:
    expression = f"{call} == {cel_string(expected)}"
    cel.compile_expression(expression)
    assert cel.evaluate(expression, GPU) is True


def cel_string(text: str) -> str:
    """A CEL string literal of the text."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.mark.parametrize("call", [
    '"%f".format(["x"])',  # a string other than NaN and the infinities
    '"%s".format([b"\\xff"])',  # bytes that are not UTF-8
    '"%s".format([{1.5: 1}])',  # a map key of a type no clause prints
    "\"%d\".format([dyn(device.attributes['gpu.nvidia.com'].productName)])",  # known only per device
    "\"%s\".format([dyn(device.attributes['gpu.nvidia.com'].driverVersion)])",  # a version: no clause prints it
])
def test_format_fails_where_cel_go_fails(call: str) -> None:
    expression = f"{call} == ''"
    cel.compile_expression(expression)
    with pytest.raises(cel.CelError, match="error during formatting"):
        cel.evaluate(expression, GPU)


@pytest.mark.parametrize(("call", "message"), [
    ('"%d".format(["x"])', "decimal clause can only be used on integers, was given string"),
    ('"%d".format([5.0])', "decimal clause can only be used on integers, was given double"),
    ('"%b".format([1.5])', "only integers and bools can be formatted as binary, was given double"),
    ('"%o".format([true])', "octal clause can only be used on integers, was given bool"),
    ('"%f".format([1])', "fixed-point clause can only be used on doubles, was given int"),
    ('"%s".format([quantity("1")])', "string clause can only be used on .*, was given kubernetes.Quantity"),
    ('"%s %s".format(["a"])', "index 1 out of range"),
    ('"%s".format([])', "index 0 out of range"),
    ('"%s".format(["a", "b"])', r"too many arguments supplied to string.format \(expected 1, got 2\)"),
    ('"abc".format([1])', r"too many arguments supplied to string.format \(expected 0, got 1\)"),
    ('"%q".format([1])', "unrecognized formatting clause 'q'"),
    ('"%5d".format([1])', "unrecognized formatting clause '5'"),
    ('"%".format([])', "unexpected end of string"),
    ('"%.f".format([1.0])', "error while converting precision to integer"),
    ('"%s".format("a")', r"'format' applied to \(string.\(string\)\)"),
    # an attribute value's static type is `any` (google.protobuf.Any), which no clause takes, even in a list
    ("\"%s\".format([device.attributes['gpu.nvidia.com'].productName])", "was given google.protobuf.Any"),
    ("\"%s\".format([[device.attributes['gpu.nvidia.com'].index]])", "was given google.protobuf.Any"),
    ("\"%s\".format([device.capacity['gpu.nvidia.com'].memory])", "was given kubernetes.Quantity"),
])
def test_the_compiler_refuses_a_literal_call_cel_go_refuses(call: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(f"{call} == ''")
