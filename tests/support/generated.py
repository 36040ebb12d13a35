"""Generated stack files (hypothesis strategies) for the property-based tests and `scripts/fuzz.py`.

Two kinds, mixed by `stacks()`: stacks *composed* from the vocabulary, the catalogue and the known
versions (mostly well-formed, so most of them reach the planner, the rules and the program), and
shipped or composed stacks *mutated* at random config paths (values replaced, deleted, renamed,
suffixed, free-form chart values), which exercise every refusal."""

from __future__ import annotations

import copy
import datetime
from typing import Any, get_args

import yaml
from hypothesis import strategies as st

from eks_devices.core import vocabulary
from eks_devices.core.knowledge import catalog, charts, versions
from support.stacks import REGION, STACKS

SHIPPED = [yaml.safe_load(p.read_text())["config"] for p in sorted(STACKS.glob("Pulumi.*.yaml"))]
INSTANCE_TYPES = sorted(catalog.instance_types())
KUBERNETES = [versions.show((1, minor)) for minor in range(versions.EKS_KUBERNETES[0][1], versions.EKS_KUBERNETES[1][1] + 1)]
GENERATIONS = sorted({name.split(".")[0] for name in INSTANCE_TYPES})  # g6, p5, trn1, ...
KARPENTER = ["1.14.0", "1.15.0"]
ZONES = [f"{REGION}{z}" for z in "abcd"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 300), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "gpu\n", "1.36\n", "auto", "dra", "device-plugin", "none", "static", "p5.48xlarge",
                     "g6e.xlarge", "trn1.32xlarge", "cr-0123456789abcdef0\n", "1.15.0", "bottlerocket",
                     "us-west-2a", "10.0.0.0/8", "spot", "x" * 300, "Ünïcode", "device.driver == 'x'",
                     "1" + "+1" * 1200 + " > 0", "１.３６"]),
    st.dates(min_value=datetime.date(2020, 1, 1), max_value=datetime.date(2030, 1, 1)),
    st.binary(max_size=4),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "instanceTypes", "devices", "nvidia", None]),
                                                 inner, max_size=3)), max_leaves=6)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a nested mapping/list, the root's empty path first."""
    out = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            out += paths(child, (*prefix, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            out += paths(child, (*prefix, i))
    return out


@st.composite
def raw_claims(draw: st.DrawFn, pools: list[str]) -> dict[str, Any]:
    """A claim in the raw request shape, its selector and opaque parameters drawn."""
    request = {"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                        "selectors": [{"cel": {"expression": draw(scalars)}}]}}
    claim: dict[str, Any] = {"pools": [draw(st.sampled_from(pools))], "requests": [request]}
    if draw(st.booleans()):
        claim["config"] = [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "x": draw(values)}}}]
    return claim


@st.composite
def alternative_claims(draw: st.DrawFn, pools: list[str]) -> dict[str, Any]:
    """A claim of up to ten requests, each `firstAvailable` of GPU counts: the fit search's worst case."""
    def request(i: int) -> dict[str, Any]:
        counts = draw(st.lists(st.integers(1, 8), min_size=1, max_size=3))
        return {"name": f"r{i}", "firstAvailable": [
            {"name": f"s{j}", "deviceClassName": "gpu.nvidia.com", "count": n} for j, n in enumerate(counts)]}
    return {"pools": [draw(st.sampled_from(pools))], "requests": [request(i) for i in range(draw(st.integers(1, 10)))]}


