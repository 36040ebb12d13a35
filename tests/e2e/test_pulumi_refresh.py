"""`pulumi refresh` then `pulumi up` of an unchanged program, judged by the real engine.

A refresh has the real `pulumi-resource-kubernetes` read every object back and keep, as its inputs, the live
object pruned to the keys the program sent (provider/pkg/provider/provider.go `Read`, `pruneLiveState`); its
`Diff` then compares the next program's inputs with the live object pruned likewise, refreshed or not. So the
server's defaults (a DRA request's `count`) make no step, but an empty list the server stores as absent (the
API types' `omitempty`, `kube_storage`) is a change on every `up`: the toolkit sent raw claims with
`selectors: []` and `requests: []`, and each `up` replaced them (their spec is immutable). These cases run
`up`, `refresh` (or not) and `preview` through the real Pulumi CLI and provider (built from Go modules) against
a real kube-apiserver, for every kind of object the components send, on 1.36 and an API server emulating 1.35:
the engine plans no step; a stack deployed with the old rendering plans none on its first `up` after upgrading,
as `diff` predicts; and the server drops exactly the empty lists `kube_storage` says it drops.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi_kubernetes as k8s
import pytest

from e2e import pulumi_cli
from e2e.controlplane import ControlPlane
from e2e.oci_registry import Registry
from e2e.pulumi_cli import PROJECT
from e2e.test_pulumi_engine import Program, predicted_steps, real_steps, served_locally
from eks_devices import (
    ClaimTemplates,
    ClaimTemplatesArgs,
    DeviceSoftware,
    DeviceSoftwareArgs,
    NodePools,
    NodePoolsArgs,
    build,
    parse,
)
from eks_devices.core.knowledge import kube_storage
from eks_devices.core.knowledge.device_classes import RESOURCE_API_V1
from eks_devices.core.model import Plan
from eks_devices.offline import engine as offline
from support import stacks


def everything(cfg: dict[str, Any], registry: Registry | None = None,
               sent: Callable[[Plan], Plan] = lambda plan: plan) -> Program:
    """The stack's Kubernetes-layer components on an existing cluster: device software (its releases'
    charts served locally), DeviceClasses and namespaces, claims, and the Auto Mode or Karpenter pools;
    the plan as `sent` makes it (the stack's own by default)."""

    def make(kubeconfig: str) -> Callable[[], None]:
        def program() -> None:
            plan = build(parse(cfg))
            plan = sent(served_locally(plan, registry) if registry is not None else plan)
            assert not plan.errors, [f.message for f in plan.errors]
            cluster = cfg["eks-devices:cluster"]["name"]
            provider = k8s.Provider(f"{cluster}-k8s", kubeconfig=kubeconfig, enable_server_side_apply=True)
            software = DeviceSoftware(cluster, DeviceSoftwareArgs(plan=plan, k8s_provider=provider))
            ClaimTemplates(cluster, ClaimTemplatesArgs(
                plan=plan, k8s_provider=provider, namespaces=software.namespaces,
                device_classes=software.device_classes, releases=software.releases))
            if plan.pools:
                NodePools(cluster, NodePoolsArgs(
                    plan=plan, cluster_name=cluster, k8s_provider=provider, node_role_name="nodes",
                    node_role_arn="arn:aws:iam::111122223333:role/nodes",
                    private_subnet_ids=["subnet-0000000a", "subnet-0000000b"],
                    private_subnets_by_zone={"us-west-2a": "subnet-0000000a", "us-west-2b": "subnet-0000000b"},
                    cluster_security_group_id="sg-0c", efa_security_group_id="sg-0e", discovery_tag=cluster,
                    tagged_security_groups=True))

        return program

    return make


def as_sent_before(plan: Plan) -> Plan:
    """`plan` with its raw claims as the toolkit rendered them before it left out empty lists: every request
    and alternative without selectors with `selectors: []`, every constraint and config for all requests
    with `requests: []` (the configuration models' defaults, dumped whole)."""

    def old(devices: dict[str, Any]) -> dict[str, Any]:
        devices = copy.deepcopy(devices)
        for request in devices["requests"]:
            for alt in [request["exactly"]] if "exactly" in request else request["firstAvailable"]:
                alt.setdefault("selectors", [])
        for part in (*devices.get("constraints", ()), *devices.get("config", ())):
            part.setdefault("requests", [])
        return devices

    claims = []
    for claim in plan.claims:
        built = claim.built
        if built is not None and claim.config.requests is not None:
            manifest = copy.deepcopy(built.manifest)
            devices = old(built.devices)
            (manifest["spec"] if built.kind == "ResourceClaim" else manifest["spec"]["spec"])["devices"] = devices
            claim = dataclasses.replace(claim, built=dataclasses.replace(built, manifest=manifest, devices=devices))
        claims.append(claim)
    return dataclasses.replace(plan, claims=tuple(claims))


GPU = "gpu.nvidia.com"
P5 = {"instanceTypes": ["p5.48xlarge"], "provisioning": "static", "replicas": 1}
# every shape of claim the toolkit renders: the short forms (CEL selectors, ExactCount, All, GPU+EFA alignment),
# a shared claim, and raw requests as a team writes them (no selectors, no count, a constraint and a config for
# all requests, firstAvailable alternatives, a distinctAttribute where the minor has it)
CLAIMS: dict[str, Any] = {
    "short": {"pools": ["big"], "namespace": "ml", "gpus": {"count": 2, "model": "H100", "minMemoryGiB": 40}},
    "shared": {"pools": ["big"], "kind": "claim", "gpus": {"count": 1}},
    "aligned": {"pools": ["big"], "gpus": {"count": 2}, "efa": {"count": 8}, "alignWith": "gpu"},
    "every-efa": {"pools": ["big"], "efa": {"all": True}},
    "raw": {"pools": ["big"], "requests": [{"name": "a", "exactly": {"deviceClassName": GPU}},
                                           {"name": "b", "exactly": {"deviceClassName": GPU, "count": 1}}],
            "constraints": [{"matchAttribute": "gpu.nvidia.com/productName"}],
            "config": [{"opaque": {"driver": GPU, "parameters": {
                "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}}}]},
    "first": {"pools": ["big"], "requests": [{"name": "gpu", "firstAvailable": [
        {"name": "two", "deviceClassName": GPU, "count": 2}, {"name": "one", "deviceClassName": GPU}]}]},
}
DISTINCT = {"raw-shared": {"pools": ["big"], "kind": "claim", "requests": [
    {"name": "a", "exactly": {"deviceClassName": GPU}}, {"name": "b", "exactly": {"deviceClassName": GPU}}],
    "constraints": [{"requests": ["a", "b"], "distinctAttribute": "resource.kubernetes.io/pcieRoot"}]}}
BIG = {**P5, "devices": {"nvidia": "dra", "efa": "dra"}, "efa": {"alignWith": "gpu"}}
DEVICE_CLASSES = {"h100.gpu.example.com": {"base": GPU, "productName": "NVIDIA H100 80GB HBM3"}}


def auto_mode() -> dict[str, Any]:
    """Auto Mode: the toolkit's DeviceClasses (the upstream names, one of its own with an extended resource),
    a shared-claim pool's claim, a claim's namespace, NodePools and NodeClasses, and every claim."""
    pools = {"gpu": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"},
                     "gpuSharing": {"strategy": "shared-claim", "claimName": "shared-gpu"}}, "big": BIG}
    return stacks.config("auto-mode", "1.36", pools, name="e2e-refresh", claims={**CLAIMS, **DISTINCT},
                         deviceClasses=DEVICE_CLASSES, cluster={"draExtendedResources": True})


def karpenter(minor: str) -> dict[str, Any]:
    """Karpenter at `minor`: the device software's releases, a DeviceClass of the toolkit's, NodePools and
    EC2NodeClasses (dynamic and static), and every claim the minor takes."""
    pools = {"gpu": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"}}, "big": BIG}
    claims = {**CLAIMS, **(DISTINCT if minor == "1.36" else {})}
    return stacks.config("karpenter", minor, pools, name="e2e-refresh", claims=claims, deviceClasses=DEVICE_CLASSES)


KINDS = {"kubernetes:core/v1:Namespace", "kubernetes:resource.k8s.io/v1:DeviceClass",
         "kubernetes:resource.k8s.io/v1:ResourceClaim", "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
         "kubernetes:karpenter.sh/v1:NodePool", "kubernetes:eks.amazonaws.com/v1:NodeClass",
         "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:helm.sh/v3:Release"}


def test_the_cases_send_every_kind_and_shape() -> None:
    """The programs below send every kind these components send (not the NVIDIA driver's ComputeDomain, whose
    CRD the stand-in charts do not install) and every shape of claim."""
    kinds: set[str] = set()
    for cfg in (auto_mode(), karpenter("1.36"), karpenter("1.35")):
        plan = build(parse(cfg))
        assert not plan.errors, [f.message for f in plan.errors]
        recorded = offline.run(everything(cfg)("{}"), {}, stack="kinds", project=PROJECT).resources
        kinds |= {r.type for r in recorded if r.type.startswith("kubernetes:")}
    assert kinds == KINDS
    text = json.dumps([c.built.manifest for c in build(parse(auto_mode())).claims if c.built is not None])
    for word in ("firstAvailable", '"All"', "matchAttribute", "distinctAttribute", "selectors", "opaque"):
        assert word in text, word


def test_the_raw_claims_rendered_before_sent_empty_lists() -> None:
    """`as_sent_before` gives back what the toolkit sent before it left empty lists out."""
    plan = build(parse(auto_mode()))
    was = {c.name: c.built.manifest for c in as_sent_before(plan).claims if c.built is not None}
    assert was["raw"]["spec"]["spec"]["devices"]["constraints"] == [
        {"matchAttribute": "gpu.nvidia.com/productName", "requests": []}]
    assert all(alt["selectors"] == [] for alt in was["first"]["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"])
    assert was["short"] == next(c.built.manifest for c in plan.claims if c.name == "short" and c.built is not None)


@pytest.mark.parametrize("refresh", [True, False], ids=["refreshed", "not-refreshed"])
def test_an_unchanged_auto_mode_program_is_no_step(control_plane: ControlPlane, pulumi_env: dict[str, str],
                                                   refresh: bool) -> None:
    """Every object Auto Mode's components send, read back by a refresh (or not), is planned as no step
    for the same program, and `diff` predicts the same."""
    program = everything(auto_mode())
    stack = f"auto-{'refreshed' if refresh else 'again'}"
    assert predicted_steps(stack, program, program) == {}
    assert real_steps(control_plane, pulumi_env, stack, program, program, refresh=refresh) == {}


def test_an_unchanged_karpenter_program_is_no_step_after_a_refresh(
        control_plane: ControlPlane, chart_env: dict[str, str], registry: Registry) -> None:
    """Karpenter's: the Helm releases (stand-in charts of the same names and versions), NodePools and
    EC2NodeClasses, the toolkit's DeviceClass, namespaces and claims."""
    program = everything(karpenter("1.36"), registry)
    assert predicted_steps("karpenter-refreshed", program, program) == {}
    assert real_steps(control_plane, chart_env, "karpenter-refreshed", program, program, refresh=True) == {}


def test_an_unchanged_program_is_no_step_after_a_refresh_on_1_35(
        control_plane_at: Callable[[str], ControlPlane], control_plane: ControlPlane, chart_env: dict[str, str],
        registry: Registry, tmp_path: Path) -> None:
    """The same on an API server emulating 1.35 (its defaults and feature gates), the stack at 1.35: no
    distinctAttribute, which that server drops and the toolkit refuses there."""
    plane = control_plane_at("1.35")
    (tmp_path / "home").mkdir()
    (tmp_path / "backend").mkdir()
    env = {**pulumi_cli.prepare(plane, tmp_path / "home", tmp_path / "backend"),
           "SSL_CERT_FILE": chart_env["SSL_CERT_FILE"]}  # the registry serves with the 1.36 plane's certificate
    program = everything(karpenter("1.35"), registry)
    assert real_steps(plane, env, "karpenter-135-refreshed", program, program, refresh=True) == {}


RAW = ("raw", "first", "raw-shared")
UPGRADE_CASES = {  # before, after, refresh between: the steps planned for the raw claims
    "kept-sending-empty-lists": ("before", "before", False, "replace (delete first)"),
    "upgraded": ("before", "after", False, None),
    "upgraded-after-a-refresh": ("before", "after", True, None),
}


@pytest.mark.parametrize("case", sorted(UPGRADE_CASES))
def test_a_stack_deployed_before_empty_lists_were_left_out(control_plane: ControlPlane, pulumi_env: dict[str, str],
                                                           case: str) -> None:
    """The toolkit used to send raw claims with `selectors: []` and `requests: []`, which the API server does not
    store: the provider then found them changed on every `up` and replaced each (delete first). Sent without
    them, the first `up` after upgrading plans nothing, refreshed or not; `diff` predicts each as the engine."""
    old, new, refresh, step = UPGRADE_CASES[case]
    programs = {"before": everything(auto_mode(), sent=as_sent_before), "after": everything(auto_mode())}
    before, after = programs[old], programs[new]
    stack = case[:40]
    real = real_steps(control_plane, pulumi_env, stack, before, after, refresh=refresh)
    assert {urn.rsplit("::", 1)[1]: op for urn, op in real.items()} == (
        {f"e2e-refresh-{name}": step for name in RAW} if step else {})
    assert predicted_steps(stack, before, after) == real  # a refresh changes nothing `diff` would see


# -- the model of how the server stores empty lists, against the server ---------------------------------------
def _empty_lists_at(value: Any, at: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The paths (list items as `*`) where `value` holds an empty list."""
    if isinstance(value, dict):
        return {p for k, v in value.items() for p in _empty_lists_at(v, (*at, k))}
    if isinstance(value, list):
        return {at} if not value else {p for v in value for p in _empty_lists_at(v, (*at, "*"))}
    return set()


def _devices(filled: bool) -> dict[str, Any]:
    """A claim's devices with an empty list at every path of `kube_storage.DEVICE_CLAIM` that can be empty
    (`filled`: constraints and config holding one entry each, whose `requests` are empty), and one inside an
    opaque config's parameters, which are the driver's own."""
    one = {"deviceClassName": GPU, "selectors": []}
    devices: dict[str, Any] = {"requests": [{"name": "a", "exactly": one},
                                            {"name": "b", "firstAvailable": [{"name": "x", **one}]}]}
    if filled:
        devices["constraints"] = [{"requests": [], "matchAttribute": "gpu.nvidia.com/productName"}]
        devices["config"] = [{"requests": [], "opaque": {"driver": GPU, "parameters": {"list": []}}}]
    else:
        devices["constraints"], devices["config"] = [], []
    return devices


def _probes() -> list[dict[str, Any]]:
    meta = {"namespace": "default"}
    out = []
    for filled in (True, False):
        suffix = "filled" if filled else "empty"
        out += [{"apiVersion": RESOURCE_API_V1, "kind": "ResourceClaim",
                 "metadata": {"name": f"lists-{suffix}", **meta}, "spec": {"devices": _devices(filled)}},
                {"apiVersion": RESOURCE_API_V1, "kind": "ResourceClaimTemplate",
                 "metadata": {"name": f"lists-{suffix}", **meta}, "spec": {"spec": {"devices": _devices(filled)}}}]
    out.append({"apiVersion": RESOURCE_API_V1, "kind": "DeviceClass", "metadata": {"name": "lists.example.com"},
                "spec": {"selectors": [], "config": []}})
    return out


def test_the_probes_hold_an_empty_list_at_every_path_the_model_names() -> None:
    for (api_version, kind), paths in kube_storage.OMITTED_WHEN_EMPTY.items():
        sent = set().union(*(_empty_lists_at(p) for p in _probes() if (p["apiVersion"], p["kind"]) == (api_version, kind)))
        assert set(paths) <= sent, kind


def test_the_server_stores_without_the_empty_lists_the_model_leaves_out(control_plane: ControlPlane) -> None:
    """What `kube_storage.as_stored` makes of each probe has the empty lists the API server keeps, and only
    those (the parameters' own); `diff` and the claims' rendering rest on it."""
    probes = _probes()
    try:
        for probe in probes:
            control_plane.apply(probe)
            meta = probe["metadata"]
            stored = control_plane.get(probe["apiVersion"], probe["kind"], meta["name"], meta.get("namespace"))
            modelled = kube_storage.as_stored(probe)
            assert _empty_lists_at(stored) == _empty_lists_at(modelled), probe["kind"]
            assert _empty_lists_at(modelled) < _empty_lists_at(probe)
    finally:
        for probe in probes:
            control_plane.delete(probe["apiVersion"], probe["kind"], probe["metadata"]["name"],
                                 probe["metadata"].get("namespace"))
