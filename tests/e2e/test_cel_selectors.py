"""The real scheduler's DRA allocator as the oracle for the CEL the fit check runs (`core/cel.py`:
`compile_expression` and `evaluate`, through `fit.allocate`).

Each case is one selector on one node of its own that publishes a small mix of the devices the fit check
models (whole GPUs with memory and versions, MIG devices, the ENA and EFAs, Neuron devices, ComputeDomain
channels: `knowledge.devices`), a DeviceClass that selects every device, and a ResourceClaim asking for
`allocationMode: All` devices of that class matching the selector, used by one Pod pinned to the node.
`All` takes every device the selector matches, so the allocation the real kube-scheduler writes shows,
device by device, what the selector matched: it must equal the devices the model's allocation takes.
A selector the API server refuses must be one the model refuses to compile; one the scheduler cannot
allocate must be one the model says matches nothing or fails on a device (a CEL runtime error fails
the whole allocation in the scheduler, `dynamic-resource-allocation` structured allocator).

The selectors are written from building blocks (every function of Kubernetes' CEL library the model
provides, attribute and capacity reads, missing attributes and domains, heterogeneous comparisons) and
combined by hypothesis with a fixed seed (`&&`, `||`, `!`, `?:`: CEL's commutative `&&`/`||` absorb an
error when the other side decides).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from e2e.controlplane import ApiError, ControlPlane
from eks_devices.core.cel import CelError, compile_expression
from eks_devices.core.derive import fit
from eks_devices.core.knowledge import devices as inventory
from eks_devices.core.knowledge.devices import Device

CLASS = "e2e-cel-every-device"
NAMESPACE = "e2e-cel"
CASE_LABEL = "e2e.eks-devices.io/cel-case"
HOSTNAME = "kubernetes.io/hostname"
WORKERS = 8


def node_devices() -> tuple[Device, ...]:
    """A node's worth of modelled devices of every driver and attribute type (at most 32: one claim's limit)."""
    def some(itype: str, families: tuple[str, ...], driver: str, n: int, prefix: str = "", **kw: Any) -> list[Device]:
        found = [d for d in inventory.inventory(itype, families, **kw) if d.driver == driver][:n]
        return [dataclasses.replace(d, name=prefix + d.name) for d in found]

    return (*some("p5.48xlarge", ("nvidia",), inventory.NVIDIA_DRIVER, 2),
            *some("g6e.xlarge", ("nvidia",), inventory.NVIDIA_DRIVER, 1, "l40s-"),
            *some("p4d.24xlarge", ("nvidia",), inventory.NVIDIA_DRIVER, 2, "a100-", mig_profile="3g.40gb"),
            *some("p5.48xlarge", ("efa",), inventory.DRANET_DRIVER, 3),
            *some("trn2.48xlarge", ("neuron",), inventory.NEURON_DRIVER, 2),
            *some("inf2.xlarge", ("neuron",), inventory.NEURON_DRIVER, 1, "inf-"),
            *inventory.compute_domain_devices())


# -- the selectors ------------------------------------------------------------------------------------
GPU = "device.attributes['gpu.nvidia.com']"
NET = "device.attributes['dra.net']"
MEMORY = "device.capacity['gpu.nvidia.com'].memory"


def on(driver: str, predicate: str) -> str:
    """A predicate read only on one driver's devices (elsewhere its attributes are missing: an error)."""
    return f"device.driver == '{driver}' && {predicate}"


def gpu(predicate: str) -> str:
    return on("gpu.nvidia.com", predicate)


def net(predicate: str) -> str:
    return on("dra.net", predicate)