@st.composite
def short_claims(draw: st.DrawFn, pools: list[str]) -> dict[str, Any]:
    """A claim in the short form (gpus, efa, neurons, mig, alignment), aimed at one or two pools."""
    claim: dict[str, Any] = {"pools": draw(st.lists(st.sampled_from(pools), min_size=1, max_size=2, unique=True))}
    kind = draw(st.sampled_from(["gpu", "gpu-efa", "neuron", "neuron-efa", "mig", "efa", "extended"]))
    if kind.startswith("gpu"):
        claim["gpus"] = {"count": draw(st.sampled_from([1, 2, 4, 8]))}
        if draw(st.booleans()):
            claim["gpus"]["model"] = draw(st.sampled_from(["H100", "L40S", "A10G", "L4", "B200"]))
    if kind.startswith("neuron"):
        claim["neurons"] = draw(st.sampled_from([{"count": 1}, {"count": 4}, {"count": 16}, {"all": True}]))
    if kind.endswith("efa"):
        claim["efa"] = draw(st.sampled_from([{"count": 1}, {"count": 4}, {"count": 16}, {"all": True}]))
        if kind != "efa":
            claim["alignWith"] = kind.split("-")[0]
    if kind == "mig":
        claim["mig"] = {"profile": draw(st.sampled_from(["1g.10gb", "3g.40gb", "1g.18gb"])), "count": 1}
    if kind == "extended":
        claim.update(kind="extended-resource", extendedResources={"nvidia.com/gpu": draw(st.integers(1, 8))})
    elif draw(st.booleans()):
        claim["kind"] = "claim"
    return claim


@st.composite
def pools(draw: st.DrawFn, mode: str) -> dict[str, Any]:
    """A node pool: catalogued instance types and the choices the configuration offers for them."""
    generation = draw(st.sampled_from(GENERATIONS))
    types = [name for name in INSTANCE_TYPES if name.split(".")[0] == generation]
    pool: dict[str, Any] = {"instanceTypes": draw(st.lists(st.sampled_from(types), min_size=1, max_size=2, unique=True))}
    static = mode == "managed-node-groups" or draw(st.booleans())
    if static:
        pool.update(provisioning="static", replicas=draw(st.integers(1, 4)))
    choices = [c for c in get_args(vocabulary.ManagerChoice) if c != "inferred" or (mode == "auto-mode" and not static)]
    if draw(st.booleans()):
        pool["devices"] = draw(st.dictionaries(st.sampled_from(vocabulary.FAMILIES), st.sampled_from(choices), max_size=2))
        if pool["devices"].get("neuron") == "inferred":
            del pool["devices"]["neuron"]
    if draw(st.integers(0, 3)) == 0:
        pool["capacity"] = draw(st.sampled_from(get_args(vocabulary.Capacity)))
        if pool["capacity"] in vocabulary.RESERVED_CAPACITY:
            pool["capacityReservationIds"] = ["cr-0123456789abcdef0"]
    if draw(st.integers(0, 3)) == 0:
        pool["ami"] = draw(st.sampled_from(get_args(vocabulary.AmiFamily)))
    if mode != "auto-mode" and draw(st.integers(0, 3)) == 0:
        pool["gpuSharing"] = draw(st.sampled_from([
            {"strategy": "time-slicing", "replicas": 4}, {"strategy": "mig", "profile": "1g.10gb"},
            {"strategy": "shared-claim", "claimName": "shared"}, {"strategy": "none"}]))
    if draw(st.integers(0, 5)) == 0:
        pool["efa"] = {"alignWith": draw(st.sampled_from(get_args(vocabulary.EfaAlignment)))}
    if draw(st.integers(0, 4)) == 0:
        pool["availabilityZone"] = draw(st.sampled_from(ZONES))
    if draw(st.integers(0, 4)) == 0:
        pool["labels"] = {"team": draw(st.sampled_from(["ml", "research"]))}
        pool["taints"] = [{"key": "gpu", "value": "true", "effect": draw(st.sampled_from(vocabulary.TAINT_EFFECTS))}]
    if mode != "managed-node-groups" and draw(st.integers(0, 3)) == 0:
        pool["limits"] = {"nodes": draw(st.integers(1, 10))}
    return pool


# image repositories the charts name by default (and one no chart runs), for digest pins
REPOSITORIES = [*sorted({i.default for c in charts.CHARTS.values() for i in c.images if i.default}),
                "registry.example.com/mirror/other"]


@st.composite
def digest_pins(draw: st.DrawFn) -> dict[str, Any]:
    """`eks-devices:digests`: pins of charts and images, mostly well formed, at the pinned version or not."""
    def pin(label: str) -> str:
        digest = draw(st.sampled_from(["sha256:" + "ab" * 32, "sha256:abc", "md5:" + "ab" * 16]))
        return f"{draw(st.sampled_from([label, '0.0.1']))}@{digest}"

    keys = draw(st.lists(st.sampled_from(sorted(charts.CHARTS)), max_size=3, unique=True))
    repositories = draw(st.lists(st.sampled_from(REPOSITORIES), max_size=3, unique=True))
    return {"charts": {k: pin(charts.CHARTS[k].version) for k in keys},
            "images": {r: pin("v" + charts.CHARTS["nvidia-device-plugin"].version) for r in repositories}}


