"""Kubernetes' URL CEL library (in the base environment since 1.0), for cel-python.

k8s.io/apiserver v0.36.3 `pkg/cel/library/urls.go`: `url(s)` and `isURL(s)` accept what Go's
`url.ParseRequestURI` accepts (an absolute URI or an absolute path), and the value is Go's `url.Parse(s)`;
`getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath`, `getQuery` read it. Parsing follows Go
1.26 `net/url/url.go` (`parse`, `parseAuthority`, `parseHost` with strict colons for http and https,
`unescape`, `EscapedPath`, `parseQuery`), byte by byte as Go reads a string.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from dataclasses import dataclass
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}


def go_quote(raw: bytes) -> str:
    """Go `strconv.Quote` of a string's bytes: printable characters kept, the rest escaped (`\\x` for a byte
    that is not UTF-8, `\\u`/`\\U` for other code points), in double quotes."""
    out = []
    for c in raw.decode(errors="surrogateescape"):
        point = ord(c)
        if c in _GO_ESCAPES:
            out.append(_GO_ESCAPES[c])
        elif 0xDC80 <= point <= 0xDCFF:  # a byte that is not UTF-8
            out.append(f"\\x{point - 0xDC00:02x}")
        elif c.isprintable():  # Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols, ASCII space
            out.append(c)
        elif point < 0x20 or point == 0x7F:
            out.append(f"\\x{point:02x}")
        else:
            out.append(f"\\u{point:04x}" if point < 0x10000 else f"\\U{point:08x}")
    return '"' + "".join(out) + '"'


_PATH, _HOST, _ZONE, _USER, _QUERY, _FRAGMENT = "path", "host", "zone", "user", "query", "fragment"
_HEX = b"0123456789abcdefABCDEF"


def _should_escape(c: int, mode: str) -> bool:
    """Go `net/url` `shouldEscape` (gen_encoding_table.go)."""
    ch = chr(c)
    if ch.isascii() and ch.isalnum():
        return False
    if mode in (_HOST, _ZONE) and ch in "!$&'()*+,;=:[]<>\"":
        return False
    if ch in "-_.~":
        return False
    if ch in "$&+,/:;=?@":
        return {_PATH: ch == "?", _USER: ch in "@/?:", _QUERY: True, _FRAGMENT: False}.get(mode, True)
    return not (mode == _FRAGMENT and ch in "!()*")


def _unescape(raw: bytes, mode: str) -> bytes:
    """Go `unescape`: `%XX` decoded (and `+` as a space in a query), ValueError on a bad escape or host byte."""
    out, i = bytearray(), 0
    while i < len(raw):
        c = raw[i]
        if c == ord("%"):
            if i + 2 >= len(raw) or raw[i + 1] not in _HEX or raw[i + 2] not in _HEX:
                raise ValueError(f"invalid URL escape {go_quote(raw[i:i + 3])}")
            value = int(raw[i + 1:i + 3], 16)
            if mode == _HOST and value < 0x80 and raw[i:i + 3] != b"%25":
                raise ValueError(f"invalid URL escape {go_quote(raw[i:i + 3])}")
            if mode == _ZONE and raw[i:i + 3] != b"%25" and value != 0x20 and _should_escape(value, _HOST):
                raise ValueError(f"invalid URL escape {go_quote(raw[i:i + 3])}")
            out.append(value)
            i += 3
            continue
        if mode in (_HOST, _ZONE) and c < 0x80 and _should_escape(c, mode):
            raise ValueError(f"invalid character {go_quote(bytes([c]))} in host name")
        out.append(0x20 if c == ord("+") and mode == _QUERY else c)
        i += 1
    return bytes(out)


def _escape(raw: bytes, mode: str) -> bytes:
    return b"".join(b"%%%02X" % c if _should_escape(c, mode) else bytes([c]) for c in raw)


def _valid_port(port: bytes) -> bool:
    return port == b"" or (port[:1] == b":" and all(48 <= c <= 57 for c in port[1:]))


def _parse_host(scheme: bytes, host: bytes) -> bytes:
    """Go `parseHost`: an IPv6 literal in brackets, or a name with an optional numeric port."""
    opening = host.rfind(b"[")
    if opening > 0:
        raise ValueError("invalid IP-literal")
    if opening == 0:
        closing = host.rfind(b"]")
        if closing < 0:
            raise ValueError("missing ']' in host")
        port = host[closing + 1:]
        if not _valid_port(port):
            raise ValueError(f"invalid port {go_quote(port)} after host")
        name = host[1:closing]
        zone = name.find(b"%25")
        literal = (_unescape(name[:zone], _HOST) + _unescape(name[zone:], _ZONE)) if zone >= 0 else _unescape(
            name, _HOST)
        if not _ipv6_literal(literal):
            # Go: "invalid IP-literal" for an IPv4 address, else "invalid host: " and netip's reason (not modelled)
            raise ValueError("invalid IP-literal" if _ipv4(literal) else "invalid host")
        return b"[" + literal + b"]" + _unescape(port, _HOST)
    if b":" in host:
        first, last = host.index(b":"), host.rindex(b":")
        at = first if scheme in (b"http", b"https") else last  # Go 1.26 urlstrictcolons
        if not _valid_port(host[at:]):
            raise ValueError(f"invalid port {go_quote(host[at:])} after host")
    return _unescape(host, _HOST)


def _ipv6_literal(literal: bytes) -> bool:
    """Go's netip.ParseAddr accepts it (a zone allowed) and it is not an IPv4 address."""
    try:
        return ipaddress.ip_address(literal.decode()).version == 6
    except (ValueError, UnicodeDecodeError):
        return False