ATOMS = [
    # drivers, strings and their library
    "device.driver == 'gpu.nvidia.com'",
    "device.driver.startsWith('neuron')",
    gpu(f"{GPU}.productName.contains('H100')"),
    gpu(f"{GPU}.productName.endsWith('40S')"),
    gpu(f"{GPU}.productName.matches('^NVIDIA [AH]1')"),
    gpu(f"{GPU}.productName.lowerAscii().contains('nvidia h')"),
    gpu(f"{GPU}.productName.replace(' ', '').upperAscii().startsWith('NVIDIAH1')"),
    gpu(f"{GPU}.productName.split(' ').size() == 4"),
    gpu(f"{GPU}.productName.substring(0, 6) == 'NVIDIA' && {GPU}.productName.charAt(7) == 'H'"),
    gpu(f"{GPU}.productName.indexOf('H') == 7 || {GPU}.productName.lastIndexOf('0') > 8"),
    gpu(f"{GPU}.productName.substring(30) == ''"),  # past the end: an error on the shorter names
    gpu(f"{GPU}.productName < 'NVIDIA I'"),
    gpu(f"{GPU}.architecture in ['Hopper', 'Ampere']"),
    gpu(f"{GPU}.type == 'mig'"),
    gpu(f"size({GPU}.uuid) > 40"),
    "device.driver != 'gpu.nvidia.com' && device.driver != 'dra.net' || "
    "device.attributes['resource.kubernetes.io'].pcieRoot.startsWith('pci0000:1')",
    net(f"{NET}.pciAddress.split(':')[1] == '00'"),
    net(f"{NET}.pciAddress.split(':', 2)[1] == '00:05.0' && ' x '.trim() == 'x'"),
    on("neuron.aws.com", "device.attributes['neuron.aws.com'].instanceType.startsWith('trn')"),
    on("neuron.aws.com", "device.attributes['resource.aws.com'].devicegroup4_id != ''"),
    on("compute-domain.nvidia.com", "device.attributes['compute-domain.nvidia.com'].type == 'channel'"),
    # integers and booleans
    net(f"{NET}.numaNode == 0"),
    net(f"{NET}.numaNode + 1 > 1"),
    net(f"{NET}.rdma"),
    net(f"!{NET}.rdma"),
    net(f"{NET}.rdma == true"),
    net(f"{NET}.numaNode < 1.5"),
    net(f"{NET}.numaNode == 0.0"),
    net(f"{NET}.numaNode == 0u"),
    "device.allowMultipleAllocations || device.driver == 'dra.net'",
    on("compute-domain.nvidia.com", "device.attributes['compute-domain.nvidia.com'].id == 0"),
    # versions
    gpu(f"{GPU}.cudaComputeCapability.compareTo(semver('9.0.0')) >= 0"),
    gpu(f"{GPU}.cudaComputeCapability.isGreaterThan(semver('8.0.0'))"),
    gpu(f"{GPU}.cudaComputeCapability.isLessThan(semver('8.9.0'))"),
    gpu(f"{GPU}.cudaComputeCapability.major() == 9"),
    gpu(f"{GPU}.driverVersion.minor() >= 82"),
    gpu(f"{GPU}.cudaDriverVersion.patch() == 0"),
    gpu(f"{GPU}.cudaComputeCapability == semver('8.9.0')"),
    "semver('1.2.3-alpha').isLessThan(semver('1.2.3')) && device.driver == 'compute-domain.nvidia.com'",
    "isSemver('1.2') || device.driver == 'dra.net'",
    net("semver('v1.02', true).minor() == 2 && isSemver('1.2', true) && !isSemver('1.2-rc1', true)"),
    gpu(f"{GPU}.cudaComputeCapability == {GPU}.driverVersion"),
    # quantities
    gpu(f"{MEMORY}.compareTo(quantity('80Gi')) >= 0"),
    gpu(f"{MEMORY}.isGreaterThan(quantity('40Gi'))"),
    gpu(f"{MEMORY}.isLessThan(quantity('50000Mi'))"),
    gpu(f"{MEMORY}.asInteger() > 45000000000"),
    gpu(f"sign({MEMORY}) == 1 && {MEMORY}.isInteger()"),
    gpu(f"{MEMORY}.add(quantity('1Gi')).compareTo(quantity('41Gi')) == 0"),
    gpu(f"sign({MEMORY}.sub(quantity('40Gi'))) == 0"),
    gpu(f"{MEMORY}.asApproximateFloat() > 8.0e10"),
    gpu(f"{MEMORY} == quantity('40960Mi')"),
    "quantity('1Gi') == quantity('1024Mi') && device.driver == 'neuron.aws.com'",
    "isQuantity('80Gi') && !isQuantity('80 Gi') && device.driver == 'dra.net'",
    # presence: domains and names
    "'gpu.nvidia.com' in device.attributes",
    f"'profile' in {GPU}",
    f"'gpu.nvidia.com' in device.attributes && has({GPU}.productName)",
    "'memory' in device.capacity['gpu.nvidia.com']",
    "'dra.net' in device.attributes && " + f"{NET}.rdma",
    # a missing attribute or domain read: a runtime error (unless the other side of && or || decides)
    f"{GPU}.index < 4",
    f"{NET}.rdma",
    gpu(f"{GPU}.index < 4"),
    # comparisons across types: unequal, not an error, where a type is known only per device
    net(f"{NET}.numaNode == 'zero'"),
    gpu(f"{GPU}.productName == 1"),
    net(f"{NET}.rdma == 1"),
    gpu(f"{GPU}.productName == {GPU}.architecture"),
    # lists and sets: cel-go's lists (v3) and sets extensions, Kubernetes' list library
    gpu(f"sets.contains(['Hopper', 'Ada Lovelace'], [{GPU}.architecture])"),
    gpu(f"sets.intersects({GPU}.productName.split(' '), ['H100', 'L40S'])"),
    gpu(f"sets.equivalent({GPU}.productName.split('-').distinct(), {GPU}.productName.split('-'))"),
    gpu(f"{GPU}.productName.split(' ').slice(1, 2) == ['H100']"),
    "device.driver.split('.').slice(0, 3).size() == 3",  # an error on two-part driver names
    gpu(f"{GPU}.productName.split(' ').sort()[0] == '80GB'"),
    gpu(f"{GPU}.productName.split(' ').reverse()[0].startsWith('HBM')"),
    gpu(f"[{GPU}.productName.split(' '), ['x']].flatten().size() == 5"),
    net(f"lists.range(2).exists(i, {NET}.numaNode == i) && {NET}.rdma"),
    net(f"[{NET}.numaNode, {NET}.numaNode].max() == 0 && [{NET}.numaNode].min() == 0 && [{NET}.numaNode].sum() == 0"),
    net(f"[1, 2].isSorted() && ['eth', 'efa'].indexOf({NET}.rdmaDevice.substring(0, 3)) == -1"),
    gpu(f"['Hopper', 'Ampere', 'Hopper'].lastIndexOf({GPU}.architecture) == 2"),
    "[3, 1].sort() == [1, 3] && ![2, 1].isSorted() && [1, 2, 3].sum() == 6 && device.driver == 'neuron.aws.com'",
    gpu(f"strings.quote({GPU}.architecture) == '\"Ampere\"'"),
    gpu(f"{GPU}.productName.matches('^NVIDIA (?:H|A)100[- ]')"),
    gpu(f"{GPU}.productName.matches('(?i)^nvidia l')"),
    net(f"device.driver + '/' + {NET}.rdmaDevice == 'dra.net/rdmap0'"),  # a concatenation is a string
    # Kubernetes' ip and cidr libraries
    net(f"cidr('10.0.0.0/8').containsIP('10.' + string({NET}.numaNode) + '.0.1') && {NET}.rdma"),
    "isIP('::1') && !isIP('010.0.0.1') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0') && device.driver == 'dra.net'",
    "isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/08') && !isCIDR('10.0.0.0/255.0.0.0') && !isCIDR('10.0.0.0/33') && "
    "device.driver == 'neuron.aws.com'",
    "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').ip() == ip('10.1.2.3') && "
    "cidr('10.0.0.0/8').prefixLength() == 8 && string(cidr('10.1.2.3/8').masked()) == '10.0.0.0/8' && "
    "device.driver == 'compute-domain.nvidia.com'",
    gpu("ip('10.0.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast() && "
        "ip('ff02::1').isLinkLocalMulticast() && ip('fe80::1').isLinkLocalUnicast() && ip('127.0.0.2').isLoopback() && "
        "ip('::').isUnspecified() && ip('::1') == ip('0:0::1') && ip('::1').family() == 6 && "
        "ip.isCanonical('::1') && !ip.isCanonical('0:0::1')"),
    "cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8') || cidr('::/0').containsIP('1.2.3.4') || device.driver == 'dra.net'",
    gpu(f"ip({GPU}.productName).family() == 4"),  # not an address: an error on every GPU
    # Kubernetes' url library (Go's net/url)
    net("url('https://u:p@[::1]:80/a b?k=1&k=2#f').getHost() == '[::1]:80' && "
        "url('HTTPS://h:8/').getScheme() == 'https' && url('https://[::1]:80/').getHostname() == '::1' && "
        "url('https://h:80/').getPort() == '80' && url('https://h/a b').getEscapedPath() == '/a%20b' && "
        "url('https://h/p?k=1&k=2&x;y=1&z=%zz').getQuery() == {'k': ['1', '2']}"),
    "isURL('/a') && isURL('mailto:x@y') && !isURL('../a') && !isURL('https://a:1:2/') && isURL('ftp://a:1:2/') && "
    "device.driver == 'neuron.aws.com'",
    gpu(f"url('/' + {GPU}.architecture) == url('/Hopper')"),
    net(f"url({NET}.rdmaDevice).getScheme() == ''"),  # not an absolute path: an error on every EFA
    # cel-go's format (strings extension): Go's float printing, x/text's en-US digits, the validator's types
    gpu(f"'%s-%d'.format([dyn({GPU}.productName), dyn({GPU}.index)]).startsWith('NVIDIA H100-')"),
    net(f"'%s %d %b %x %o'.format([dyn({NET}.rdma), dyn({NET}.numaNode), true, 255, 8]) == 'true 0 1 ff 10'"),
    "'%.2f|%e|%s|%s'.format([1234.5, 2.71828, 1234567.0, [1, 2.5, 'a']]) == "
    "'1,234.50|2.718280×10⁰⁰|1.234567e+06|[1, 2.500000, \"a\"]' && device.driver == 'neuron.aws.com'",
    "'%s'.format([{'b': 1, 'a': 2}]) == '{\"a\":2, \"b\":1}' && '%f'.format(['-Infinity']) == '-∞' && "
    "'%.2e'.format([-1e-10]) == '-1.000000×10⁻¹⁰' && '%s %s'.format([1, 'a']) == '1 a' && device.driver == 'dra.net'",
    gpu(f"'%s'.format([dyn({GPU}.driverVersion)]) == ''"),  # a version: an error on every GPU
    # optional values: `.?`, `[?]`, `?`-marked elements and keys, the optional library
    f"{GPU}.?productName.orValue('').startsWith('NVIDIA H')",
    f"{NET}[?'rdma'].orValue(false) && {{?'x': {NET}.?numaNode}}.size() == 1",
    f"{MEMORY.rpartition('.')[0]}.?memory.optMap(m, m.isGreaterThan(quantity('40Gi'))).orValue(false)",
    "device.attributes.?foo.hasValue() && device.capacity[?'gpu.nvidia.com'].value().?memory.hasValue()",
    f"[?{GPU}.?index, ?optional.none()].size() == 1",  # an empty optional's value: an error off the GPUs
    "optional.of(1).optFlatMap(x, optional.none()).hasValue() || [device.driver].first().value().startsWith('neuron')",
    # macros: cel-go's two-variable comprehensions (index or key, and value), existsOne, sortBy, cel.bind
    gpu(f"{GPU}.productName.split(' ').exists(i, w, i == 1 && w.startsWith('H'))"),
    gpu(f"{GPU}.productName.split(' ').all(i, w, i < 2 || w.endsWith('GB') || w.startsWith('HBM'))"),
    gpu(f"{GPU}.productName.split(' ').existsOne(i, w, w.startsWith('H'))"),
    net(f"{NET}.pciAddress.split(':').transformList(i, p, i > 0, p.size()) == [2, 4]"),
    "device.attributes.exists(d, m, d == 'dra.net' && m.rdma)",
    "device.attributes.transformMap(d, m, m.size()).exists(d, n, n > 6)",
    "device.capacity.exists_one(d, c, c.memory.isGreaterThan(quantity('40Gi')))",  # an error where memory is missing
    "device.attributes.transformMapEntry(d, m, {d.split('.')[0]: m.size()}).all(k, n, n > 1)",
    gpu(f"{GPU}.productName.split(' ').sortBy(w, w.charAt(1))[0] == '80GB'"),
    f"cel.bind(g, {GPU}, device.driver == 'gpu.nvidia.com' && g.productName.contains('H100'))",
    "device.driver + '' < 'e'",  # a concatenation orders as a string
    "[[1], []].size() == 2 && [['a'], [device.driver]].flatten().size() == 2 && device.driver == 'dra.net'",
    # Kubernetes' format library: each format's verdicts, apimachinery's messages word for word, lengths in bytes
    gpu(f"!format.uuid().validate({GPU}.uuid.substring(4)).hasValue()"),  # an error on the MIG devices
    "!format.dns1123Subdomain().validate(device.driver).hasValue() && "
    "format.dns1123Label().validate(device.driver).value() == ['must not contain dots']",
    on("neuron.aws.com", "format.dns1123Label().validate(device.attributes['resource.aws.com'].devicegroup1_id)"
                         ".hasValue()"),
    net(f"format.named('dns1035Label').value().validate({NET}.pciDevice).hasValue()"),
    "!format.dns1123LabelPrefix().validate('A-').hasValue() && format.dns1123LabelPrefix().validate('-').hasValue() && "
    "format.dns1123Label().validate('A').value() == [\"a lowercase RFC 1123 label must consist of lower case "
    "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
    "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\"] && "
    "device.driver == 'compute-domain.nvidia.com'",
    "format.qualifiedName().validate('/a').value() == ['prefix part must be non-empty'] && "
    "!format.qualifiedName().validate('example.com/My.Name_1').hasValue() && "
    "format.labelValue().validate('" + "é" * 32 + "').value().size() == 2 && "
    "format.labelValue().validate('" + "é" * 31 + "').value().size() == 1 && "
    "format.dns1123Label().validate('" + "a" * 64 + "').value() == ['must be no more than 63 characters'] && "
    "device.driver == 'dra.net'",
    "format.uri().validate('https://a:1:2/').value() == ['parse \"https://a:1:2/\": invalid port \":1:2\" after host'] "
    "&& format.uri().validate('/%zé').value() == ['parse \"/%zé\": invalid URL escape \"%z\\\\xc3\"'] && "
    "!format.uri().validate('mailto:x@y').hasValue() && format.uri().validate('http://[1.2.3.4]/').hasValue() && "
    "device.driver == 'neuron.aws.com'",
    gpu("!format.date().validate('2024-02-29').hasValue() && format.date().validate('2023-02-29').hasValue() && "
        "!format.date().validate('0000-02-29').hasValue() && format.date().validate('2021-1-01').hasValue() && "
        "!format.datetime().validate('2021-01-01T00:00:00ZTx').hasValue() && "
        "!format.datetime().validate('2021-01-01t00:00:00İ5Z').hasValue() && "
        "format.datetime().validate('2021-01-01T24:00:00Z').hasValue() && "
        "format.datetime().validate('2021-01-01T00:00:00Z\\n').hasValue() && "
        "!format.byte().validate('aGk=').hasValue() && format.byte().validate('aGk').value() == ['invalid base64'] && "
        "!format.uuid().validate('123E4567E89B12D3A456426614174000').hasValue()"),
    "!format.dns1123SubdomainPrefix().validate('a..-').hasValue() && format.dns1035LabelPrefix().validate('0').hasValue() "
    "&& !format.dns1035LabelPrefix().validate('0-').hasValue() && device.driver == 'dra.net'",
    "[format.uuid(), format.byte()].exists(f, f == format.byte() && !f.validate('YWJj').hasValue()) && "
    "format.named(device.driver).orValue(format.uri()) == format.uri() && device.driver.startsWith('compute')",
    gpu(f"format.named({GPU}.index).hasValue()"),  # not a string: an error on the GPUs that have an index
    net(f"!({NET}.pciDevice == format.uuid())"),  # a string is unequal to a format...
    net(f"!(format.uuid() == {NET}.pciDevice)"),  # ...but a format's `==` has no overload for a string: an error
    # refused by the API server's type checker
    gpu(f"{MEMORY} == 42"),
    "device.driver",
    "!device.driver",
    "device.driver == 'gpu.nvidia.com' || 1",
    "device.nope == 1",
    "device.attributes['gpu.nvidia.com'].productName.nosuchfunction()",
    "quantity('80Gi') < quantity('90Gi')",
    gpu(f"{MEMORY} >= quantity('40Gi')"),
    gpu(f"{MEMORY}.sign() == 1"),
    net("device.driver.quantity() == quantity('1')"),
    "1 == 1.0",
    gpu(f"{GPU}.productName.matches('H(?=100)')"),  # RE2 has no lookahead: refused as a literal pattern
    "device.driver.matches('(g)\\\\1')",  # nor backreferences
    "sets.contains(device.driver, ['a'])",
    net(f"[{NET}.numaNode, 1].max() == 1"),  # a list literal of an attribute (any) and an int
    "['a', 'b'].join('-') == 'a-b' && device.driver == 'dra.net'",  # too complex: a list of strings
    gpu(f"{GPU}.productName.split(' ').indexOf('H100') == 1"),
    "ip('1.2.3.4') == '1.2.3.4'",
    "ip('1.2.3.4') < ip('1.2.3.5') || device.driver == 'dra.net'",
    "'1.2.3.4'.ip() == ip('1.2.3.4')",
    "cidr('10.0.0.0/8').containsIP(1)",
    "[[1], [true]].size() == 2",  # nested lists of different element types
    "[1].all(i, i, true)",  # one name for both variables
    "[1].transformList(x, x) == [1]",  # no one-variable form
    "device.driver.split('.').existsOne(p, p.size() == 3)",  # cel-go's newer spelling: not a Kubernetes macro
    # too complex: a size-dependent function on a string out of split(), whose size the estimate cannot bound
    "device.driver.split('.').exists(v, v.contains('a'))",
    "cel.bind(s, device.driver.split('.')[0], s.lowerAscii() == 'a')",
    net(f"{NET}.pciAddress.split(':').exists(i, p, isQuantity(p))"),
    "url('https://h/') == 'https://h/'",
    "device.driver.getHost() == ''",
    gpu(f"'%d'.format([{GPU}.index]) == '0'"),  # an attribute's static type (any) in a literal call
    "'%s %s'.format(['a']) == 'a'",
    "'%s'.format(['a', 'b']) == 'a'",
    "'%q'.format([1]) == '1'",
    "[?1] == [1]",
    "optional.of(1).or(2).hasValue()",
    "device.?nope.hasValue()",
    f"optional.unwrap([{NET}.?rdma, optional.of(true)]).size() == 2",  # optional(any) beside optional(bool)
    # Kubernetes' format library: what the type checker refuses, and the cost estimate
    "format.named(1).hasValue()",
    "format.nope().validate('x').hasValue()",
    "format.dns1123Label().validate(1).hasValue()",
    "format.named('uuid').validate('x').hasValue()",
    "string(format.uuid()) == 'x'",
    "format.dns1123Label() != format.uuid() || device.driver == 'dra.net'",
    net(f"{NET}.pciAddress.split(':').exists(p, format.dns1123Label().validate(p).hasValue())"),
    "format.uuid().validate(device.driver.charAt(1)).hasValue()",
    "device.driver.charAt(0).lowerAscii() == 'g'",
]
REFUSABLE = 47  # the last atoms: kept out of combinations