@st.composite
def composed_stacks(draw: st.DrawFn) -> dict[str, Any]:
    """A stack composed from the vocabulary: a mode, a version, up to four pools and some claims."""
    mode = draw(st.sampled_from(vocabulary.MODES))
    cluster: dict[str, Any] = {"name": "fuzz", "version": draw(st.sampled_from(KUBERNETES)), "mode": mode}
    if mode == "karpenter" and draw(st.booleans()):
        cluster["karpenter"] = {"version": draw(st.sampled_from(KARPENTER))}
    if draw(st.integers(0, 7)) == 0:
        cluster["existing"] = True
        if mode == "karpenter":
            cluster["karpenter"] = {"version": draw(st.sampled_from(KARPENTER)),
                                    "settings": draw(st.sampled_from([{}, {"enableDRA": True}]))}
    config: dict[str, Any] = {"aws:region": REGION, "eks-devices:cluster": cluster,
                              "eks-devices:nodePools": {f"p{i}": draw(pools(mode)) for i in range(draw(st.integers(0, 4)))}}
    names = sorted(config["eks-devices:nodePools"])
    if names and draw(st.booleans()):
        kinds = st.one_of(short_claims(names), short_claims(names), alternative_claims(names))
        config["eks-devices:claims"] = {f"c{i}": draw(kinds) for i in range(draw(st.integers(1, 2)))}
    if draw(st.integers(0, 5)) == 0:
        config["eks-devices:digests"] = draw(digest_pins())
    return config


@st.composite
def mutated(draw: st.DrawFn, config: dict[str, Any]) -> dict[str, Any]:
    """`config` (a copy) changed at one to three random paths."""
    config = copy.deepcopy(config)
    pool_names = sorted(config.get("eks-devices:nodePools") or {}) or ["none"]
    if draw(st.booleans()):
        config.setdefault("eks-devices:claims", {})["raw"] = draw(raw_claims(pool_names))
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["replace", "delete", "rename", "add", "suffix", "free-form", "free-form"]))
        if action == "free-form":  # helmValues are free-form: whatever YAML can hold arrives here
            chart = draw(st.sampled_from(["karpenter", "nvidia-dra-driver", "aws-dranet"]))
            config.setdefault("eks-devices:helmValues", {}).setdefault(chart, {})["x"] = draw(values)
            continue
        where = draw(st.sampled_from(paths(config)[1:]))
        parent = config
        for key in where[:-1]:
            parent = parent[key]
        last = where[-1]
        if action == "suffix":  # a valid value with something after it: a trailing newline or space
            if isinstance(parent, dict) and isinstance(last, str) and draw(st.booleans()):
                parent[last + draw(st.sampled_from(["\n", " "]))] = parent.pop(last)
            elif isinstance(parent[last], str):
                parent[last] += draw(st.sampled_from(["\n", " "]))
        elif action == "replace":
            parent[last] = draw(values)
        elif action == "delete" and isinstance(parent, dict):
            del parent[last]
        elif action == "rename" and isinstance(parent, dict) and isinstance(last, str):
            snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in last)
            parent[draw(st.sampled_from([snake, last.replace("eks-devices", "eks-device"), last + "s"]))] = \
                parent.pop(last)
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "gpuSharing", "labels", "replicas"]))] = draw(values)
    return config


def mutated_shipped() -> st.SearchStrategy[dict[str, Any]]:
    """A shipped stack changed at random paths."""
    return st.sampled_from(SHIPPED).flatmap(mutated)


def stacks() -> st.SearchStrategy[dict[str, Any]]:
    """Composed stacks (half of them), mutated shipped stacks and mutated composed stacks."""
    return st.one_of(composed_stacks(), composed_stacks(), mutated_shipped(), composed_stacks().flatmap(mutated))
