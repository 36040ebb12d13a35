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
