"""What the toolkit renders for a Kubernetes 1.34 or 1.35 cluster, judged by an API server and a scheduler
of that minor (the 1.36 binaries run with `--emulated-version`, `conftest.control_plane_at`).

Such a server serves the feature gates of its minor: on 1.34 and 1.35 DRAExtendedResource,
DRAConsumableCapacity, DRADeviceTaints and DRAPartitionableDevices are off (alpha), DRAPrioritizedList and
DRAAdminAccess on (beta). A field of a disabled feature is not refused: the API strategy drops it on write
(kubernetes `pkg/registry/resource/*/strategy.go`, `dropDisabledFields`), so an object that is "accepted"
may still lose what it asked for. Every object `render` writes for the shipped stacks (where the toolkit
accepts them at that minor) and for generated stacks of every mode is therefore created for real and read
back: everything sent must be stored as sent. Only what the server adds is ignored (fields not sent:
metadata such as uid, resourceVersion, creationTimestamp, managedFields and generation, status, and the
defaults it fills in, e.g. a request's `allocationMode: ExactCount`), and an empty list sent (`selectors: []`),
which the API types serialise as absent on every minor.
"""

from __future__ import annotations

import functools
import re
import ssl
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings

from e2e import test_dra_allocation as alloc
from e2e import test_dra_extended_resources as extended
from e2e.controlplane import ApiError, ControlPlane
from e2e.test_apiserver import UNSERVED, apply_stack, generated_stacks, k8s_objects
from e2e.test_dra_allocation import dra_stacks
from eks_devices import ConfigError
from eks_devices.core import cel
from eks_devices.core.cel import extensions as cel_extensions
from eks_devices.core.cel import named_formats
from eks_devices.core.families import EFA, NVIDIA
from eks_devices.core.knowledge import devices, versions
from eks_devices.core.knowledge.device_classes import EXTENDED_RESOURCE_KUBERNETES, GPU_CEL, GPU_CLASS
from eks_devices.core.names import RESOURCE_API_V1
from support import stacks

MINORS = ("1.34", "1.35")


@pytest.fixture(scope="module")
def plane_at(control_plane_at: Callable[[str], ControlPlane]) -> Callable[[str], ControlPlane]:
    """The control plane of a minor, with Karpenter's CRDs installed."""
    ready: set[str] = set()

    def at(minor: str) -> ControlPlane:
        plane = control_plane_at(minor)
        if minor not in ready:
            docs = [yaml.safe_load(p.read_text()) for p in sorted(plane.crds.glob("*.yaml"))]
            plane.install_crds(docs)
            ready.add(minor)
        return plane

    return at


def test_each_server_emulates_its_minor(plane_at: Callable[[str], ControlPlane]) -> None:
    """Not the 1.36 control plane under another name: the API server reports its minor, and it, the scheduler and
    the controller-manager run that minor's feature gates (DRA's alpha ones off)."""
    for minor in MINORS:
        plane = plane_at(minor)
        version = plane.request("GET", "/version")
        assert (version["emulationMajor"], version["emulationMinor"]) == ("1", minor.split(".")[1]), version
        gates = _gates(plane.request("GET", "/metrics").get("text", ""))
        off = ("DRAExtendedResource", "DRAConsumableCapacity", "DRADeviceTaints", "DRAPartitionableDevices")
        assert {g: gates[g] for g in off} == dict.fromkeys(off, False), gates
        assert gates["DRAPrioritizedList"] and gates["DRAAdminAccess"] and gates["DynamicResourceAllocation"], gates
        for port in (plane.ports.scheduler, plane.ports.controller_manager):
            assert _gates(_component_metrics(plane, port)) == gates, port


def _component_metrics(plane: ControlPlane, port: int) -> str:
    """The `/metrics` of the scheduler or controller-manager (authorised by the API server; each serves a
    certificate it made itself, so it is not verified: loopback in the tests' own network namespace)."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.load_cert_chain(str(plane.folder / "admin.crt"), str(plane.folder / "admin.key"))
    with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", context=context, timeout=30) as answer:
        return str(answer.read().decode())


def _gates(text: str) -> dict[str, bool]:
    """The feature gates a component's metrics report (`kubernetes_feature_enabled`)."""
    out = {}
    for line in text.splitlines():
        if line.startswith("kubernetes_feature_enabled{"):
            name = line.split('name="', 1)[1].split('"', 1)[0]
            out[name] = line.rsplit(" ", 1)[1] == "1"
    return out


