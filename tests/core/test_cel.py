"""CEL as the API server and the scheduler's allocator read DRA selectors (`core/cel.py`), on the points
where the real engines disagreed with the model (`tests/e2e/test_cel_selectors.py` holds the model against
them on generated selectors): cel-go's string extensions, heterogeneous equality, `device`'s fields,
the global `sign()`, normalizing `semver()`, and what the type checker refuses before any device is read."""

from __future__ import annotations

import pytest

from eks_devices.core import cel
from eks_devices.core.derive import fit
from eks_devices.core.knowledge import devices

EFA = cel.device("dra.net", {"rdma": True, "numaNode": 1, "pciAddress": "0000:12:00.0"})
GPU = cel.device("gpu.nvidia.com", {"productName": "NVIDIA H100 80GB HBM3"}, {"memory": "81559Mi"})


@pytest.mark.parametrize("expression", [
    "device.attributes['gpu.nvidia.com'].productName.lowerAscii() == 'nvidia h100 80gb hbm3'",
    "device.attributes['gpu.nvidia.com'].productName.upperAscii().endsWith('HBM3')",
    "device.attributes['gpu.nvidia.com'].productName.split(' ') == ['NVIDIA', 'H100', '80GB', 'HBM3']",
    "device.attributes['gpu.nvidia.com'].productName.split(' ', 2)[1] == 'H100 80GB HBM3'",
    "device.attributes['gpu.nvidia.com'].productName.split(' ', 0).size() == 0",
    "device.attributes['gpu.nvidia.com'].productName.substring(7, 11) == 'H100'",
    "device.attributes['gpu.nvidia.com'].productName.charAt(7) == 'H'",
    "device.attributes['gpu.nvidia.com'].productName.indexOf('H') == 7",
    "device.attributes['gpu.nvidia.com'].productName.lastIndexOf('H') == 17",
    "device.attributes['gpu.nvidia.com'].productName.replace(' ', '-', 1) == 'NVIDIA-H100 80GB HBM3'",
    "device.attributes['gpu.nvidia.com'].productName.trim() == 'NVIDIA H100 80GB HBM3'",
])
def test_the_string_extensions_kubernetes_enables_evaluate(expression: str) -> None:
    cel.compile_expression(expression)
    assert cel.evaluate(expression, GPU) is True


def test_a_string_index_past_the_end_is_an_error() -> None:
    with pytest.raises(cel.CelError):
        cel.evaluate("device.attributes['gpu.nvidia.com'].productName.substring(40) == ''", GPU)


@pytest.mark.parametrize(("expression", "expected"), [
    ("device.attributes['dra.net'].numaNode == 'one'", False),  # int against string: unequal, no error
    ("device.attributes['dra.net'].numaNode != 'one'", True),
    ("device.attributes['dra.net'].rdma == 1", False),
    ("device.attributes['dra.net'].numaNode == 1.0", True),  # numbers compare by value
    ("device.attributes['dra.net'].numaNode == 1u", True),
    ("device.attributes['dra.net'].numaNode < 1.5", True),
    ("device.attributes['dra.net'].numaNode == 'one' || device.attributes['dra.net'].rdma", True),
])
def test_values_of_different_types_are_unequal_not_an_error(expression: str, expected: bool) -> None:
    assert cel.evaluate(expression, EFA) is expected


def test_a_device_says_whether_it_allows_multiple_allocations() -> None:
    assert cel.evaluate("!device.allowMultipleAllocations", EFA)
    shared = [d for d in devices.inventory("g6e.12xlarge", ("nvidia",), gpu_shares=4)]
    assert shared and all(cel.evaluate("device.allowMultipleAllocations", d.cel()) for d in shared)


def test_sign_is_a_function_and_semver_can_normalize() -> None:
    assert cel.evaluate("sign(device.capacity['gpu.nvidia.com'].memory) == 1", GPU)
    assert cel.evaluate("sign(quantity('0')) == 0 && sign(quantity('-1m')) == -1", GPU)
    assert cel.evaluate("semver('v1.02', true) == semver('1.2.0') && isSemver('1.2', true)", GPU)
    assert not cel.evaluate("isSemver('1.2') || isSemver('1.2-rc.1', true)", GPU)


