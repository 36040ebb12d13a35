"""The offline fit check on one node: can a claim be allocated on a node of an instance type?
(`eks_devices.core.derive.claim_fit` applies it to every pool a declared claim targets.)

A small allocator in the manner of the Kubernetes scheduler's structured allocator: for every
request it evaluates the DeviceClass selectors, then the request's own (both in CEL, with
`eks_devices.core.cel`), honours `count`, `allocationMode: All` (every matching device on the node, none
of them taken), `firstAvailable` (alternatives in order) and `matchAttribute` / `distinctAttribute`
constraints, never gives one device twice within a claim nor more than 32 devices to one claim, and
searches with backtracking. The
devices come from `eks_devices.core.knowledge.devices`, which simulates what each DRA driver publishes.

A template fits "xN per node" when N Pods, each with its own claim, can be allocated on one node;
a shared ResourceClaim is allocated once for all its Pods. When nothing fits the result says why:
a missing DeviceClass, no or too few matching devices, or topology (the devices exist but no set of
them shares the constrained attribute), describing how the node groups its devices.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

from eks_devices.core.knowledge.devices import (
    Device,
    layout_attribute,
    reads_root_name,
    root_names_published,
    topology_published,
)
from eks_devices.core.model import NodeFit, Outcome, grouped

SEARCH_BUDGET = 200_000  # device placements tried for one claim on one node type (all its Pods) before giving up
MAX_PER_NODE = 64
# Devices one claim's allocation may hold (resource.k8s.io/v1 `AllocationResultsMaxSize`, k8s.io/api v0.36.3
# resource/v1/types.go); the scheduler refuses a claim asking for more (dynamic-resource-allocation v0.36.3
# structured/internal/stable/allocator_stable.go: "exceeds the claim limit").
ALLOCATION_RESULTS_MAX = 32
# Failures a selector's verdict on a device can cause (not a missing class, the claim limit or a CEL error)
SELECTED_FAILURES = frozenset({"no-devices", "too-few", "topology"})


@dataclass
class Budget:
    """Device placements tried for one claim on one instance type, shared by every choice of
    `firstAvailable` alternatives and every Pod's allocation, so the search is bounded for the whole
    claim rather than per combination (9 requests of 2 alternatives are 512 combinations)."""

    limit: int
    spent: int = 0

    def spend(self) -> None:
        self.spent += 1
        if self.spent > self.limit:
            raise TimeoutError


@dataclass(frozen=True)
class _Alt:
    key: str  # request name, or request/subrequest
    request: str
    device_class: str
    selectors: tuple[str, ...]
    all_: bool
    count: int


def _alternatives(request: Mapping[str, Any]) -> list[_Alt]:
    subs = [(request["name"], request["exactly"])] if "exactly" in request else [
        (f"{request['name']}/{s['name']}", s) for s in request.get("firstAvailable", [])]
    return [_Alt(key, request["name"], body["deviceClassName"],
                 tuple(s["cel"]["expression"] for s in body.get("selectors", [])),
                 body.get("allocationMode") == "All", int(body.get("count") or 1)) for key, body in subs]


def _matching(alt: _Alt, classes: Mapping[str, Sequence[str]], devices: Sequence[Device],
              memo: dict[tuple[str, str, str], bool]) -> list[Device]:
    """Devices the class and the request select, class selectors first as the scheduler does."""
    from eks_devices.core.cel import evaluate  # CEL (celpy) loads only when a claim is checked

    def test(expression: str, device: Device) -> bool:
        key = (expression, device.driver, device.name)
        if key not in memo:
            memo[key] = evaluate(expression, device.cel())
        return memo[key]

    return [d for d in devices if all(test(e, d) for e in classes[alt.device_class])
            and all(test(e, d) for e in alt.selectors)]


class _Search:
    """Backtracking placement of every request's devices under the claim's constraints."""

    def __init__(self, alts: Sequence[_Alt], candidates: Mapping[str, list[Device]],
                 constraints: Sequence[Mapping[str, Any]], used: Mapping[tuple[str, str], int], budget: Budget,
                 reuse_shared: bool = False):
        self.alts, self.candidates, self.used, self.budget = alts, candidates, used, budget
        self.constraints = [c for c in constraints if c.get("matchAttribute") or c.get("distinctAttribute")]
        self.chosen: dict[str, list[Device]] = {}
        self.taken: Counter[tuple[str, str]] = Counter()
        self.reuse_shared = reuse_shared

    def _free(self, device: Device) -> bool:
        """Whether the claim may take the device (again): once, or while shares last where a shared device
        may be taken repeatedly within one claim (`reuse_shared`)."""
        key = (device.driver, device.name)
        if self.reuse_shared and device.allocations > 1:
            return self.taken[key] < device.allocations - self.used.get(key, 0)
        return key not in self.taken

    def _applies(self, constraint: Mapping[str, Any], alt: _Alt) -> bool:
        names = constraint.get("requests") or []
        return not names or alt.request in names or alt.key in names

    def _allowed(self, alt: _Alt, device: Device) -> bool:
        for constraint in self.constraints:
            if not self._applies(constraint, alt):
                continue
            attr = constraint.get("matchAttribute") or constraint.get("distinctAttribute")
            value = device.attribute(attr)
            if value is None:
                return False  # devices lacking the attribute are never picked
            others = [d.attribute(attr) for a in self.alts if self._applies(constraint, a)
                      for d in self.chosen.get(a.key, [])]
            if constraint.get("matchAttribute") and others and others[0] != value:
                return False
            if constraint.get("distinctAttribute") and value in others:
                return False
        return True

    def run(self, index: int = 0) -> bool:
        if index == len(self.alts):
            return True
        alt = self.alts[index]
        pool = self.candidates[alt.key]
        if alt.all_:
            # every matching device, each with an allocation left: a device that allows several (consumable
            # shares) still serves another claim's All (kubernetes v1.36.3 `dynamic-resource-allocation`
            # structured allocator, allocateOne: All devices are allocated through allocateDevice, which
            # admits a multi-allocatable device while its capacity lasts)
            if not pool or any(self.used.get((d.driver, d.name), 0) >= d.allocations for d in pool):
                return False
            return self._place(alt, list(pool), 0, len(pool), index, strict=True)
        return self._place(alt, [d for d in pool if self._free(d)], 0, alt.count, index)

    def _place(self, alt: _Alt, pool: list[Device], start: int, need: int, index: int, strict: bool = False) -> bool:
        if need == 0:
            return self.run(index + 1)
        if len(pool) - start < need and not self.reuse_shared:
            return False
        for i in range(start, len(pool)):
            self.budget.spend()
            device = pool[i]
            key = (device.driver, device.name)
            ok = self._free(device) and self._allowed(alt, device)
            if ok:
                self.chosen.setdefault(alt.key, []).append(device)
                self.taken[key] += 1
                again = self.reuse_shared and device.allocations > 1  # the same device may serve the next slot
                if self._place(alt, pool, i if again else i + 1, need - 1, index, strict):
                    return True
                self.chosen[alt.key].pop()
                self.taken[key] -= 1
                if not self.taken[key]:
                    del self.taken[key]
            if strict:
                return False  # allocationMode All: every matching device, no skipping
            if len(pool) - (i + 1) < need and not self.reuse_shared:
                return False
        return False


def allocate(devices_spec: Mapping[str, Any], classes: Mapping[str, Sequence[str]], node: Sequence[Device],
             used: Mapping[tuple[str, str], int] | None = None, label: str = "the node",
             memo: dict[tuple[str, str, str], bool] | None = None, budget: Budget | None = None,
             reuse_shared: bool = False) -> Outcome:
    """Allocate one claim (`spec.devices`) on one node's devices, honouring what is already `used`.
    `memo` keeps selector results between calls on the same node; `budget` bounds the search (a fresh
    SEARCH_BUDGET when absent). `reuse_shared`: a device with shares may be taken more than once within
    the claim while its shares last, as Karpenter's allocator takes it (sigs.k8s.io/karpenter v1.15.0
    `pkg/scheduling/dynamicresources/allocator.go` tryDevice: capacity is the only gate of such a device);
    the scheduler on the node gives a device once per claim."""
    from eks_devices.core.cel import CelError

    used = used or {}
    memo = {} if memo is None else memo
    free = [d for d in node if used.get((d.driver, d.name), 0) < d.allocations]
    requests = [_alternatives(r) for r in devices_spec.get("requests", [])]
    missing = sorted({a.device_class for alts in requests for a in alts if a.device_class not in classes})
    if missing:
        return Outcome(False, f"DeviceClass {', '.join(missing)} does not exist in this cluster", "class-missing")
    candidates: dict[str, list[Device]] = {}
    try:
        for alts in requests:
            for alt in alts:
                candidates[alt.key] = _matching(alt, classes, node if alt.all_ else free, memo)
    except CelError as exc:
        return Outcome(False, f"a selector fails on {label}: {exc}", "cel-error")
    least = sum(min(_size(a, candidates) for a in alts) for alts in requests if alts)
    if least > ALLOCATION_RESULTS_MAX:
        return Outcome(False, f"the claim needs at least {least} devices on {label}, but one claim holds at most "
                       f"{ALLOCATION_RESULTS_MAX} (the scheduler refuses it)", "too-many")
    constraints = devices_spec.get("constraints", [])
    budget = Budget(SEARCH_BUDGET) if budget is None else budget
    try:
        for combo in product(*requests):
            budget.spend()  # choosing the combination is a step too: 2^n combinations are bounded as well
            if sum(_size(a, candidates) for a in combo) > ALLOCATION_RESULTS_MAX or (
                    not reuse_shared and _short(combo, candidates)):
                continue  # exceeds the claim limit, or asks more of a device class than its candidates hold
            search = _Search(combo, candidates, constraints, used, budget, reuse_shared)
            if search.run():
                return Outcome(True, devices=tuple((k, tuple(d.name for d in v)) for k, v in search.chosen.items()))
    except TimeoutError:
        return Outcome(False, f"the allocation search on {label} gave up after {budget.limit} device placements "
                       "(the limit for the whole claim); the claim may or may not fit", "undetermined")
    return _explain(requests, candidates, constraints, node, label, classes, memo)


def _short(combo: Sequence[_Alt], candidates: Mapping[str, list[Device]]) -> bool:
    """Whether the alternatives of one device class ask for more devices than all their candidates
    together (a device is given once within a claim): no search can succeed."""
    need: Counter[str] = Counter()
    have: dict[str, set[tuple[str, str]]] = {}
    for alt in combo:
        need[alt.device_class] += _size(alt, candidates)
        have.setdefault(alt.device_class, set()).update((d.driver, d.name) for d in candidates[alt.key])
    return any(n > len(have[c]) for c, n in need.items())


def _size(alt: _Alt, candidates: Mapping[str, list[Device]]) -> int:
    """Devices an alternative takes: its count, or every matching device for allocationMode All."""
    return len(candidates[alt.key]) if alt.all_ else alt.count


def _explain(requests: Sequence[Sequence[_Alt]], candidates: Mapping[str, list[Device]],
             constraints: Sequence[Mapping[str, Any]], node: Sequence[Device], label: str,
             classes: Mapping[str, Sequence[str]], memo: dict[tuple[str, str, str], bool]) -> Outcome:
    """Why no allocation exists, most basic cause first (for the first alternative of each request)."""
    firsts = [alts[0] for alts in requests if alts]
    for alt in firsts:
        if not candidates[alt.key]:
            in_class = _matching(_Alt(alt.key, alt.request, alt.device_class, (), True, 1), classes, node, memo)
            if not in_class:
                return Outcome(False, f"{label} publishes no {alt.device_class} device (request {alt.key!r})",
                               "no-devices")
            return Outcome(False, f"no device on {label} matches the selectors of request {alt.key!r}: it has "
                           f"{_identity(in_class)}", "no-devices")
    demand: Counter[str] = Counter()
    supply: dict[str, set[str]] = {}
    for alt in firsts:
        demand[alt.device_class] += len(candidates[alt.key]) if alt.all_ else alt.count
        supply.setdefault(alt.device_class, set()).update(d.name for d in candidates[alt.key])
    for device_class, need in demand.items():
        if need > len(supply[device_class]):
            return Outcome(False, f"the claim needs {need} × {device_class} but {label} has "
                           f"{len(supply[device_class])} that match", "too-few")
    attrs = sorted({c.get("matchAttribute") or c.get("distinctAttribute") for c in constraints} - {None})
    if attrs:
        text = (f"the devices exist but not enough of them share {', '.join(attrs)}: "
                + _layout(attrs[0], firsts, candidates, label))
        for alt in firsts:
            if alt.all_:
                text += f"; allocationMode All makes request {alt.key!r} take all {len(candidates[alt.key])}"
        return Outcome(False, text, "topology", attributes=tuple(attrs))
    return Outcome(False, f"no allocation on {label} satisfies the requests together", "too-few")


def _identity(devices: Sequence[Device]) -> str:
    """What the devices are, for a failure message: '8 × NVIDIA L40S (memory 46068Mi)'."""
    kinds: Counter[str] = Counter()
    for device in devices:
        names = [str(v[1]) for a in ("productName", "profile", "instanceType") if (v := device.attribute(
            f"{device.driver}/{a}"))]
        memory = device.capacity.get("memory")
        kinds[" ".join(names or [device.driver]) + (f" (memory {memory})" if memory else "")] += 1
    return ", ".join(f"{n} × {k}" for k, n in kinds.most_common())


def _layout(attr: str, alts: Sequence[_Alt], candidates: Mapping[str, list[Device]], label: str) -> str:
    """How the node groups the requested devices by `attr`, e.g. '4 × (2 <class> + 1 <class>)' per node."""
    groups: dict[Any, Counter[str]] = {}
    seen: set[tuple[str, str]] = set()
    for alt in alts:
        for device in candidates[alt.key]:
            if (device.driver, device.name) in seen:
                continue
            seen.add((device.driver, device.name))
            value = device.attribute(attr)
            groups.setdefault(value[1] if value else None, Counter())[alt.device_class] += 1
    order = list(dict.fromkeys(a.device_class for a in alts))
    shapes = Counter(" + ".join(f"{g[c]} {c}" for c in order if g[c]) for v, g in groups.items() if v is not None)
    lacking = groups.get(None)
    text = ", ".join(f"{n} × ({shape})" for shape, n in shapes.most_common())
    name = attr.rsplit("/", 1)[-1]
    out = f"{label} has {text or 'no devices'} per {name}" if text else f"{label} publishes no {attr}"
    if lacking:
        out += f"; {sum(lacking.values())} device(s) lack {name}"
    return out


def names_root(devices_spec: Mapping[str, Any], classes: Mapping[str, Sequence[str]]) -> bool:
    """Whether a selector of the claim's requests, or of the DeviceClasses they name, reads a PCIe root's name."""
    return any(reads_root_name(e) for alts in map(_alternatives, devices_spec.get("requests", [])) for alt in alts
               for e in (*alt.selectors, *classes.get(alt.device_class, ())))


def fit_node(devices_spec: Mapping[str, Any], classes: Mapping[str, Sequence[str]], node: Sequence[Device],
             instance_type: str, shared: bool = False, reuse_shared: bool = False) -> NodeFit:
    """How many claims (one per Pod) one node holds, or why not even one (`reuse_shared`: as `allocate`)."""
    used: dict[tuple[str, str], int] = {}
    memo: dict[tuple[str, str, str], bool] = {}
    budget = Budget(SEARCH_BUDGET)  # one bound for every Pod's allocation on this node
    count = 0
    while count < (1 if shared else MAX_PER_NODE):
        outcome = allocate(devices_spec, classes, node, used, label=instance_type, memo=memo, budget=budget,
                           reuse_shared=reuse_shared)
        if not outcome.ok:
            if count and outcome.cause == "undetermined":
                return NodeFit(instance_type, count, f"at least x{count} per node: {outcome.reason}", "undetermined")
            if count == 0:
                if (outcome.cause == "topology" and all(map(layout_attribute, outcome.attributes))
                        and not topology_published(instance_type)):
                    return NodeFit(instance_type, 0, f"{outcome.reason} (the device layout of {instance_type} is "
                                   "modelled from its device counts, not published; a real node may differ)",
                                   "topology-modelled")
                if (outcome.cause in SELECTED_FAILURES and not root_names_published(instance_type)
                        and names_root(devices_spec, classes)):
                    return NodeFit(instance_type, 0, f"{outcome.reason} (a selector reads a PCIe root's name, and "
                                   f"the roots of {instance_type} are named by position, not as its nodes name "
                                   "them; a real node may differ)", "topology-modelled")
                return NodeFit(instance_type, 0, outcome.reason, outcome.cause)
            break
        count += 1
        by_name = {d.name: d for d in node}
        for _, names in outcome.devices:
            for name in names:
                device = by_name[name]
                used[(device.driver, name)] = used.get((device.driver, name), 0) + 1
    return NodeFit(instance_type, count)


def describe(fits: Sequence[NodeFit], shared: bool = False) -> str:
    """'fits on: p5.48xlarge (x1 per node)' or 'does not fit: p4d.24xlarge: <why>'."""
    good = [f for f in fits if f.fits]
    bad = [f for f in fits if not f.fits]
    if good:
        unit = "shared by its Pods" if shared else "per node"
        text = "fits on: " + ", ".join(
            f"{f.instance_type} ({'at least ' if f.cause == 'undetermined' else ''}x{f.per_node} {unit})"
            for f in good)
        if bad:
            text += "; not on: " + "; ".join(f"{types} ({reason})" for types, reason in grouped(bad))
        return text
    return "does not fit: " + "; ".join(reason for _, reason in grouped(bad))



def walk(requests: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, str]]:
    """(request key, device class) for every request and subrequest."""
    for request in requests:
        for alt in _alternatives(request):
            yield alt.key, alt.device_class
