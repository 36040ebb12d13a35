"""Karpenter's own provisioning scheduler as the oracle for what it launches for a claim on a dynamic
NodePool (`derive/karpenter_launch.py`).

For every DRA claim and every dynamic Karpenter pool it targets (the staging stack with claims added,
the source's cases, and generated stacks drawn with a fixed seed), one pending Pod using the claim (its
nodeSelector, tolerating every taint) is solved by `karpenter-scheduler`: sigs.k8s.io/karpenter v1.15.0's
`scheduling.NewScheduler` + `Solve` with its DRA allocator, given the NodePool and EC2NodeClass the
toolkit renders (`manifests.nodes.render`, what the program applies), the stack's DeviceClasses and the claim,
each as the API server stores it (a dry-run apply defaults a request's count), and instance types the AWS provider builds (its resolver, its
NVIDIA and EFA DRA metadata under the feature gates) from EC2 DescribeInstanceTypes records (moto's copy,
the catalogue's own source). It must launch a node exactly when the model says so, offering exactly the
instance types the model names; when it launches none, the model must say why.

Limits of the oracle, so not judged here: the chart's translation of `settings` into AWS_FEATURE_GATES and
IGNORE_DRA_REQUESTS (`karpenter_launch.ignores_dra`, `karpenter_gates.dra_gates`; read from
charts/karpenter/templates/_helpers.tpl `karpenter.dra`) is ours, as are the offerings (one on-demand and
one spot offering per zone) and the EC2NodeClass's discovered subnets; p6e-gb200 has no DescribeInstanceTypes
record in moto, so pools listing it are left out. Each case offers Karpenter only its pool's instance types,
which the NodePool's `node.kubernetes.io/instance-type` requirement lists.

A selector naming a PCIe root is judged like any other: Karpenter reads the root names its metadata scraped,
and `device_layouts` keeps those names (`tests/e2e/test_device_inventory.py` holds them to that metadata);
generated stacks name real roots of their types, roots of other types and a root no device has. Limits of the
model, declared: where Karpenter launches a node the claim then never allocates on (a GPU with shares taken twice
by one claim, an EFA assumed on every card), the model follows Karpenter: `claim_fit` judges the node.
"""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import moto
import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from e2e import controlplane
from e2e.test_dra_allocation import dra_stacks
from eks_devices.core.config.errors import ConfigError
from eks_devices.core.derive import karpenter_launch
from eks_devices.core.derive.karpenter_gates import dra_gates
from eks_devices.core.knowledge.device_layouts import LAYOUTS
from eks_devices.core.manifests import nodes, software
from eks_devices.core.model import ClaimPlan, Plan, PoolPlan
from support import stacks

ZONE_SUFFIX = "a"
# The cluster's facts the program learns after deploy: names only, never read by the scheduler.
FACTS = nodes.ClusterFacts(cluster_name="ml", node_role_name="ml-node", discovery_tag="ml",
                           cluster_security_group_id="sg-0cluster", efa_security_group_id="sg-0efa")
RECORDS = Path(moto.__file__).parent / "ec2" / "resources" / "instance_types.json.gz"


@pytest.fixture(scope="module")
def plane(control_plane: controlplane.ControlPlane) -> controlplane.ControlPlane:
    """The control plane with Karpenter's CRDs: every object reaches the scheduler as the API server
    stores it (defaulted: a request's count, a NodePool's disruption), through a dry-run apply."""
    docs = [yaml.safe_load(p.read_text()) for p in sorted(control_plane.crds.glob("*.yaml"))]
    control_plane.install_crds(docs)
    return control_plane


@pytest.fixture(scope="module")
def scheduler(plane: controlplane.ControlPlane) -> Path:
    """The engine, from the engines folder the control plane runs from (the tier skips without one)."""
    binary = plane.bin_dir / "karpenter-scheduler"
    assert binary.is_file(), f"{binary} is missing from a complete engines build"
    return binary


def describe_records() -> dict[str, dict[str, Any]]:
    """EC2 DescribeInstanceTypes records by type (moto 5.2.5's copy, which the catalogue was refreshed from)."""
    with gzip.open(RECORDS) as f:
        return json.load(f)  # type: ignore[no-any-return]


