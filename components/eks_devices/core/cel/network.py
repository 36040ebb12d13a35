"""Kubernetes' `ip` and `cidr` CEL libraries (in the base environment since 1.30), for cel-python.

k8s.io/apiserver v0.36.3 `pkg/cel/library/ip.go` and `cidr.go`: addresses parse as Go's `netip.ParseAddr`
and `netip.ParsePrefix` do (no leading zeros, no netmask spelling), and Kubernetes refuses a zone and an
IPv4-mapped IPv6 address. The predicates follow Go's `netip.Addr` methods (`IsGlobalUnicast` is true for
private ranges, unlike Python's `is_global`).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from celpy import celtypes

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"no such overload: {name} on {type(value).__name__}")
    return str(value)


def _parse_address(raw: str) -> Address:
    """`parseIPAddr`: netip.ParseAddr, then no zone and no IPv4-mapped IPv6 address."""
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        raise ValueError(f"IP Address {raw!r} parse error during conversion from string") from None
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id is not None:
            raise ValueError(f"IP address {raw!r} with zone value is not allowed")
        if address.ipv4_mapped is not None:
            raise ValueError(f"IPv4-mapped IPv6 address {raw!r} is not allowed")
    return address


class IP:
    """A CEL `net.IP` value: equal to another IP of the same address."""

    def __init__(self, address: Address):
        self.address = address

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IP) and self.address == other.address

    def __hash__(self) -> int:
        return hash(self.address)

    def __str__(self) -> str:
        return str(self.address)  # Go's netip.Addr.String(): the canonical form, as Python's

    def __repr__(self) -> str:
        return f"ip({str(self)!r})"


class CIDR:
    """A CEL `net.CIDR` value: an address (host bits kept, as netip.Prefix keeps them) and a prefix length."""

    def __init__(self, address: Address, bits: int):
        self.address, self.bits = address, bits
        self.network = ipaddress.ip_network(f"{address}/{bits}", strict=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDR) and (self.address, self.bits) == (other.address, other.bits)

    def __hash__(self) -> int:
        return hash((self.address, self.bits))

    def __str__(self) -> str:
        return f"{self.address}/{self.bits}"

    def __repr__(self) -> str:
        return f"cidr({str(self)!r})"


def _parse_cidr(raw: str) -> CIDR:
    """`parseCIDR`: netip.ParsePrefix (a decimal prefix length without leading zeros, no zone), then no
    IPv4-mapped IPv6 address."""
    address_text, slash, bits_text = raw.rpartition("/")
    bits_ok = bits_text.isdigit() and bits_text.isascii() and (bits_text == "0" or not bits_text.startswith("0"))
    if not slash or not bits_ok or "%" in address_text:
        raise ValueError(f"network address parse error during conversion from string: {raw!r}")
    address = _parse_address(address_text)
    bits = int(bits_text)
    if bits > address.max_prefixlen:
        raise ValueError(f"network address parse error during conversion from string: {raw!r}")
    return CIDR(address, bits)


def _ip(value: Any) -> IP:
    return IP(_parse_address(_text(value, "ip")))


def _cidr(value: Any) -> CIDR:
    return _parse_cidr(_text(value, "cidr"))


def _parses(parse: Any, name: str) -> Any:
    def check(value: Any) -> celtypes.BoolType:
        try:
            parse(_text(value, name))
        except ValueError:
            return celtypes.BoolType(False)
        return celtypes.BoolType(True)
    return check


def _address(value: Any, name: str) -> Address:
    if not isinstance(value, IP):
        raise TypeError(f"no such overload: {name} on {type(value).__name__}")
    return value.address


def _is_canonical(value: Any) -> celtypes.BoolType:
    raw = _text(value, "ip.isCanonical")
    return celtypes.BoolType(str(_parse_address(raw)) == raw)


def _link_local_multicast(a: Address) -> bool:
    if a.version == 4:
        return a in ipaddress.ip_network("224.0.0.0/24")
    return (int(a) >> 112) & 0xFF0F == 0xFF02  # Go: v6u16(0)&0xff0f == 0xff02


def _global_unicast(a: Address) -> bool:
    """Go's netip.Addr.IsGlobalUnicast: not unspecified, loopback, multicast, link-local or v4 broadcast."""
    if a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local:
        return False
    return not (a.version == 4 and str(a) == "255.255.255.255")


def _predicate(name: str, test: Any) -> Any:
    return lambda value: celtypes.BoolType(test(_address(value, name)))


def _cidr_of(value: Any, name: str) -> CIDR:
    if not isinstance(value, CIDR):
        raise TypeError(f"no such overload: {name} on {type(value).__name__}")
    return value


def _contains_ip(cidr: Any, other: Any) -> celtypes.BoolType:
    """`cidr.containsIP(ip or string)`."""
    address = _ip(other).address if isinstance(other, str) else _address(other, "containsIP")
    return celtypes.BoolType(address in _cidr_of(cidr, "containsIP").network)


def _contains_cidr(cidr: Any, other: Any) -> celtypes.BoolType:
    """`cidr.containsCIDR(cidr or string)`: the other overlaps and is no wider (Go cidrContainsCIDR)."""
    outer = _cidr_of(cidr, "containsCIDR")
    inner = _cidr(other) if isinstance(other, str) else _cidr_of(other, "containsCIDR")
    return celtypes.BoolType(outer.network.version == inner.network.version and outer.bits <= inner.bits
                             and outer.network.overlaps(inner.network))


def _cidr_ip(value: Any) -> IP:
    return IP(_cidr_of(value, "ip").address)


def _masked(value: Any) -> CIDR:
    cidr = _cidr_of(value, "masked")
    return CIDR(cidr.network.network_address, cidr.bits)


FUNCTIONS: dict[str, Any] = {
    "isIP": _parses(_parse_address, "isIP"),
    "isCIDR": _parses(_parse_cidr, "isCIDR"),
    "ip.isCanonical": _is_canonical,
    "cidr": _cidr,
    "family": lambda value: celtypes.IntType(_address(value, "family").version),
    "isUnspecified": _predicate("isUnspecified", lambda a: a.is_unspecified),
    "isLoopback": _predicate("isLoopback", lambda a: a.is_loopback),
    "isLinkLocalMulticast": _predicate("isLinkLocalMulticast", _link_local_multicast),
    "isLinkLocalUnicast": _predicate("isLinkLocalUnicast", lambda a: a.is_link_local),
    "isGlobalUnicast": _predicate("isGlobalUnicast", _global_unicast),
    "containsIP": _contains_ip,
    "containsCIDR": _contains_cidr,
    "prefixLength": lambda value: celtypes.IntType(_cidr_of(value, "prefixLength").bits),
    "masked": _masked,
}


def ip_function(value: Any) -> IP:
    """`ip(string)` and `cidr.ip()`: one name, two overloads."""
    return _cidr_ip(value) if isinstance(value, CIDR) else _ip(value)


def string_of(value: Any) -> celtypes.StringType | None:
    """`string(ip)` / `string(cidr)`; None for other values (left to CEL's own `string`)."""
    return celtypes.StringType(str(value)) if isinstance(value, (IP, CIDR)) else None