def _ipv4(literal: bytes) -> bool:
    try:
        return ipaddress.ip_address(literal.decode()).version == 4
    except (ValueError, UnicodeDecodeError):
        return False


def _valid_userinfo(info: bytes) -> bool:
    return all(chr(c).isascii() and (chr(c).isalnum() or chr(c) in "-._:~!$&'()*+,;=%@") for c in info)


@dataclass(frozen=True)
class URL:
    """A parsed URL (the fields of Go's url.URL the library reads); equal when all of them are."""
    scheme: bytes = b""
    opaque: bytes = b""
    user: bytes | None = None
    host: bytes = b""
    path: bytes = b""
    raw_path: bytes = b""
    force_query: bool = False
    raw_query: bytes = b""
    fragment: bytes = b""

    def __repr__(self) -> str:
        return f"url({self.scheme!r}, {self.host!r}, {self.path!r})"


def _parse(raw: bytes, request: bool) -> URL:
    """Go `parse(rawURL, viaRequest)`."""
    if any(c < 0x20 or c == 0x7F for c in raw):
        raise ValueError("net/url: invalid control character in URL")
    if raw == b"" and request:
        raise ValueError("empty url")
    if raw == b"*":
        return URL(path=b"*")
    scheme, rest = b"", raw
    for i, c in enumerate(raw):
        ch = chr(c)
        if ch.isascii() and ch.isalpha():
            continue
        if ch.isdigit() or ch in "+-.":
            if i == 0:
                break
            continue
        if ch == ":":
            if i == 0:
                raise ValueError("missing protocol scheme")
            scheme, rest = raw[:i].lower(), raw[i + 1:]
        break
    force_query, query = False, b""
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        force_query, rest = True, rest[:-1]
    else:
        rest, _, query = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if scheme:
            return URL(scheme=scheme, opaque=rest, force_query=force_query, raw_query=query)
        if request:
            raise ValueError("invalid URI for request")
        if b":" in rest.partition(b"/")[0]:
            raise ValueError("first path segment in URL cannot contain colon")
    user, host = None, b""
    if (scheme or (not request and not rest.startswith(b"///"))) and rest.startswith(b"//"):
        authority, slash, tail = rest[2:].partition(b"/")
        rest = slash + tail
        at = authority.rfind(b"@")
        host = _parse_host(scheme, authority[at + 1:] if at >= 0 else authority)
        if at >= 0:
            if not _valid_userinfo(authority[:at]):
                raise ValueError("net/url: invalid userinfo")
            user = b":".join(_unescape(part, _USER) for part in authority[:at].split(b":", 1))
    path = _unescape(rest, _PATH)
    raw_path = b"" if _escape(path, _PATH) == rest else rest
    return URL(scheme, b"", user, host, path, raw_path, force_query, query)