@dataclass
class Case:
    """One Pod of a claim on one dynamic pool, with the model's launch."""

    id: str
    claim: ClaimPlan
    pool: PoolPlan
    node_pool: str  # the NodePool's name
    model: karpenter_launch.Launch

    @property
    def namespace(self) -> str:
        return f"launch-{self.id}"

    def objects(self, stored: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        built = self.claim.built
        assert built is not None
        manifest = copy.deepcopy(built.manifest)
        manifest["metadata"]["namespace"] = self.namespace
        source = {"resourceClaimName": built.name} if built.shared else {"resourceClaimTemplateName": built.name}
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": self.namespace}, "spec": {
            "nodeSelector": dict(self.claim.node_selector), "tolerations": [{"operator": "Exists"}],
            "resourceClaims": [{"name": "devices", **source}],
            "containers": [{"name": "work", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"claims": [{"name": "devices"}]}}]}}
        key = "resourceClaims" if built.shared else "resourceClaimTemplates"
        return {"name": self.id, "nodePools": [self.node_pool], key: [stored(manifest)], "pods": [pod]}


@dataclass
class Stack:
    """A stack's plan, its rendered node objects and its cases."""

    ident: str
    region: str
    plan: Plan
    docs: list[dict[str, Any]]
    cases: list[Case]


def karpenter_env(plan: Plan) -> tuple[str, bool]:
    """AWS_FEATURE_GATES and IGNORE_DRA_REQUESTS as the chart renders them from the release's settings."""
    assert plan.karpenter is not None
    settings_ = plan.karpenter.values.get("settings")
    gates = dra_gates(settings_)
    aws = f"DRANVIDIAGPU={str('nvidia' in gates).lower()},DRAEFA={str('efa' in gates).lower()}"
    return aws, karpenter_launch.ignores_dra(settings_)


def stack_of(ident: str, cfg: dict[str, Any], records: dict[str, dict[str, Any]]) -> Stack:
    plan = stacks.build(cfg)
    cases: list[Case] = []
    for claim in plan.claims:
        if claim.built is None or claim.built.kind not in ("ResourceClaimTemplate", "ResourceClaim"):
            continue
        for pool_name, launch in sorted(karpenter_launch.launches(plan, claim).items()):
            pool = plan.pools[pool_name]
            if any(t not in records for t in pool.instance_types):
                continue  # no DescribeInstanceTypes record to build the type from (p6e-gb200)
            node_pool = nodes.node_pool(plan.mode, pool)["metadata"]["name"]
            cases.append(Case(f"{ident}-{len(cases)}", claim, pool, node_pool, launch))
    # what the program applies, with the cluster's facts supplied
    return Stack(ident, cfg["aws:region"], plan, nodes.render(plan, FACTS), cases)


@dataclass
class Outcome:
    """What Karpenter's scheduler did with a case's Pod."""

    instance_types: tuple[str, ...]
    error: str


def _stored(plane: controlplane.ControlPlane) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """An object as the API server would store it (a dry-run server-side apply)."""
    return lambda doc: plane.apply(doc, dry_run=True)


