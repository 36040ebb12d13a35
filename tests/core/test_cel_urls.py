"""Kubernetes' URL library in DRA selectors (`core/cel/urls.py`): what `url()` and `isURL()` accept and what the
getters read, as Go's net/url parses (each case agreed with a real 1.36 API server and scheduler;
`tests/e2e/test_cel_selectors.py` keeps a few of them against it)."""

from __future__ import annotations

import pytest

from eks_devices.core import cel

EFA = cel.device("dra.net", {"rdma": True, "rdmaDevice": "rdmap0"})


@pytest.mark.parametrize("expression", [
    # k8s.io/apiserver pkg/cel/library/urls.go, its documented examples
    "url('https://user:pass@example.com:80/path?query=val#fragment').getHost() == 'example.com:80'",
    "isURL('https://user:pass@example.com:80/path?query=val#fragment') && isURL('/absolute-path')",
    "!isURL('https://a:b:c/') && !isURL('../relative-path')",
    "url('/path').getScheme() == '' && url('HTTPS://example.com/').getScheme() == 'https'",
    "url('https://[::1]:80/').getHost() == '[::1]:80' && url('https://[::1]/').getHostname() == '::1'",
    "url('https://127.0.0.1:80/').getHostname() == '127.0.0.1' && url('https://example.com/').getPort() == ''",
    "url('https://example.com:80/').getPort() == '80' && url('/path').getHost() == ''",
    "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
    "url('https://example.com').getEscapedPath() == '' && url('https://example.com/a%2Fb').getEscapedPath() == '/a%2Fb'",
    "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
    "url('https://example.com/path?key with spaces=value+with%20spaces').getQuery() == "
    "{'key with spaces': ['value with spaces']}",
    # Go's net/url: an empty query, semicolons and bad escapes skipped, a lone key
    "url('https://example.com/path?').getQuery() == {} && "
    "url('https://example.com/p?a;b=1&c=%zz&&d').getQuery() == {'d': ['']}",
    "url('https://example.com/') == url('https://example.com/') && url('https://example.com/a') != url('https://example.com/b')",
    # opaque URIs, `*`, what ParseRequestURI refuses
    "isURL('mailto:someone@example.com') && url('mailto:x@y').getHost() == ''",
    "!isURL('') && isURL('*') && !isURL('http://[1.2.3.4]/') && !isURL('http://a b/') && !isURL('http://x/%zz')",
    # Go 1.26 strict colons: for http(s) the port starts at the first colon, for other schemes at the last
    "isURL('x://a:b:1/') && !isURL('https://a:1:2/') && isURL('ftp://a:1:2/')",
    "isURL('http://[fe80::1%25eth0]:8/') && !isURL('http://x[::1]/') && !isURL('http://[::1/') && !isURL(':x')",
    "url('http://u%40:p@h/').getHost() == 'h' && !isURL('http://u^@h/')",
    # ParseRequestURI keeps '#' in the path, the value (url.Parse) cuts the fragment off
    "isURL('/a#b') && url('/a#b').getEscapedPath() == '/a'",
    "url('http://h/%7e%41').getEscapedPath() == '/%7e%41' && url('http://h/é').getEscapedPath() == '/%C3%A9'",
    "url('http://ÉX.com:8/').getHostname() == 'ÉX.com' && !isURL('http://%41/') && isURL('http://%C3%A9/')",
    "url('http://[::ffff:1.2.3.4]/').getHostname() == '::ffff:1.2.3.4'",
    "url('http://h:/').getPort() == '' && url('http://h:/').getHost() == 'h:' && url('http://h:/').getHostname() == 'h'",
    "isURL('/' + device.attributes['dra.net'].rdmaDevice) && url('/').getQuery().size() == 0",
])
def test_the_url_library_reads_urls_as_go_does(expression: str) -> None:
    cel.compile_expression(expression)
    assert cel.evaluate(expression, EFA) is True


@pytest.mark.parametrize("expression", [
    "url('https://a:b:c/').getHost() == ''",
    "url('../relative-path').getHost() == ''",
    "url(device.attributes['dra.net'].rdmaDevice) == url('/x')",  # not an absolute path
])
def test_a_string_url_refuses_fails_the_device(expression: str) -> None:
    cel.compile_expression(expression)
    with pytest.raises(cel.CelError, match="URL parse error"):
        cel.evaluate(expression, EFA)


@pytest.mark.parametrize(("expression", "message"), [
    ("url('https://example.com') == 'https://example.com'", r"'_==_' applied to \(kubernetes.URL, string\)"),
    ("url('https://example.com') < url('https://example.com')", r"'_<_' applied to \(kubernetes.URL"),
    ("'https://example.com'.url() == url('x')", r"'url' applied to \(string.\(\)\)"),
    ("url('/').getHost().getPort() == ''", r"'getPort' applied to \(string.\(\)\)|undeclared"),
    ("device.driver.split('.').exists(v, url(v) == url('/'))", "too complex, exceeds cost limit: url()"),
])
def test_the_compiler_refuses_what_the_api_server_refuses_of_urls(expression: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(expression)


def test_is_url_on_a_string_out_of_split_passes_the_cost_estimate() -> None:
    """cost.go charges `url` per character of its argument but gives `isURL` no such cost."""
    cel.compile_expression("device.driver.split('.').exists(v, isURL(v))")