@st.composite
def combined(draw: st.DrawFn) -> str:
    """One to three building blocks joined as CEL joins selectors."""
    atoms = draw(st.lists(st.sampled_from(ATOMS[:-REFUSABLE]), min_size=2, max_size=3, unique=True))
    shape = draw(st.sampled_from(["and", "or", "or", "not", "ternary"]))
    if shape == "ternary" and len(atoms) == 3:
        return f"({atoms[0]}) ? ({atoms[1]}) : ({atoms[2]})"
    if shape == "not":
        return f"!({atoms[0]}) && ({atoms[1]})"
    joiner = " && " if shape == "and" else " || "
    return joiner.join(f"({a})" for a in atoms)


def selectors(count: int) -> list[str]:
    """The building blocks, then `count` generated combinations (fixed seed)."""
    drawn: list[str] = []

    @settings(max_examples=count * 3, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(combined())
    def collect(expression: str) -> None:
        drawn.append(expression)

    collect()
    return [*ATOMS, *list(dict.fromkeys(drawn))[:count]]


# -- the model's answer -------------------------------------------------------------------------------
REFUSED, UNALLOCATED = "refused", "unallocated"


def claim_spec(expression: str) -> dict[str, Any]:
    return {"requests": [{"name": "all", "exactly": {"deviceClassName": CLASS, "allocationMode": "All",
                                                      "selectors": [{"cel": {"expression": expression}}]}}]}


def modelled(expression: str, devices: tuple[Device, ...]) -> str | frozenset[str]:
    """What the model says: refused, unallocated (nothing matches, or a device fails the selector), or
    the devices (`driver/name`) the claim takes."""
    try:
        compile_expression(expression)
    except CelError:
        return REFUSED
    outcome = fit.allocate(claim_spec(expression), {CLASS: []}, devices)
    if not outcome.ok:
        return UNALLOCATED
    by_name = {d.name: d for d in devices}
    return frozenset(f"{by_name[n].driver}/{n}" for _, names in outcome.devices for n in names)


# -- the real answer ----------------------------------------------------------------------------------
@dataclass
class Case:
    index: int
    expression: str

    @property
    def node(self) -> str:
        return f"cel-{self.index}"

    def objects(self) -> list[dict[str, Any]]:
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": self.node, "namespace": NAMESPACE}, "spec": {"devices": claim_spec(
                     self.expression)}}
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": self.node, "namespace": NAMESPACE, "labels": {CASE_LABEL: self.node}}, "spec": {
            "nodeSelector": {HOSTNAME: self.node}, "tolerations": [{"operator": "Exists"}],
            "resourceClaims": [{"name": "devices", "resourceClaimName": self.node}],
            "containers": [{"name": "work", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"claims": [{"name": "devices"}]}}]}}
        return [claim, pod]