def solve(plane: controlplane.ControlPlane, binary: Path, stack: Stack,
          records: dict[str, dict[str, Any]]) -> dict[str, Outcome]:
    """Every case of the stack through Karpenter's scheduler, each solved on its own."""
    if not stack.cases:
        return {}
    stored = _stored(plane)
    for case in stack.cases:
        plane.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": case.namespace}})
    aws, ignore = karpenter_env(stack.plan)
    types = sorted({t for case in stack.cases for t in case.pool.instance_types})
    # the subnets' zones: one of the region's, and any a pool pins
    zones = sorted({stack.region + ZONE_SUFFIX} | {z for p in stack.plan.pools.values() if (z := p.config.availability_zone)})
    request = {"region": stack.region, "zones": zones, "awsFeatureGates": aws,
               "ignoreDRARequests": ignore, "instanceTypes": [records[t] for t in types],
               "nodePools": [stored(d) for d in stack.docs if d["kind"] == "NodePool"],
               "nodeClasses": [stored(d) for d in stack.docs if d["kind"] == "EC2NodeClass"],
               "deviceClasses": [stored(software.device_class(c)) for c in stack.plan.device_classes],
               "cases": [c.objects(stored) for c in stack.cases]}
    done = subprocess.run([str(binary)], input=json.dumps(request).encode(), capture_output=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    out = {}
    for case, result in zip(stack.cases, json.loads(done.stdout)["cases"], strict=True):
        (pod,) = result["pods"]
        launched = tuple(pod.get("instanceTypes") or ()) if pod.get("nodePool") == case.node_pool else ()
        out[case.id] = Outcome(launched, pod.get("error", ""))
    return out


def disagreements(stack: Stack, outcomes: dict[str, Outcome]) -> dict[str, dict[str, Any]]:
    """Cases where the scheduler and the model differ (or the model names no reason for launching
    none): the claim, the pool, both answers."""
    bad = {}
    for case in stack.cases:
        got = outcomes[case.id]
        if set(got.instance_types) != set(case.model.instance_types) or (not case.model.launches
                                                                             and not case.model.reason):
            bad[case.id] = {"claim": case.claim.name, "pool": case.pool.name, "types": case.pool.instance_types,
                            "karpenter": sorted(got.instance_types), "karpenter-error": got.error,
                            "model": sorted(case.model.instance_types), "model-reason": case.model.reason,
                            "requests": case.claim.built.devices if case.claim.built else None}
    return bad


# -- the stacks --------------------------------------------------------------------------------------------
ALIGNED = {"gpus": {"count": 8}, "efa": {"count": 8}, "alignWith": "gpu"}
SOURCE_CLAIMS: dict[str, Any] = {
    "one-gpu": {"pools": ["gpu-dra", "gpu-timeslice"], "gpus": {"count": 1}},
    "eight-gpus-aligned": {"pools": ["gpu-dra"], **ALIGNED},
    "every-efa": {"pools": ["gpu-dra"], "efa": {"all": True}},
    "too-many-efa": {"pools": ["gpu-dra"], "gpus": {"count": 8}, "efa": {"count": 32}, "alignWith": "gpu"},
    "mig": {"pools": ["gpu-dra"], "mig": {"profile": "1g.10gb", "count": 1}},
    "channel": {"pools": ["gpu-dra"], "requests": [
        {"name": "channel", "exactly": {"deviceClassName": "compute-domain-default-channel.nvidia.com"}}]},
}


def staging() -> Iterator[tuple[str, dict[str, Any]]]:
    """The shipped Karpenter stack with the source's claims on its dynamic pools."""
    yield "staging", stacks.shipped("staging", overrides={"eks-devices:claims": SOURCE_CLAIMS})


def source_cases() -> Iterator[tuple[str, dict[str, Any]]]:
    """The EKS guide's Karpenter cases: g7e, a single gate against enableDRA, ignoreDRARequests, time-slicing
    through consumable capacity, EFA interfaces on fewer cards than the type has."""
    gpu = {"instanceTypes": ["g6e.12xlarge", "g7e.2xlarge"], "devices": {"nvidia": "dra", "efa": "device-plugin"}}
    both = {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "dra"}}
    shares = {"instanceTypes": ["g6e.12xlarge"], "devices": {"nvidia": "dra"},
              "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}
    two = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}

    def selected(expression: str) -> dict[str, Any]:
        return {"pools": ["both"], "requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": expression}}]}}]}

    claims = {"one": {"pools": ["gpu"], "gpus": {"count": 1}},
              "aligned": {"pools": ["both"], **ALIGNED},
              "efa-one": {"pools": ["both"], "efa": {"count": 1}},
              "shares": {"pools": ["shares"], "gpus": {"count": 1}},
              "shares-two": {"pools": ["shares"], "gpus": {"count": 2}},
              "distinct": {"pools": ["both"], "requests": [two], "constraints": [
                  {"requests": ["gpu"], "distinctAttribute": "resource.kubernetes.io/pcieRoot"}]},
              "same-root": {"pools": ["both"], "requests": [two], "constraints": [
                  {"requests": ["gpu"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]},
              "root-selector": selected("device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:44'"),
              "driver-version": selected("device.attributes['gpu.nvidia.com'].driverVersion.major >= 550"),
              "product": selected("device.attributes['gpu.nvidia.com'].productName.contains('H100')"),
              "memory": selected("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0")}
    pools = {"gpu": gpu, "both": both, "shares": shares}
    yield "derived", stacks.config("karpenter", "1.36", pools, name="launch", claims=claims)
    one_gate = {"gpu": gpu}
    yield "single-gate", stacks.config("karpenter", "1.36", one_gate, name="launch", claims={"one": claims["one"]})
    # ComputeDomain channels exist on the node (the pool turns them on), never in Karpenter's metadata
    channel = {"pools": ["both"], "requests": [
        {"name": "channel", "exactly": {"deviceClassName": "compute-domain-default-channel.nvidia.com"}}]}
    yield "compute-domains", stacks.config("karpenter", "1.36", {"both": {**both, "computeDomains": True}},
                                           name="launch", claims={"channel": channel, "aligned": claims["aligned"]})
    # one EFA interface in the layout: Karpenter still assumes an EFA on every EFA-capable card
    one_efa = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
               {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}]
    yield "one-efa", stacks.config("karpenter", "1.36", {"both": {**both, "efa": {"networkInterfaces": one_efa}}},
                                   name="launch", claims={"efa-eight": {"pools": ["both"], "efa": {"count": 8}}})
    for ident, release in (("enable-dra", {"enableDRA": True}), ("ignore", {"ignoreDRARequests": True}),
                           ("no-gates", {}), ("efa-gate", {"awsFeatureGates": {"draEFA": True}})):
        yield ident, stacks.config("karpenter", "1.36", pools, name="launch", claims=claims, cluster={
            "existing": True, "karpenter": {"version": "1.15.0", "settings": release}})


def generated(count: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Karpenter stacks of DRA pools and claims drawn by hypothesis with a fixed seed (test_dra_allocation's)."""
    drawn: list[dict[str, Any]] = []

    @settings(max_examples=count * 3, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(dra_stacks())
    def collect(cfg: dict[str, Any]) -> None:
        if cfg["eks-devices:cluster"]["mode"] == "karpenter":
            drawn.append(cfg)

    collect()
    for i, cfg in enumerate(drawn[:count]):
        yield f"g{i}", cfg


# Types Karpenter has metadata for, of every root shape: one root for all (g5), GPUs apart from the EFAs (g6,
# g6e), 1 or 2 GPUs with their EFAs (p4d, p5, p5en, p6), a root in PCI domain 0 with names past 0x80 (g4dn.metal).
ROOT_TYPES = ["p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p4d.24xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge",
              "g6e.48xlarge", "g6e.24xlarge", "g6.12xlarge", "g5.48xlarge", "g4dn.metal"]
ABSENT_ROOTS = ["pci0000:45", "pci0001:44", "pci0000:ff"]  # no device of any type sits there
ROOT = "device.attributes['resource.kubernetes.io'].pcieRoot"


@st.composite
def root_selector(draw: st.DrawFn, types: list[str]) -> str:
    """A CEL selector on the root's name: a root of the pool's types, of another type, or of none."""
    own = sorted({r.name for t in types for r in LAYOUTS[t].roots})
    other = sorted({r.name for t in ROOT_TYPES for r in LAYOUTS[t].roots} - set(own))
    name = draw(st.sampled_from([own, own, other, ABSENT_ROOTS]).flatmap(st.sampled_from))
    return draw(st.sampled_from([f"{ROOT} == '{name}'", f"{ROOT} == '{name}'", f"{ROOT} != '{name}'",
                                 f"{ROOT} in ['{name}', '{draw(st.sampled_from(own))}']",
                                 f"{ROOT}.startsWith('{name[:-1]}')"]))


@st.composite
def root_stacks(draw: st.DrawFn) -> dict[str, Any]:
    """A Karpenter stack of one dynamic GPU+EFA pool and claims whose requests select GPUs or EFAs by root."""
    types = draw(st.lists(st.sampled_from(ROOT_TYPES), min_size=1, max_size=2, unique=True))
    classes = {"gpu": "gpu.nvidia.com", "efa": "efa.networking.k8s.aws"}
    claims: dict[str, Any] = {}
    for j in range(draw(st.integers(1, 3))):
        kinds = draw(st.sampled_from([["gpu"], ["gpu"], ["efa"], ["gpu", "efa"]]))
        selector = draw(root_selector(types))
        claims[f"c{j}"] = {"pools": ["gpu"], "requests": [{"name": k, "exactly": {
            "deviceClassName": classes[k], "count": draw(st.sampled_from([1, 1, 2, 4])),
            "selectors": [{"cel": {"expression": selector}}]}} for k in kinds]}
    pool = {"instanceTypes": types, "devices": {"nvidia": "dra", "efa": "dra"}}
    return stacks.config("karpenter", "1.36", {"gpu": pool}, name="launch", claims=claims)


def root_generated(count: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """`count` stacks of `root_stacks`, drawn by hypothesis with a fixed seed (derandomize seeds from this
    function's source: an edit here draws other stacks)."""
    drawn: list[dict[str, Any]] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(root_stacks())
    def collect(cfg: dict[str, Any]) -> None:
        drawn.append(cfg)

    collect()
    for i, cfg in enumerate(drawn[:count]):
        yield f"r{i}", cfg


def built(sources: Iterator[tuple[str, dict[str, Any]]], records: dict[str, dict[str, Any]],
          drawn: bool = False) -> list[Stack]:
    """The stacks that plan; a hand-written one must (`drawn`: generated, skipped when it does not)."""
    out = []
    for ident, cfg in sources:
        try:
            out.append(stack_of(ident, cfg, records))
        except ConfigError:
            if not drawn:
                raise
    return out


@pytest.fixture(scope="module")
def records() -> dict[str, dict[str, Any]]:
    return describe_records()


Checked = dict[str, tuple[Case, Outcome]]


def _check(plane: controlplane.ControlPlane, binary: Path, built_stacks: list[Stack],
           records: dict[str, dict[str, Any]]) -> Checked:
    """Every case solved and compared; the cases with what Karpenter did, by id."""
    out: Checked = {}
    bad = {}
    for stack in built_stacks:
        outcomes = solve(plane, binary, stack, records)
        if found := disagreements(stack, outcomes):
            bad[stack.ident] = found
        out |= {c.id: (c, outcomes[c.id]) for c in stack.cases}
    assert bad == {}, json.dumps(bad, indent=1)
    return out


def test_staging_claims_launch_as_the_model_says(plane: controlplane.ControlPlane, scheduler: Path,
                                                 records: dict[str, dict[str, Any]]) -> None:
    checked = _check(plane, scheduler, built(staging(), records), records)
    by_claim = {c.claim.name: (c, o) for c, o in checked.values() if c.pool.name == "gpu-dra"}
    assert by_claim["eight-gpus-aligned"][1].instance_types == ("p5.48xlarge", "p5e.48xlarge")
    for refused in ("mig", "channel", "too-many-efa"):
        assert by_claim[refused][1].instance_types == () and by_claim[refused][1].error


def test_the_guides_cases_launch_as_the_model_says(plane: controlplane.ControlPlane, scheduler: Path,
                                                   records: dict[str, dict[str, Any]]) -> None:
    built_stacks = built(source_cases(), records)
    assert {s.ident for s in built_stacks} == {"derived", "single-gate", "compute-domains", "one-efa", "enable-dra",
                                                "ignore", "no-gates", "efa-gate"}
    checked = _check(plane, scheduler, built_stacks, records)
    launched = {(i.rsplit("-", 1)[0], c.claim.name): o.instance_types for i, (c, o) in checked.items()}
    assert launched[("derived", "one")] == ("g6e.12xlarge",)  # never g7e
    assert launched[("derived", "distinct")] == () and launched[("compute-domains", "channel")] == ()
    assert launched[("one-efa", "efa-eight")] == ("p5.48xlarge",)  # though the node gets one EFA
    assert launched[("derived", "shares-two")] == ("g6e.12xlarge",)
    assert launched[("ignore", "one")] == launched[("no-gates", "one")] == ()
    assert launched[("efa-gate", "efa-one")] == ("p5.48xlarge",) and launched[("efa-gate", "aligned")] == ()
    # Karpenter reads the PCIe root names its metadata scraped (p5.48xlarge's first GPU sits on pci0000:44), and
    # so does the model: every case settled, the root selector's among them
    assert launched[("derived", "root-selector")] == ("p5.48xlarge",)
    assert all(c.model.settled for c, _ in checked.values())


def test_generated_claims_launch_as_the_model_says(plane: controlplane.ControlPlane, scheduler: Path,
                                                   records: dict[str, dict[str, Any]]) -> None:
    checked = _check(plane, scheduler, built(generated(40), records, drawn=True), records)
    assert any(o.instance_types for _, o in checked.values()) and any(not o.instance_types
                                                                      for _, o in checked.values())


def test_selectors_naming_pcie_roots_launch_as_the_model_says(plane: controlplane.ControlPlane, scheduler: Path,
                                                              records: dict[str, dict[str, Any]]) -> None:
    """Roots of the pool's types, of other types and of none, for GPUs, EFAs or both: Karpenter's scheduler and
    the model offer the same types. Not vacuous: some launch, some do not, on every kind of name."""
    checked = _check(plane, scheduler, built(root_generated(24), records, drawn=True), records)
    assert len(checked) >= 40 and all(c.model.settled for c, _ in checked.values())
    expressions = {c.id: str(c.claim.built.devices if c.claim.built else "") for c, _ in checked.values()}
    absent = [o for c, o in checked.values() if any(f"== '{n}'" in expressions[c.id] for n in ABSENT_ROOTS)]
    assert absent and not any(o.instance_types for o in absent)  # a name no device has: nothing launches
    launched = [o for _, o in checked.values() if o.instance_types]
    assert len(launched) >= 10 and len(checked) - len(launched) >= 10, (len(launched), len(checked))
    assert any(len(o.instance_types) == 1 and len(c.pool.instance_types) == 2 for c, o in checked.values())


# -- another release: Karpenter's AWS provider v1.15.2 ------------------------------------------------------
# Its DRA metadata adds g7e (GPUs, and EFAs sharing their GPU pairs' roots) and bare EFAs (no root, no NUMA node)
# on the Trainium types, drops g6f and gr6f and says p4d's GPUs have 40Gi (`karpenter_metadata`). The stack that
# runs it sets cluster.karpenter.version: 1.15.2 and is judged by the scheduler built with that provider.
RELEASE = "1.15.2"
G7E_ROOT = "pci0000:a6"  # g7e.48xlarge's third root: gpu-4, gpu-5 and efa2 (v1.15.2's scrape)


def release_cases(version: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The types whose metadata v1.15.2 changed, one stack at `version`: g7e, g6f/gr6f, p4d, Trainium."""
    gpu_efa = {"nvidia": "dra", "efa": "dra"}
    pools = {"g7e": {"instanceTypes": ["g7e.12xlarge", "g7e.24xlarge", "g7e.48xlarge", "g6e.12xlarge"],
                     "devices": gpu_efa},
             "small": {"instanceTypes": ["g6f.xlarge", "gr6f.4xlarge", "g6.xlarge"], "devices": {"nvidia": "dra"}},
             "a100": {"instanceTypes": ["p4d.24xlarge"], "devices": gpu_efa},
             "trn": {"instanceTypes": ["trn2.48xlarge", "trn1.32xlarge", "trn2.3xlarge"],
                     "devices": {"efa": "dra", "neuron": "device-plugin"}}}

    def selecting(pool: str, device_class: str, expression: str, count: int = 1) -> dict[str, Any]:
        return {"pools": [pool], "requests": [{"name": "d", "exactly": {
            "deviceClassName": device_class, "count": count, "selectors": [{"cel": {"expression": expression}}]}}]}

    efa_class = "efa.networking.k8s.aws"
    claims = {"one": {"pools": ["g7e", "small"], "gpus": {"count": 1}},
              "eight": {"pools": ["g7e"], "gpus": {"count": 8}},
              "aligned": {"pools": ["g7e"], "gpus": {"count": 2}, "efa": {"count": 1}, "alignWith": "gpu"},
              "aligned-wide": {"pools": ["g7e"], "gpus": {"count": 1}, "efa": {"count": 2}, "alignWith": "gpu"},
              "root": selecting("g7e", "gpu.nvidia.com", f"{ROOT} == '{G7E_ROOT}'", 2),
              "blackwell": selecting("g7e", "gpu.nvidia.com",
                                     "device.attributes['gpu.nvidia.com'].productName.contains('RTX PRO 6000')"),
              "partition": selecting("small", "gpu.nvidia.com",
                                     "device.attributes['gpu.nvidia.com'].productName.endsWith('Q')"),
              "memory": selecting("a100", "gpu.nvidia.com",
                                  "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", 8),
              "efa-trn": {"pools": ["trn"], "efa": {"count": 8}},
              "efa-one": {"pools": ["trn"], "efa": {"count": 1}},
              "efa-numa": selecting("trn", efa_class, "device.attributes['dra.net'].numaNode == 0"),
              "efa-root": {"pools": ["trn"], "requests": [{"name": "d", "exactly": {
                  "deviceClassName": efa_class, "count": 2}}], "constraints": [
                  {"requests": ["d"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]}}
    yield f"rel{version.replace('.', '')}", stacks.config("karpenter", "1.36", pools, name="launch", claims=claims,
                                                          cluster={"karpenter": {"version": version}})


def at_release(sources: Iterator[tuple[str, dict[str, Any]]], version: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The same stacks, running Karpenter `version` (an existing cluster's release keeps its settings)."""
    for ident, cfg in sources:
        cfg = copy.deepcopy(cfg)
        cluster = cfg["eks-devices:cluster"]
        cluster["karpenter"] = {**(cluster.get("karpenter") or {}), "version": version}
        yield f"{ident}-v{version.replace('.', '')}", cfg


@pytest.fixture(scope="module")
def scheduler_release(plane: controlplane.ControlPlane) -> Path:
    """The scheduler built with the AWS provider at RELEASE (scripts/engines.sh, karpenter-v1.15.2.mod)."""
    _, binary = plane.karpenter_release(RELEASE)
    assert binary.is_file(), f"{binary} is missing from a complete engines build"
    return binary


def _by_claim(checked: Checked) -> dict[tuple[str, str], tuple[str, ...]]:
    return {(c.claim.name, c.pool.name): o.instance_types for c, o in checked.values()}


def test_karpenter_1_15_2_launches_as_the_model_of_its_metadata_says(
        plane: controlplane.ControlPlane, scheduler_release: Path, records: dict[str, dict[str, Any]]) -> None:
    checked = _check(plane, scheduler_release, built(release_cases(RELEASE), records), records)
    launched = _by_claim(checked)
    assert launched[("one", "g7e")] == ("g6e.12xlarge", "g7e.12xlarge", "g7e.24xlarge", "g7e.48xlarge")
    assert launched[("one", "small")] == ("g6.xlarge",)  # no g6f, no gr6f
    assert launched[("eight", "g7e")] == ("g7e.48xlarge",)
    assert launched[("aligned", "g7e")] == ("g7e.12xlarge", "g7e.24xlarge", "g7e.48xlarge")
    assert launched[("aligned-wide", "g7e")] == ()
    assert launched[("root", "g7e")] == ("g7e.48xlarge",)
    assert launched[("blackwell", "g7e")] == ("g7e.12xlarge", "g7e.24xlarge", "g7e.48xlarge")
    assert launched[("partition", "small")] == ()
    assert launched[("memory", "a100")] == ("p4d.24xlarge",)
    assert launched[("efa-trn", "trn")] == ("trn1.32xlarge", "trn2.48xlarge")
    assert launched[("efa-one", "trn")] == ("trn1.32xlarge", "trn2.3xlarge", "trn2.48xlarge")
    assert launched[("efa-numa", "trn")] == launched[("efa-root", "trn")] == ()  # bare EFAs
    assert all(c.model.settled for c, _ in checked.values())


def test_the_same_claims_launch_as_before_on_karpenter_1_15_0(
        plane: controlplane.ControlPlane, scheduler: Path, records: dict[str, dict[str, Any]]) -> None:
    launched = _by_claim(_check(plane, scheduler, built(release_cases("1.15.0"), records), records))
    assert launched[("one", "g7e")] == ("g6e.12xlarge",)
    assert launched[("one", "small")] == ("g6.xlarge", "g6f.xlarge", "gr6f.4xlarge")
    assert launched[("partition", "small")] == ("g6f.xlarge", "gr6f.4xlarge")
    assert launched[("memory", "a100")] == launched[("efa-trn", "trn")] == launched[("root", "g7e")] == ()


def test_generated_claims_launch_on_karpenter_1_15_2_as_the_model_says(
        plane: controlplane.ControlPlane, scheduler_release: Path, records: dict[str, dict[str, Any]]) -> None:
    """The generated stacks and those whose selectors name PCIe roots, running 1.15.2, against its scheduler."""
    stacks_ = built(at_release(generated(40), RELEASE), records, drawn=True) + built(
        at_release(root_generated(24), RELEASE), records, drawn=True)
    checked = _check(plane, scheduler_release, stacks_, records)
    assert len(checked) >= 90 and all(c.model.settled for c, _ in checked.values())
    launched = [o for _, o in checked.values() if o.instance_types]
    assert len(launched) >= 20 and len(checked) - len(launched) >= 20, (len(launched), len(checked))