# -- what is stored is what was sent -------------------------------------------------------------------
def not_stored(sent: Any, stored: Any, at: str = "") -> list[str]:
    """Where `stored` lacks or changes what `sent` holds: every path of `sent` must be in `stored` with the
    same value (mappings: each key sent; lists: the same length, item by item). Keys only `stored` has
    are the server's (metadata, status, defaults) and are ignored; so is an empty list or mapping sent and
    not stored (the API types' `omitempty` serialises it as absent, whatever the minor)."""
    if isinstance(sent, dict):
        if not isinstance(stored, dict):
            return [f"{at or '.'}: sent a mapping, stored {stored!r}"]
        out = []
        for key, value in sent.items():
            if key not in stored and value not in ([], {}):  # Go's omitempty: an empty list is not written
                out.append(f"{at}.{key}: dropped (sent {value!r})")
            elif key not in stored:
                continue
            else:
                out += not_stored(value, stored[key], f"{at}.{key}")
        return out
    if isinstance(sent, list):
        if not isinstance(stored, list) or len(stored) != len(sent):
            return [f"{at}: sent {sent!r}, stored {stored!r}"]
        return [p for i, (a, b) in enumerate(zip(sent, stored, strict=True)) for p in not_stored(a, b, f"{at}[{i}]")]
    return [] if sent == stored else [f"{at}: sent {sent!r}, stored {stored!r}"]


