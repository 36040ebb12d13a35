"""Any text given as a selector gets a CelError or an answer, never another exception: token soup built from CEL's
syntax, the optional syntax the grammar gained (`.?`, `[?`, `?`-marked elements), the macros and the functions
this package adds (hypothesis, fixed seed)."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eks_devices.core import cel

TOKENS = ["device", ".", ".?", "[", "[?", "]", "(", ")", "{", "}", "?", ":", ",", "&&", "||", "!", "==", "<", "+",
          "-", "/", "1", "0", "2.5", "'a'", "'%s'", "'%d %f'", "true", "null", "x", "v", "i", "driver", "attributes",
          "capacity", "['dra.net']", "rdma", "all", "exists", "existsOne", "transformList", "transformMapEntry",
          "sortBy", "cel", "bind", "optional", "of", "none", "orValue", "or", "optMap", "hasValue", "value", "format",
          "url", "getHost", "isURL", "split", "contains", "first", "size"]
DEVICE = cel.device("dra.net", {"rdma": True, "numaNode": 0, "pciAddress": "0000:12:00.0"})


@settings(max_examples=400, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=14))
def test_any_selector_text_is_answered_or_refused_with_a_cel_error(tokens: list[str]) -> None:
    expression = " ".join(tokens)
    try:
        cel.compile_expression(expression, (1, 32))
    except cel.CelError:
        return
    with contextlib.suppress(cel.CelError):
        cel.evaluate(expression, DEVICE)


@settings(max_examples=150, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["all(i, v, {})", "exists(k, v, {})", "transformList(i, v, {})", "sortBy(v, {})",
                        "optMap(v, {})"]),
       st.sampled_from(["v", "i == 0", "v.size() > 1", "1 / 0 == 1", "v.contains('a')", "v.?x.orValue(true)"]),
       st.sampled_from(["device.attributes", "device.driver.split('.')", "[1, 2]", "{'a': 1}", "optional.of(1)",
                        "device.attributes['dra.net']", "device.attributes['dra.net'].rdma"]))
def test_macros_over_any_receiver_are_answered_or_refused_with_a_cel_error(macro: str, body: str,
                                                                         receiver: str) -> None:
    expression = f"{receiver}.{macro.format(body)} == true"
    with contextlib.suppress(cel.CelError):
        cel.compile_expression(expression)
        cel.evaluate(expression, DEVICE)
