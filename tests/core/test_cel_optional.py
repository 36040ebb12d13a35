"""Optional values in DRA selectors (`core/cel/optional.py`): the syntax celpy's grammar lacks (`.?`, `[?]`,
`?`-marked list elements and map keys), the functions and macros of cel-go's optional library, evaluated as
cel-go v0.26.0 evaluates them; each case agreed with cel-go itself or a real 1.36 API server and scheduler
(`tests/e2e/test_cel_selectors.py` keeps some against the latter)."""

from __future__ import annotations

import pytest

from eks_devices.core import cel

EFA = cel.device("dra.net", {"rdma": True, "numaNode": 0})
GPU = cel.device("gpu.nvidia.com", {"productName": "NVIDIA H100"}, {"memory": "80Gi"})


@pytest.mark.parametrize("expression", [
    "optional.of(1).hasValue() && !optional.none().hasValue() && optional.of(1).value() == 1",
    "optional.none().orValue(5) == 5 && optional.of(2).orValue(5) == 2",
    "optional.none().or(optional.of(3)).value() == 3 && optional.of(1).or(optional.of(3)).value() == 1",
    "optional.of(1).orValue(1 / 0) == 1",  # orValue evaluates its argument only for an empty optional
    "!(optional.ofNonZeroValue(0).hasValue() || optional.ofNonZeroValue('').hasValue() || "
    "optional.ofNonZeroValue([]).hasValue()) && optional.ofNonZeroValue(1).hasValue()",
    "{'a': 1}.?a.orValue(0) == 1 && {'a': 1}.?b.orValue(0) == 0",
    "{'a': 1}[?'a'].value() == 1 && !{'a': 1}[?'b'].hasValue()",
    "[1, 2][?1].value() == 2 && ![1, 2][?5].hasValue()",
    "[?optional.of(1), ?optional.none(), 3] == [1, 3]",
    "{?'a': optional.of(1), ?'b': optional.none()} == {'a': 1}",
    "optional.of({'a': {'b': 2}}).a.b.value() == 2 && !optional.of({'a': 1}).b.hasValue()",
    "optional.of(2).optMap(x, x * 2).value() == 4 && !optional.none().optMap(x, x * 2).hasValue()",
    "optional.of(2).optFlatMap(x, x > 1 ? optional.of(x) : optional.none()).value() == 2",
    "[1, 2].first().value() == 1 && [1, 2].last().value() == 2 && ![].first().hasValue()",
    "optional.unwrap([optional.of(1), optional.none()]) == [1] && [optional.none(), optional.of(2)].unwrapOpt() == [2]",
    "optional.of(1) == optional.of(1) && optional.none() == optional.none() && optional.of(1) != optional.none()",
    # on a device: a missing attribute is an empty optional, not an error
    "device.attributes['dra.net'].?rdma.orValue(false) && device.attributes['dra.net'][?'nope'].orValue(true)",
    "{?'x': device.attributes['dra.net'].?numaNode}.size() == 1",
    "!optional.ofNonZeroValue(device.attributes['dra.net'].?numaNode.orValue(0)).hasValue()",
    # device.attributes and device.capacity find every domain (dynamic-resource-allocation `mapper.Find`)
    "device.attributes.?foo.hasValue() && device.attributes[?'gpu.nvidia.com'].value().size() == 0",
    "[device.attributes['dra.net'].?rdma, optional.none()].size() == 2",
])
def test_optional_values_evaluate_as_cel_go_evaluates_them(expression: str) -> None:
    cel.compile_expression(expression)
    assert cel.evaluate(expression, EFA) is True


def test_an_optional_reads_capacity_as_a_quantity() -> None:
    expression = ("device.capacity['gpu.nvidia.com'].?memory.optMap(m, m.isGreaterThan(quantity('40Gi')))"
                  ".orValue(false)")
    assert cel.evaluate(expression, GPU) is True
    assert cel.evaluate(expression, EFA) is False


@pytest.mark.parametrize("expression", [
    "optional.none().value() == 1",
    "device.attributes['gpu.nvidia.com'].?productName.value() != ''",
])
def test_an_empty_optional_fails_where_cel_go_fails(expression: str) -> None:
    cel.compile_expression(expression)
    with pytest.raises(cel.CelError):
        cel.evaluate(expression, EFA)


@pytest.mark.parametrize(("expression", "message"), [
    ("[?1] == [1]", r"expected type 'optional_type\(int\)' but found 'int'"),
    ("optional.of(1).or(2).hasValue()", r"'or' applied to \(optional.\(int\)\)"),
    ("optional.none().or(2).hasValue()", r"'or' applied to \(optional.\(int\)\)"),
    ("optional.of(1).size() == 1", "'size' applied to"),
    ("device.?nope.hasValue()", "undefined field 'nope'"),
    ("?device.driver == 'x'", "unexpected '\\?'"),
    ("optional.unwrap([device.attributes['dra.net'].?rdma, optional.of(true)]).size() == 2",
     r"expected type 'optional_type\(any\)' but found 'optional_type\(bool\)'"),
    ("device.attributes.?.x", "syntax error"),
])
def test_the_compiler_refuses_what_the_api_server_refuses_of_optionals(expression: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(expression)