def round_trip(plane: ControlPlane, docs: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """Create every object the server serves and read it back: the refusals and the fields not stored as
    sent, by `<kind>/<namespace>/<name>`, and how many objects were compared. The objects are deleted
    again (physical names repeat across stacks)."""
    refused, unchecked = apply_stack(plane, docs)
    assert unchecked <= UNSERVED
    problems: dict[str, Any] = {key: f"refused: {message}" for key, message in refused.items()}
    compared = 0
    created = [d for d in docs if (d["apiVersion"], d["kind"]) not in unchecked]
    for doc in created:
        meta = doc["metadata"]
        key = f"{doc['kind']}/{meta.get('namespace', '')}/{meta['name']}"
        if key in refused:
            continue
        stored = plane.get(doc["apiVersion"], doc["kind"], meta["name"], meta.get("namespace"))
        compared += 1
        if lost := not_stored(doc, stored):
            problems[key] = lost
    for doc in reversed(created):
        plane.delete(doc["apiVersion"], doc["kind"], doc["metadata"]["name"], doc["metadata"].get("namespace"))
    return problems, compared


def _shipped_at(minor: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The shipped stacks moved to `minor`, where the toolkit accepts them there (no error finding)."""
    for name in stacks.SHIPPED:
        cfg = stacks.shipped(name, overrides={"eks-devices:cluster": {"version": minor}})
        try:
            if not stacks.build(cfg).errors:
                yield f"{name}@{minor}", cfg
        except ConfigError:
            continue


def _accepted(cfg: dict[str, Any]) -> dict[str, Any] | None:
    """`cfg` less the claims the toolkit refuses at its minor (an error finding at `claims.<name>`), if the
    rest is accepted and a claim is left; else None."""
    for _ in range(4):
        try:
            errors = stacks.build(cfg).errors
        except ConfigError:
            return None
        refused = {e.path.split(".")[1] for e in errors if e.path.startswith("claims.")}
        if not errors:
            return cfg if cfg.get("eks-devices:claims") else None
        if len(refused) != len({e.path for e in errors}) and any(not e.path.startswith("claims.") for e in errors):
            return None
        cfg = {**cfg, "eks-devices:claims": {k: v for k, v in cfg["eks-devices:claims"].items() if k not in refused}}
    return None


DRA_STACKS = 10  # per minor


@functools.cache
def _dra_stacks_at(minor: str, count: int = DRA_STACKS) -> list[tuple[str, dict[str, Any]]]:
    """`count` stacks of DRA pools and claims (`test_dra_allocation.dra_stacks`: raw and short claims,
    firstAvailable, All, constraints, MIG and time-slicing pools), drawn with a fixed seed, less the claims
    the toolkit refuses at `minor`. aws-dranet needs 1.35, so on 1.34 EFA is the device plugin's. Drawn when
    a test first asks (half a minute: not while every test process collects)."""
    drawn: list[dict[str, Any]] = []

    @settings(max_examples=count * 30, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(dra_stacks(minor))
    def collect(cfg: dict[str, Any]) -> None:
        drawn.append(cfg)

    collect()
    out = []
    for cfg in drawn:
        if versions.kubernetes(minor) < EFA.dra_kubernetes:
            for pool in cfg["eks-devices:nodePools"].values():
                pool["devices"]["efa"] = "device-plugin"
        if (accepted := _accepted(cfg)) is not None:
            out.append((f"dra-{len(out)}", accepted))
        if len(out) == count:
            break
    assert len(out) == count, f"only {len(out)} accepted DRA stacks at {minor}"
    return out


def _every_claim_field(minor: str) -> tuple[str, dict[str, Any]]:
    """A stack whose claims use each field the toolkit renders for a claim (firstAvailable, All, matchAttribute,
    CEL selectors, the driver's opaque config, a shared ResourceClaim); EFA stays the device plugin's, as
    aws-dranet needs 1.35."""
    pool = {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "device-plugin"},
            "provisioning": "static", "replicas": 1}
    one = {"deviceClassName": GPU_CLASS, "count": 1}
    claims = {
        "first": {"pools": ["p"], "requests": [{"name": "gpu", "firstAvailable": [
            {"name": "two", "deviceClassName": GPU_CLASS, "count": 2}, {"name": "one", **one}]}]},
        "every": {"pools": ["p"], "requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU_CLASS,
                                                                           "allocationMode": "All"}}]},
        "pair": {"pools": ["p"], "requests": [{"name": "a", "exactly": one}, {"name": "b", "exactly": one}],
                 "constraints": [{"matchAttribute": "gpu.nvidia.com/productName"}]},
        "h100": {"pools": ["p"], "gpus": {"count": 2, "model": "H100", "minMemoryGiB": 40}},
        "sliced": {"pools": ["p"], "gpus": {"count": 1}, "timeSlicing": {"interval": "Short"}},
        "shared": {"pools": ["p"], "kind": "claim", "gpus": {"count": 1}},
    }
    return "every-claim-field", stacks.config("karpenter", minor, {"p": pool}, name="features", claims=claims)


SHIPPED = [(minor, name, cfg) for minor in MINORS for name, cfg in _shipped_at(minor)]
GENERATED = [(minor, f"{name}@{minor}", cfg) for minor in MINORS
             for name, cfg in [_every_claim_field(minor), *generated_stacks(4, seed=34, kubernetes=(minor,))]]
DRAWN = [(minor, f"dra-{i}@{minor}") for minor in MINORS for i in range(DRA_STACKS)]  # configs drawn lazily
CASES = [*((m, n) for m, n, _ in [*SHIPPED, *GENERATED]), *DRAWN]


def _config(name: str) -> dict[str, Any]:
    stack, minor = name.split("@")
    known = {n: cfg for _, n, cfg in [*SHIPPED, *GENERATED]}
    return known[name] if name in known else dict(_dra_stacks_at(minor))[stack]


@functools.cache
def _objects(name: str) -> list[dict[str, Any]]:
    """The objects `render` writes for the case `name` (each rendered once per test process)."""
    return k8s_objects(_config(name), name.split("@")[0])


def test_the_cases_cover_both_minors_every_mode_and_claims() -> None:
    assert {n for _, n, _ in SHIPPED} >= {"staging@1.35", "prod@1.35"}
    for minor in MINORS:
        names = [n for m, n in CASES if m == minor and n not in {s for _, s, _ in SHIPPED}]
        configs = [_config(n) for n in names]
        assert {cfg["eks-devices:cluster"]["mode"] for cfg in configs} == {"auto-mode", "karpenter",
                                                                            "managed-node-groups"}
        assert all(cfg["eks-devices:cluster"]["version"] == minor for cfg in configs)
        docs = [d for n in names for d in _objects(n)]
        kinds = {d["kind"] for d in docs}
        assert kinds >= {"NodePool", "EC2NodeClass", "ResourceClaimTemplate", "ResourceClaim", "Namespace"}, kinds
        text = str(docs)
        for word in ("firstAvailable", "'All'", "matchAttribute", "selectors", "opaque"):
            assert word in text, (minor, word)


@pytest.mark.parametrize(("minor", "name"), CASES, ids=[n for _, n in CASES])
def test_every_object_is_stored_as_sent(plane_at: Callable[[str], ControlPlane], minor: str, name: str) -> None:
    docs = _objects(name)
    problems, compared = round_trip(plane_at(minor), docs)
    assert problems == {}
    assert compared == sum((d["apiVersion"], d["kind"]) not in UNSERVED for d in docs)


# -- the scheduler of each minor -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def allocations(plane_at: Callable[[str], ControlPlane]) -> Iterator[dict[str, list[tuple[alloc.Case, alloc.Outcome]]]]:
    """Per minor, the claims of the claim-fit edges and of the drawn DRA stacks, planned at that minor, each
    against the real allocator of that minor (`test_dra_allocation`'s cases, batches and outcomes)."""
    out: dict[str, list[tuple[alloc.Case, alloc.Outcome]]] = {}
    for minor in MINORS:
        plane, results, batch = plane_at(minor), [], []
        cases = [*alloc.edges(minor), *(case for name, cfg in _dra_stacks_at(minor)
                                         for case in alloc.cases_of(f"{name}-{minor[2:]}", stacks.build(cfg)))]
        try:
            for batch in alloc.batches(cases):
                real = alloc.run_batch(plane, batch)
                alloc.clean(plane, batch)
                results.extend((case, real[case.id]) for case in batch)
        finally:
            alloc.clean(plane, [c for c in batch if c.id not in {r.id for r, _ in results}])
        out[minor] = results
    yield out


@pytest.mark.parametrize("minor", MINORS)
def test_claims_are_allocated_as_the_fit_check_says_at_the_minor(
        allocations: dict[str, list[tuple[alloc.Case, alloc.Outcome]]], minor: str) -> None:
    results = allocations[minor]
    assert alloc._disagreements(results) == {}
    assert sum(c.node_fit.fits for c, _ in results) >= 20 and sum(not c.node_fit.fits for c, _ in results) >= 3
    per_node = {(c.claim.name, c.node_fit.instance_type): c.node_fit.per_node for c, _ in results}
    assert per_node[("shares", "g6e.12xlarge")] == 4  # one claim per GPU: no consumable capacity before 1.36


@pytest.mark.parametrize("minor", MINORS)
def test_extended_resources_are_bound_as_the_fit_check_says_at_the_minor(
        plane_at: Callable[[str], ControlPlane], minor: str) -> None:
    """Before 1.36 no DeviceClass serves a plain `nvidia.com/gpu` request on a DRA node (DRAExtendedResource
    is off: the class's `extendedResourceName` is dropped), so the fit check says no Pod fits; the
    scheduler of that minor must bind none."""
    cases = extended.planned(minor)
    assert len(cases) >= 10
    outcomes = extended.run(plane_at(minor), cases)
    assert extended.disagreements(outcomes) == {}


# -- the model's version gates against the server of each minor ---------------------------------------
ALL_MINORS = (*MINORS, "1.36")


def _plane(minor: str, plane_at: Callable[[str], ControlPlane], own: ControlPlane) -> ControlPlane:
    return own if minor == "1.36" else plane_at(minor)


def server_keeps(plane: ControlPlane, doc: dict[str, Any]) -> str:
    """What the server does with an object on create (dry run: validation and the strategy's
    `dropDisabledFields` run, nothing is stored): "stored" as sent, "dropped" a field, or "refused"."""
    try:
        back = plane.apply(doc, dry_run=True)
    except ApiError as exc:
        if exc.status in (400, 422):
            return "refused"
        raise
    return "dropped" if not_stored(doc, back) else "stored"


def _claim(name: str, requests: list[dict[str, Any]], **devices: Any) -> dict[str, Any]:
    return {"apiVersion": RESOURCE_API_V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": requests, **devices}}}


def _gpu(name: str = "gpu", **extra: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": GPU_CLASS, "allocationMode": "ExactCount", "count": 1, **extra}}


def _distinct_refused(minor: str) -> bool:
    """Whether the toolkit refuses a claim's `distinctAttribute` at `minor` (rule claim-distinct-attribute-version)."""
    pool = {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra"}, "provisioning": "static", "replicas": 1}
    claim = {"pools": ["p"], "requests": [_gpu("a"), _gpu("b")],
             "constraints": [{"distinctAttribute": "resource.kubernetes.io/pcieRoot"}]}
    plan = stacks.build(stacks.config("karpenter", minor, {"p": pool}, claims={"c": claim}))
    return any(f.slug == "claim-distinct-attribute-version" for f in plan.errors)


def _first_available_refused(minor: str) -> bool:
    pool = {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra"}, "provisioning": "static", "replicas": 1}
    claim = {"pools": ["p"], "requests": [{"name": "gpu", "firstAvailable": [
        {"name": "two", "deviceClassName": GPU_CLASS, "count": 2}, {"name": "one", "deviceClassName": GPU_CLASS}]}]}
    return bool(stacks.build(stacks.config("karpenter", minor, {"p": pool}, claims={"c": claim})).errors)


def _shares_slice() -> dict[str, Any]:
    piece = devices.resource_slices("g6e.xlarge", "gate-node", families=("nvidia",), gpu_shares=4)[0]
    assert piece["spec"]["devices"][0]["allowMultipleAllocations"] is True
    return piece


# gate → (an object using it, whether the model has the toolkit use it at a minor: "stored" expected where it does)
GATES: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[str], bool]]] = {
    # DRAExtendedResource: the DeviceClass serving plain `nvidia.com/gpu` requests (claim_fit.fit_extended)
    "extendedResourceName": (
        lambda: {"apiVersion": RESOURCE_API_V1, "kind": "DeviceClass", "metadata": {"name": "gate-extended"},
                 "spec": {"selectors": [{"cel": {"expression": GPU_CEL}}], "extendedResourceName": "nvidia.com/gpu"}},
        lambda minor: versions.kubernetes(minor) >= EXTENDED_RESOURCE_KUBERNETES),
    # DRAConsumableCapacity: consumable GPU shares (claim_fit.node_devices) and distinctAttribute (its rule)
    "allowMultipleAllocations": (
        _shares_slice, lambda minor: versions.kubernetes(minor) >= versions.CONSUMABLE_CAPACITY_KUBERNETES),
    "distinctAttribute": (
        lambda: _claim("gate-distinct", [_gpu("a"), _gpu("b")],
                       constraints=[{"distinctAttribute": "resource.kubernetes.io/pcieRoot"}]),
        lambda minor: not _distinct_refused(minor)),
    # DRAPrioritizedList (beta, on from 1.34): a claim's firstAvailable
    "firstAvailable": (
        lambda: _claim("gate-first", [{"name": "gpu", "firstAvailable": [
            {"name": "two", "deviceClassName": GPU_CLASS, "allocationMode": "ExactCount", "count": 2},
            {"name": "one", "deviceClassName": GPU_CLASS, "allocationMode": "ExactCount", "count": 1}]}]),
        lambda minor: not _first_available_refused(minor)),
}


@pytest.mark.parametrize("gate", sorted(GATES))
def test_the_models_version_gates_agree_with_each_server(plane_at: Callable[[str], ControlPlane],
                                                          control_plane: ControlPlane, gate: str) -> None:
    make, used = GATES[gate]
    verdicts = {minor: server_keeps(_plane(minor, plane_at, control_plane), make()) for minor in ALL_MINORS}
    assert verdicts["1.36"] == "stored", verdicts  # the probe itself is valid
    wrong = {minor: verdict for minor, verdict in verdicts.items() if (verdict == "stored") != used(minor)}
    assert wrong == {}, f"{gate}: the server's verdicts {verdicts}"


def test_distinct_attribute_is_refused_not_dropped_before_1_36(plane_at: Callable[[str], ControlPlane]) -> None:
    """What the rule's message says: the field is dropped, and the constraint left naming no attribute refused."""
    make, _ = GATES["distinctAttribute"]
    assert {minor: server_keeps(plane_at(minor), make()) for minor in MINORS} == dict.fromkeys(MINORS, "refused")


# -- CEL: functions a new selector gets from a later minor (lists extension, two-variable comprehensions, the
# format library) --------------------------------------------------------------------------------------------
GATED = {
    "slice": "['a', 'b', 'c'].slice(0, 2) == ['a', 'b']",
    "flatten": "[['a'], ['b']].flatten() == ['a', 'b']",
    "sort": "['b', 'a'].sort() == ['a', 'b']",
    "reverse": "['a', 'b'].reverse() == ['b', 'a']",
    "distinct": "['a', 'a'].distinct() == ['a']",
    "lists.range": "lists.range(2) == [0, 1]",
    "sortBy": "['b', 'a'].sortBy(x, x) == ['a', 'b']",
    "two-variable all": "[1, 2].all(i, v, v > i)",
    "two-variable exists": "['a'].exists(i, v, i == 0 && v == 'a')",
    "two-variable existsOne": "['a', 'b'].existsOne(i, v, v == 'a')",
    "two-variable exists_one": "['a', 'b'].exists_one(i, v, v == 'a')",
    "two-variable transformList": "[1, 2].transformList(i, v, v * 2) == [2, 4]",
    "two-variable transformMap": "{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}",
    "two-variable transformMapEntry": "{'a': 1}.transformMapEntry(k, v, {k: v + 1}) == {'a': 2}",
    "format.named": "format.named('uuid').hasValue()",
    "validate": "!format.named('uuid').orValue(format.byte()).validate('aGk=').hasValue()",
    **{f"format.{name}": f"format.{name}() == format.{name}()" for name in named_formats.VALIDATORS},
}


def test_every_gated_function_is_probed() -> None:
    assert set(GATED) == set(cel_extensions.ACCEPTED_FROM)


@pytest.mark.parametrize("function", sorted(GATED))
def test_the_gated_functions_are_accepted_from_the_minor_the_model_says(
        plane_at: Callable[[str], ControlPlane], control_plane: ControlPlane, function: str) -> None:
    """A claim's selector and a DeviceClass's: refused by the server exactly where `compile_expression(expr,
    minor)` refuses it (the server checks a new selector against the previous minor's CEL environment)."""
    expression = f"device.driver == '{NVIDIA.dra_driver}' && {GATED[function]}"
    name = "gate-cel-" + re.sub(r"[^a-z0-9]+", "-", function.lower())
    claim = _claim(name, [_gpu(selectors=[{"cel": {"expression": expression}}])])
    device_class = {"apiVersion": RESOURCE_API_V1, "kind": "DeviceClass", "metadata": {"name": name},
                    "spec": {"selectors": [{"cel": {"expression": expression}}]}}
    model, server = {}, {}
    for minor in ALL_MINORS:
        try:
            cel.compile_expression(expression, versions.kubernetes(minor))
            model[minor] = "stored"
        except cel.CelError:
            model[minor] = "refused"
        plane = _plane(minor, plane_at, control_plane)
        server[minor] = {server_keeps(plane, claim), server_keeps(plane, device_class)}
    assert server == {minor: {verdict} for minor, verdict in model.items()}
    since = cel_extensions.ACCEPTED_FROM[function][0]
    assert model == {minor: "stored" if versions.kubernetes(minor) >= since else "refused" for minor in ALL_MINORS}