def _pending(pod: dict[str, Any]) -> bool:
    """Neither bound nor found unschedulable yet."""
    if pod["spec"].get("nodeName"):
        return False
    return not any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                   for c in (pod.get("status") or {}).get("conditions") or [])


def real(plane: ControlPlane, cases: list[Case], devices: tuple[Device, ...],
         timeout: float = 150) -> dict[str, str | frozenset[str]]:
    """Per case what the server and the scheduler did: refused, unallocated, or the devices allocated."""
    plane.apply({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
                 "spec": {}})
    plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    out: dict[str, str | frozenset[str]] = {}

    def create(case: Case) -> None:
        plane.add_node(case.node, {HOSTNAME: case.node})
        for piece in inventory.slices_of(devices, case.node):
            plane.apply(piece)
        try:
            for obj in case.objects():
                plane.apply(obj)
        except ApiError as exc:
            if exc.status != 422:
                raise
            out[case.node] = REFUSED

    with ThreadPoolExecutor(WORKERS) as workers:
        list(workers.map(create, cases))
    waiting = {c.node for c in cases} - set(out)
    deadline = time.monotonic() + timeout
    pods: dict[str, dict[str, Any]] = {}
    while time.monotonic() < deadline:
        pods = {p["metadata"]["name"]: p for p in plane.list("v1", "Pod", NAMESPACE, selector=CASE_LABEL)}
        if waiting <= set(pods) and not any(_pending(pods[n]) for n in waiting):
            break
        time.sleep(1.0)
    else:
        raise TimeoutError(f"{sorted(n for n in waiting if n not in pods or _pending(pods[n]))} did not settle")
    claims = {c["metadata"]["name"]: c for c in plane.list("resource.k8s.io/v1", "ResourceClaim", NAMESPACE)}
    for name in waiting:
        allocation = ((claims.get(name) or {}).get("status") or {}).get("allocation")
        if not pods[name]["spec"].get("nodeName") or allocation is None:
            out[name] = UNALLOCATED
            continue
        out[name] = frozenset(f"{r['driver']}/{r['device']}" for r in allocation["devices"]["results"])
    return out


