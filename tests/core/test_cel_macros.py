"""The macros Kubernetes gives DRA selectors beyond cel-python's own (`core/cel/macros.py`): cel-go's
two-variable comprehensions, `sortBy`, `cel.bind`; evaluated as cel-go evaluates them, refused
where its macro expansion or the API server's cost estimate refuses them (`core/cel/cost.py`), and refused on
the API servers that check new selectors against
an environment without them (`tests/e2e/test_cel_selectors.py` holds them against a real 1.36 server)."""

from __future__ import annotations

import pytest

from eks_devices.core import cel

GPU = cel.device("gpu.nvidia.com", {"productName": "NVIDIA H100 80GB HBM3", "index": 3}, {"memory": "81559Mi"})
NAME = "device.attributes['gpu.nvidia.com'].productName"


@pytest.mark.parametrize("expression", [
    # cel-go v0.26.0 ext/comprehensions.go, its documented examples and their map forms
    "[1, 2, 3].all(i, j, i < j)",
    "!{'hello': 'world', 'taco': 'taco'}.all(k, v, k != v)",
    "{'h': ['hello', 'hi'], 'j': ['joke', 'jog']}.all(k, vals, vals.all(v, v.startsWith(k)))",
    "{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, k.startsWith('good') || v.endsWith('bye'))",
    "![1, 2, 4, 8, 16].exists(i, v, v == 1024 && i == 10)",
    "![1, 2, 1, 3, 1, 4].existsOne(i, v, i == 1 || v == 1)",
    "[1, 1, 2, 2, 3, 3].existsOne(i, v, i == 2 && v == 2)",
    "{'i': 0, 'j': 1, 'k': 2}.exists_one(i, v, i == 'l' || v == 1)",
    "[1, 2, 3].transformList(i, v, (i * v) + v) == [1, 4, 9]",
    "[1, 2, 3].transformList(i, v, i % 2 == 0, (i * v) + v) == [1, 9]",
    "{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(k, _, k).sort() == ['farewell', 'greeting']",
    "[1, 2, 3].transformMap(i, v, (i * v) + v) == {0: 1, 1: 4, 2: 9}",
    "[1, 2, 3].transformMap(i, v, i % 2 == 0, (i * v) + v) == {0: 1, 2: 9}",
    "{'greeting': 'hello'}.transformMap(k, v, v + '!') == {'greeting': 'hello!'}",
    "{'greeting': 'hello'}.transformMapEntry(k, v, {v: k}) == {'hello': 'greeting'}",
    "[1, 2, 3].transformMapEntry(i, v, v > 1, {v: i}) == {2: 1, 3: 2}",
    # on a device: an index and a value, and an `&&` / `||` that decides despite an error on another entry
    f"{NAME}.split(' ').exists(i, w, i == 1 && w == 'H100')",
    f"{NAME}.split(' ').all(i, w, i < 4 && w.size() > 3)",
    "[0, 1].exists(i, v, 1 / v > 0) && ![0, 1].all(i, v, 10 / v > 20)",
    # sortBy (cel-go ext/lists.go sortByMacro)
    f"{NAME}.split(' ').sortBy(w, -w.size())[0] == 'NVIDIA' && {NAME}.split(' ').sortBy(w, w.charAt(1))[1] == 'H100'",
    "[3, 1, 2].sortBy(x, -x) == [3, 2, 1] && [].sortBy(x, x) == [] && ['bb', 'a'].sortBy(s, s.size()) == ['a', 'bb']",
    # cel.bind (cel-go ext/bindings.go; dynamic-resource-allocation cel/compile.go)
    "cel.bind(gpu, device.attributes['gpu.nvidia.com'], gpu.index == 3 && gpu.productName.contains('H100'))",
    "cel.bind(a, 1, cel.bind(b, a + 1, b == 2))",
    # celpy's `+` yields a plain str: it still orders as a CEL string
    "'a' + 'b' < 'b' && 'b' > 'a' + 'b' && device.driver + '/' >= 'gpu'",
])
def test_the_macros_evaluate_as_cel_go_evaluates_them(expression: str) -> None:
    cel.compile_expression(expression)
    assert cel.evaluate(expression, GPU) is True


@pytest.mark.parametrize("expression", [
    "[0, 1].all(i, v, 1 / v > 0)",  # no entry decides: the error stands
    "[0, 1].existsOne(i, v, 1 / v > 0)",  # existsOne does not short-circuit
    "{'a': 'x', 'b': 'x'}.transformMapEntry(k, v, {v: k}).size() == 1",  # insert failed: key x already exists
    f"{NAME}.split(' ').sortBy(w, w == 'H100' ? 1 : w).size() == 4",  # keys of different types
    "[1, 2].all(i, v, v) == true",  # a predicate that is not a bool
    "device.attributes['gpu.nvidia.com'].nope.exists(i, v, true)",
])
def test_the_macros_fail_where_cel_go_fails(expression: str) -> None:
    cel.compile_expression(expression)
    with pytest.raises(cel.CelError):
        cel.evaluate(expression, GPU)