def parse_request_uri(raw: bytes) -> str | None:
    """Why Go's `url.ParseRequestURI` refuses a string (None: it accepts it)."""
    try:
        _parse(raw, request=True)
    except ValueError as exc:
        return str(exc)
    return None


def parse_url(text: Any) -> URL | CELEvalError:
    """`url(s)`: ParseRequestURI must accept s; the value is url.Parse(s) (its fragment apart)."""
    if not isinstance(text, str):
        raise TypeError(f"no such overload: url on {type(text).__name__}")
    raw = str(text).encode()
    try:
        _parse(raw, request=True)
        before, _, fragment = raw.partition(b"#")
        parsed = _parse(before, request=False)
        return dataclasses.replace(parsed, fragment=_unescape(fragment, _FRAGMENT))
    except ValueError as exc:  # returned, not raised: celpy reports a raised ValueError as an overflow
        return CELEvalError(f"URL parse error during conversion from string: parse {go_quote(raw)}: {exc}",
                            ValueError, None)


def _is_url(text: Any) -> celtypes.BoolType:
    if not isinstance(text, str):
        raise TypeError(f"no such overload: isURL on {type(text).__name__}")
    try:
        _parse(str(text).encode(), request=True)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _split_host_port(host: bytes) -> tuple[bytes, bytes]:
    """Go `splitHostPort`: a numeric port after the last colon; brackets dropped."""
    colon = host.rfind(b":")
    port = b""
    if colon >= 0 and _valid_port(host[colon:]):
        host, port = host[:colon], host[colon + 1:]
    if host.startswith(b"[") and host.endswith(b"]"):
        host = host[1:-1]
    return host, port


def _valid_encoded(raw: bytes) -> bool:
    return all(chr(c) in "!$&'()*+,;=:@[]%" or not _should_escape(c, _PATH) for c in raw)


def _escaped_path(u: URL) -> bytes:
    """Go `URL.EscapedPath`."""
    if u.raw_path and _valid_encoded(u.raw_path):
        try:
            if _unescape(u.raw_path, _PATH) == u.path:
                return u.raw_path
        except ValueError:
            pass
    return b"*" if u.path == b"*" else _escape(u.path, _PATH)


def _query(u: URL) -> celtypes.MapType:
    """Go `URL.Query` (`parseQuery`, errors skipped): each key with its values in order."""
    out: dict[str, list[str]] = {}
    for part in u.raw_query.split(b"&") if u.raw_query else []:
        if b";" in part or not part:
            continue
        key, _, value = part.partition(b"=")
        try:
            name, text = _unescape(key, _QUERY), _unescape(value, _QUERY)
        except ValueError:
            continue
        out.setdefault(_text(name), []).append(_text(text))
    return celtypes.MapType({celtypes.StringType(k): celtypes.ListType(celtypes.StringType(v) for v in values)
                             for k, values in out.items()})


def _text(raw: bytes) -> celtypes.StringType:
    return celtypes.StringType(raw.decode(errors="replace"))


def _getter(name: str, read: Any) -> Any:
    def apply(value: Any) -> Any:
        if not isinstance(value, URL):
            raise TypeError(f"no such overload: {name} on {type(value).__name__}")
        return read(value)
    return apply


FUNCTIONS: dict[str, Any] = {
    "url": parse_url,
    "isURL": _is_url,
    "getScheme": _getter("getScheme", lambda u: _text(u.scheme)),
    "getHost": _getter("getHost", lambda u: _text(u.host)),
    "getHostname": _getter("getHostname", lambda u: _text(_split_host_port(u.host)[0])),
    "getPort": _getter("getPort", lambda u: _text(_split_host_port(u.host)[1])),
    "getEscapedPath": _getter("getEscapedPath", lambda u: _text(_escaped_path(u))),
    "getQuery": _getter("getQuery", _query),
}