def clean(plane: ControlPlane, cases: list[Case], devices: tuple[Device, ...]) -> None:
    plane.delete("v1", "Namespace", NAMESPACE)

    def remove(case: Case) -> None:
        for piece in inventory.slices_of(devices, case.node):
            plane.delete("resource.k8s.io/v1", "ResourceSlice", piece["metadata"]["name"])
        plane.delete("v1", "Node", case.node)

    with ThreadPoolExecutor(WORKERS) as workers:
        list(workers.map(remove, cases))
    plane.delete("resource.k8s.io/v1", "DeviceClass", CLASS)


@pytest.fixture(scope="module")
def outcomes(control_plane: ControlPlane) -> Iterator[list[tuple[str, str | frozenset[str], str | frozenset[str]]]]:
    devices = node_devices()
    cases = [Case(i, e) for i, e in enumerate(selectors(70))]
    try:
        answers = real(control_plane, cases, devices)
    finally:
        clean(control_plane, cases, devices)
    yield [(c.expression, modelled(c.expression, devices), answers[c.node]) for c in cases]


def test_the_node_holds_every_attribute_kind_within_one_claims_limit() -> None:
    devices = node_devices()
    assert len(devices) <= fit.ALLOCATION_RESULTS_MAX
    kinds = {kind for d in devices for typed in d.attributes.values() for kind in typed}
    assert kinds == {"string", "int", "bool", "version"}
    assert len({d.driver for d in devices}) == 4 and any(d.capacity for d in devices)


def test_selectors_match_the_devices_the_scheduler_allocates(
        outcomes: list[tuple[str, str | frozenset[str], str | frozenset[str]]]) -> None:
    wrong = {expression: {"model": sorted(mine) if isinstance(mine, frozenset) else mine,
                          "scheduler": sorted(theirs) if isinstance(theirs, frozenset) else theirs}
             for expression, mine, theirs in outcomes if mine != theirs}
    assert not wrong, wrong


def test_the_selectors_exercise_every_outcome(
        outcomes: list[tuple[str, str | frozenset[str], str | frozenset[str]]]) -> None:
    """Not a vacuous agreement: refusals, unallocatable claims, and allocations of several sizes."""
    answers = [theirs for _, _, theirs in outcomes]
    sizes = {len(a) for a in answers if isinstance(a, frozenset)}
    assert answers.count(REFUSED) >= 4 and answers.count(UNALLOCATED) >= 15, answers
    assert len(sizes) >= 5 and sum(isinstance(a, frozenset) for a in answers) >= 40, sizes