@pytest.mark.parametrize(("expression", "message"), [
    ("[1].all(i, i, true)", "duplicate variable name: i"),
    ("[1].transformList(i, v + 1, v)", "argument must be a simple name"),
    ("[1].transformList(x, x) == [1]", "undeclared reference to 'x'"),  # no two-argument form
    # cel-go's newer one-variable spelling (parser/macro.go ExistsOneMacroNew) is not among Kubernetes' macros
    ("[1, 2].existsOne(x, x == 1)", "undeclared (reference to 'x'|function 'existsOne')"),
    ("[1].all(i, v, w > 0)", "undeclared reference to 'w'"),
    ("cel.bind(x, 1, y == 1)", "undeclared reference to 'y'"),
    ("[[1], [true]].size() == 2", r"expected type 'list\(int\)' but found 'list\(bool\)'"),
    ("[['a'], [1]].size() == 2", r"expected type 'list\(string\)' but found 'list\(int\)'"),
])
def test_the_compiler_refuses_what_cel_go_refuses(expression: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(expression)


def test_nested_lists_of_one_element_type_or_empty_compile() -> None:
    cel.compile_expression("[[1], [2], []].flatten() == [1, 2] && [['a'], []].size() == 2")


@pytest.mark.parametrize(("expression", "refused_on", "message"), [
    ("[1].all(i, v, v > i) || [1].transformList(i, v, v) == [1]", (1, 32),
     r"two-variable comprehensions \(two-variable all, two-variable transformList\) is refused by a Kubernetes "
     r"1.32 API server, which checks new selectors against 1.31's CEL environment; it is accepted from 1.33"),
    ("[2, 1].sortBy(x, x) == [1, 2]", (1, 34), r"lists extension \(sortBy\) is refused by a Kubernetes 1.34"),
])
def test_a_macro_is_refused_where_the_api_server_checks_against_an_older_environment(
        expression: str, refused_on: tuple[int, int], message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(expression, refused_on)
    cel.compile_expression(expression, (refused_on[0], refused_on[1] + 1))
    cel.compile_expression("[1].exists_one(x, x == 1) && cel.bind(x, 1, x == 1)", (1, 32))  # in every EKS minor


# what a real 1.36 API server said of each (tests/e2e/test_cel_selectors.py keeps a few of them against it)
@pytest.mark.parametrize("expression", [
    "device.driver.split('.').exists(v, v.contains('a'))",
    "device.driver.split('.').exists(v, v.lowerAscii() == 'a')",
    "device.driver.split('.').exists(v, v.matches('a'))",
    "device.driver.split('.').exists(v, v.trim() == 'a')",
    "device.driver.split('.').exists(v, v.split('a').size() == 1)",
    "device.driver.split('.').exists(v, v.indexOf('a') == 1)",
    "device.driver.split('.').exists(v, v.substring(1) == 'a')",
    "device.driver.split('.').exists(v, v + 'x' == 'a')",
    "device.driver.split('.').exists(v, 'abc'.contains(v))",
    "device.driver.split('.').exists(v, isQuantity(v)) || device.driver.split('.').exists(v, isIP(v))",
    "device.driver.split('.').map(v, v.lowerAscii()).size() == 2",
    "device.driver.split('.').sort().exists(i, v, v.upperAscii() == 'A')",
    "cel.bind(s, device.driver.split('.')[0], s.contains('a'))",
    "cel.bind(l, device.driver.split('.'), l.exists(v, v.replace('a', 'b') == 'b'))",
    "device.driver.split('.')[0].contains('a')",
    "device.attributes['x'].y.split('.')[0].lastIndexOf('a') == 0",
])
def test_a_size_dependent_function_on_a_string_out_of_split_is_too_complex(expression: str) -> None:
    with pytest.raises(cel.CelError, match=r"too complex, exceeds cost limit: .* on a string taken from split"):
        cel.compile_expression(expression)


@pytest.mark.parametrize("expression", [
    "device.driver.split('.').exists(v, v.startsWith('a') || v.endsWith('a') || v == 'a' || v < 'a')",
    "device.driver.split('.').exists(v, v.size() == 1 || v.charAt(1) == 'a')",
    "['ab', 'b'].exists(i, v, v.contains('a')) && ['ab'][0].contains('a')",  # a literal's strings are sized
    "device.attributes.exists(d, m, d.contains('a') && d.lowerAscii() == 'a')",  # domain names are bounded
    "device.driver.lowerAscii().contains('a') && device.driver.replace('a', 'b').contains('a')",
    "[device.driver, 'x'].exists(v, v.contains('a'))",
])
def test_a_string_of_known_size_passes_the_cost_estimate(expression: str) -> None:
    cel.compile_expression(expression)