@pytest.mark.parametrize(("expression", "message"), [
    ("device.driver", "must return a bool, not string"),
    ("!device.driver", "no matching overload for '!_'"),
    ("device.driver == 'x' || 1", "no matching overload for '_||_'"),
    ("device.nope == 1", "undefined field 'nope'"),
    ("device.capacity['gpu.nvidia.com'].memory == 42", r"'_==_' applied to \(kubernetes.Quantity, int\)"),
    ("device.capacity['gpu.nvidia.com'].memory >= quantity('40Gi')", "no matching overload for '_>=_'"),
    ("quantity('1') < quantity('2')", "no matching overload for '_<_'"),
    ("semver('1.0.0') > semver('0.9.0')", "no matching overload for '_>_'"),
    ("device.capacity['gpu.nvidia.com'].memory.sign() == 1", "no matching overload for 'sign'"),
    ("device.capacity['gpu.nvidia.com'].memory.major() == 1", "no matching overload for 'major'"),
    ("device.driver.quantity() == quantity('1')", "no matching overload for 'quantity'"),
    ("1 == 1.0", r"'_==_' applied to \(int, double\)"),
    ("'a' < 1", r"'_<_' applied to \(string, int\)"),
])
def test_the_type_checker_refuses_what_the_api_server_refuses(expression: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(expression)


@pytest.mark.parametrize("expression", [
    "device.attributes['dra.net'].numaNode == 'zero'",  # attribute values are typed per device: dyn
    "device.attributes['x'].y == 1",
    "device.capacity['gpu.nvidia.com'].memory.add(1).isInteger()",
    "device.allowMultipleAllocations",
    "device.driver == 'x' ? true : false",
    "[1, 2].all(x, x > 0) && size(device.driver) > 1",
])
def test_the_type_checker_leaves_what_only_a_device_decides(expression: str) -> None:
    cel.compile_expression(expression)


def test_a_claim_whose_selector_compares_across_types_fits() -> None:
    """Before, `numaNode == 'x'` was a CEL error on every EFA: the claim was said not to fit at all."""
    spec = {"requests": [{"name": "efa", "exactly": {
        "deviceClassName": "any", "count": 2,
        "selectors": [{"cel": {"expression": "device.driver == 'dra.net' && "
                                             "(device.attributes['dra.net'].numaNode == 'x' || "
                                             "device.attributes['dra.net'].rdma)"}}]}}]}
    outcome = fit.allocate(spec, {"any": []}, devices.inventory("p5.48xlarge", ("efa",)))
    assert outcome.ok, outcome.reason


# --- the rest of Kubernetes' base environment (k8s.io/apiserver pkg/cel/environment/base.go) ---------------

@pytest.mark.parametrize("expression", [
    # cel-go's sets extension
    "sets.contains(['NVIDIA', 'H100', 'x'], device.attributes['gpu.nvidia.com'].productName.split(' ').slice(0, 2))",
    "!sets.contains(['NVIDIA'], ['NVIDIA', 'A100'])",
    "sets.equivalent(['a', 'b', 'b'], ['b', 'a']) && !sets.equivalent(['a'], ['a', 'c'])",
    "sets.intersects(device.attributes['gpu.nvidia.com'].productName.split(' '), ['H100', 'L40S'])",
    "sets.contains([1], [1.0])",  # CEL equality: numbers by value
    # cel-go's lists extension (version 3)
    "[1, 2, 3, 4].slice(1, 3) == [2, 3]",
    "[[1], [2, 3]].flatten() == [1, 2, 3] && [[[1]], [[2]]].flatten() == [[1], [2]]",
    "[[[1]], [[2]]].flatten(2) == [1, 2]",
    "['b', 'a'].sort() == ['a', 'b'] && [2, 1].sort() == [1, 2]",
    "[1, 2].reverse() == [2, 1]",
    "[1, 2, 2, 1].distinct() == [1, 2]",
    "lists.range(3) == [0, 1, 2] && lists.range(0) == []",
    # Kubernetes' list library
    "[1, 2, 2].isSorted() && ![2, 1].isSorted() && [].isSorted()",
    "[1, 2, 3].sum() == 6 && [].sum() == 0 && [1.5, 1.0].sum() == 2.5",
    "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3",
    "[1, 2, 2].indexOf(2) == 1 && [1, 2, 2].lastIndexOf(2) == 2 && [1].indexOf(5) == -1",
    # cel-go's strings extension (version 2)
    "strings.quote('a\"b\\n') == '\"a\\\\\"b\\\\n\"'",
])
def test_the_list_set_and_string_functions_of_the_base_environment_evaluate(expression: str) -> None:
    cel.compile_expression(expression)
    assert cel.evaluate(expression, GPU) is True


@pytest.mark.parametrize("expression", [
    "[1, 2].slice(1, 3) == [2]",  # past the end
    "[1, 2].slice(2, 1) == []",
    "[1].flatten(-1) == [1]",
    "[].min() == 0",
    "[].max() == 0",
])
def test_the_extensions_fail_where_cel_go_fails(expression: str) -> None:
    cel.compile_expression(expression)
    with pytest.raises(cel.CelError):
        cel.evaluate(expression, GPU)


@pytest.mark.parametrize(("expression", "message"), [
    # what RE2 cannot compile, in a literal pattern (cel-go `ValidateRegexLiterals`)
    ("device.driver.matches('g(?=p)')", r"invalid regular expression 'g\(\?=p\)' \(RE2: invalid perl operator"),
    ("device.driver.matches('(g)\\\\1')", "invalid escape sequence"),
    ("matches(device.driver, 'a(?!b)')", "invalid perl operator"),
    # a list literal's elements share one type (`HomogeneousAggregateLiterals`); an attribute value is `any`
    ("[device.attributes['dra.net'].numaNode, 1].max() == 1", "expected type 'any' but found 'int'"),
    ("[1, 2.0].size() == 2", "expected type 'int' but found 'double'"),
    ("[[1], [2, [3]]].flatten() == [1]", "expected type 'int' but found 'list\\(int\\)'"),
    # the sets and lists functions take lists
    ("sets.contains(device.driver, ['a'])", r"'sets.contains' applied to \(string, list\)"),
    ("device.driver.sort() == 'a'", "no matching overload for 'sort'"),
    # the cost estimate cannot bound the per-string cost of these on a list of strings
    ("['a', 'b'].join('-') == 'a-b'", "too complex, exceeds cost limit: join"),
    ("device.driver.split('.').indexOf('nvidia') == 1", "too complex, exceeds cost limit: indexOf"),
    ("['a', 'b'].min() == 'a'", "too complex, exceeds cost limit: min"),
    ("device.driver.split('.').sort().isSorted()", "too complex, exceeds cost limit: isSorted"),
])
def test_the_compiler_refuses_what_the_api_server_refuses_in_the_base_environment(expression: str,
                                                                                   message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(expression)


@pytest.mark.parametrize("expression", [
    "[1, 2].indexOf(1) == 0 && [1.0, 2.0].sum() == 3.0",  # on numbers the cost is a step per element
    "[device.attributes['x'].a, device.attributes['x'].b].indexOf('a') == 0 && [1].sum() == 1",  # a list of `any`
    "device.driver.split('.').sort().distinct().size() == 3",
    # a pattern built per device is RE2's to refuse at evaluation, not the compiler's
    "device.driver.matches('a' + '(?=b)') || lists.range(1) == [0]",
])
def test_the_compiler_leaves_what_the_api_server_accepts_in_the_base_environment(expression: str) -> None:
    cel.compile_expression(expression)


def test_a_refused_pattern_is_not_written_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    """RE2 logs each pattern it refuses unless told not to: `eks-devices check` would print a C++ log line."""
    with pytest.raises(cel.CelError):
        cel.compile_expression("device.driver.matches('x(?<=y)')")
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("expression", [
    "ip('10.0.0.1').family() == 4 && ip('::1').family() == 6",
    "isIP('::1') && !isIP('010.0.0.1') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')",  # Go netip + Kubernetes
    "isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/08') && !isCIDR('10.0.0.0/255.0.0.0') && !isCIDR('10.0.0.0/33')",
    "cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
    "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8')",
    "!cidr('::/0').containsIP('1.2.3.4') && !cidr('0.0.0.0/0').containsCIDR(cidr('::/0'))",
    "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')",
    "cidr('10.1.2.3/8').prefixLength() == 8 && string(cidr('10.1.2.3/8').masked()) == '10.0.0.0/8'",
    "string(ip('0:0::1')) == '::1' && ip('::1') == ip('0:0::1') && ip.isCanonical('::1') && !ip.isCanonical('0:0::1')",
    "ip('10.0.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast() && !ip('fe80::1').isGlobalUnicast()",
    "ip('ff02::1').isLinkLocalMulticast() && ip('224.0.0.9').isLinkLocalMulticast() && !ip('ff05::1').isLinkLocalMulticast()",
    "ip('fe80::1').isLinkLocalUnicast() && ip('169.254.1.1').isLinkLocalUnicast()",
    "ip('127.0.0.2').isLoopback() && ip('::').isUnspecified() && ip('0.0.0.0').isUnspecified()",
])
def test_the_ip_and_cidr_libraries_evaluate_as_go_netip_reads_addresses(expression: str) -> None:
    cel.compile_expression(expression)
    assert cel.evaluate(expression, GPU) is True


def test_an_address_that_does_not_parse_fails_the_device() -> None:
    cel.compile_expression("ip(device.attributes['gpu.nvidia.com'].productName).family() == 4")
    with pytest.raises(cel.CelError):
        cel.evaluate("ip(device.attributes['gpu.nvidia.com'].productName).family() == 4", GPU)


@pytest.mark.parametrize(("expression", "message"), [
    ("ip('1.2.3.4') == '1.2.3.4'", r"'_==_' applied to \(net.IP, string\)"),
    ("ip('1.2.3.4') < ip('1.2.3.5')", "no matching overload for '_<_'"),
    ("'1.2.3.4'.ip() == ip('1.2.3.4')", "no matching overload for 'ip'"),
    ("'1.2.3.4'.isIP()", "no matching overload for 'isIP'"),
    ("ip('1.2.3.4').masked() == cidr('1.2.3.4/32')", "no matching overload for 'masked'"),
    ("cidr('10.0.0.0/8').containsIP(1)", "no matching overload for 'containsIP'"),
    ("cidr('10.0.0.0/8').containsCIDR(ip('10.0.0.1'))", "no matching overload for 'containsCIDR'"),
])
def test_the_compiler_refuses_what_the_api_server_refuses_of_ip_and_cidr(expression: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(expression)


@pytest.mark.parametrize("expression", [
    "device.driver + '.x' == 'gpu.nvidia.com.x'",  # before: celpy's `+` gave a plain str, unequal to any string
    "'a' + 'b' != 'x' + 'y' && b'a' + b'b' == b'ab'",
    "cidr('10.0.0.0/8').containsIP('10.' + string(1) + '.0.1') && ('a' + 'b').matches('^ab$')",
])
def test_a_concatenated_string_is_a_string(expression: str) -> None:
    assert cel.evaluate(expression, GPU) is True


@pytest.mark.parametrize(("kubernetes", "refused"), [((1, 34), True), ((1, 35), False), ((1, 36), False), (None, False)])
def test_the_lists_extension_is_refused_where_the_api_server_checks_against_1_33(
        kubernetes: tuple[int, int] | None, refused: bool) -> None:
    expression = "[2, 1].sort() == [1, 2] && lists.range(1) == [0]"
    if refused:
        with pytest.raises(cel.CelError, match=r"lists extension \(lists.range, sort\) is refused by a Kubernetes 1.34"):
            cel.compile_expression(expression, kubernetes)
    else:
        cel.compile_expression(expression, kubernetes)
    cel.compile_expression("sets.contains([1], [1]) && isIP('::1') && [1].isSorted()", (1, 34))  # older libraries


def test_the_environment_builds_one_grammar(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only our grammar (celpy's with cel-go's optional syntax) is built: celpy's own, which nothing parses
    with, would cost every first compile another ~0.15 s of CPU."""
    from celpy.celparser import CELParser

    monkeypatch.setattr(CELParser, "CEL_PARSER", None)
    env = cel._Environment()
    assert CELParser.CEL_PARSER is None
    assert env.program(env.compile('device.driver == "gpu.nvidia.com"')) is not None
    assert cel.evaluate('device.driver.startsWith("gpu.")', {"driver": "gpu.nvidia.com"})


def test_the_grammar_table_is_kept_in_the_users_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """The parse table is written once to the user's cache folder and read back by later runs; a damaged or
    foreign table is rebuilt, and with no folder to write there is simply no table."""
    from eks_devices.core.cel import optional

    expression = 'device.attributes["gpu.nvidia.com"].?productName.orValue("") == "x"'
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    optional._grammar.cache_clear()
    expected = optional._grammar().parse(expression)
    (table,) = (tmp_path / "eks-devices").glob("cel-grammar-*.pickle")
    for content in (table.read_bytes(), b"not a table", b""):
        table.write_bytes(content)
        optional._grammar.cache_clear()
        assert optional._grammar().parse(expression) == expected
    (tmp_path / "blocked").write_text("a file, not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "blocked"))
    optional._grammar.cache_clear()
    assert optional._grammar().parse(expression) == expected
    optional._grammar.cache_clear()
