"""The real API server as the oracle for what `render` writes and for the toolkit's validation models.

Every Kubernetes object the program sends for the shipped stacks and for generated stacks of every mode
is created for real (server-side apply, not dry-run) on a Kubernetes 1.36 API server, with Karpenter's
CRDs as Karpenter's own Go API package embeds them; DeviceClass CEL is compiled by the server. Then
the models `render` validates with (kubernetes-validate for built-in kinds, `crd_schemas` for custom
resources) are held against the server's verdict on mutated objects: they must agree.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from e2e.controlplane import ApiError, ControlPlane
from eks_devices import ConfigError
from eks_devices.offline import render
from support import engine, stacks

# Kinds whose CRD no Go module publishes: Auto Mode's NodeClass (AWS publishes no CRD for it) and the
# NVIDIA DRA driver's ComputeDomain (its chart installs the CRD; the chart is no Go module's file).
UNSERVED = {("eks.amazonaws.com/v1", "NodeClass"), ("resource.nvidia.com/v1beta1", "ComputeDomain")}
VERSION = "1.36"


@pytest.fixture(scope="module")
def plane(control_plane: ControlPlane) -> ControlPlane:
    """The control plane with Karpenter's CRDs installed."""
    docs = [yaml.safe_load(p.read_text()) for p in sorted(control_plane.crds.glob("*.yaml"))]
    assert {d["spec"]["names"]["kind"] for d in docs} >= {"NodePool", "EC2NodeClass", "NodeClaim"}
    control_plane.install_crds(docs)
    return control_plane


def k8s_objects(cfg: dict[str, Any], stack: str = "test") -> list[dict[str, Any]]:
    """The Kubernetes objects the program sends for a stack configuration, namespaces first."""
    items = [i for i in render.objects(engine.main(cfg, stack=stack)) if not i.path.startswith("helm-values/")]
    docs = [copy.deepcopy(i.document) for i in items]
    return sorted(docs, key=lambda d: d["kind"] != "Namespace")


def apply_stack(plane: ControlPlane, docs: list[dict[str, Any]]) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """Apply every object the server can serve; the refusals, and the kinds it could not check."""
    unchecked = {(d["apiVersion"], d["kind"]) for d in docs if not plane.served(d["apiVersion"], d["kind"])}
    return plane.apply_all(d for d in docs if (d["apiVersion"], d["kind"]) not in unchecked), unchecked


def test_the_network_holds_only_loopback(plane: ControlPlane) -> None:
    from e2e.controlplane import reaches_outside

    assert not reaches_outside(), "the e2e tier must not reach any address but loopback"
    assert plane.request("GET", "/version")["gitVersion"] == "v1.36.3"


def test_dra_is_served_as_v1(plane: ControlPlane) -> None:
    for kind in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"):
        assert plane.served("resource.k8s.io/v1", kind), kind


@pytest.mark.parametrize("stack", stacks.SHIPPED)
def test_shipped_stack_objects_are_created(plane: ControlPlane, stack: str) -> None:
    docs = k8s_objects(stacks.shipped(stack), stack)
    refused, unchecked = apply_stack(plane, docs)
    assert refused == {}
    assert unchecked <= UNSERVED
    created = [d for d in docs if (d["apiVersion"], d["kind"]) not in unchecked]
    assert len(created) >= 3
    for d in created:  # really there, not a dry run
        meta = d["metadata"]
        assert plane.get(d["apiVersion"], d["kind"], meta["name"], meta.get("namespace"))["metadata"]["uid"]


# -- generated stacks -------------------------------------------------------------------------------
INSTANCE_TYPES = {
    "nvidia": ["g6e.xlarge", "g6e.2xlarge", "p5.48xlarge", "p4d.24xlarge", "g5.12xlarge"],
    "neuron": ["trn1.32xlarge", "inf2.xlarge", "trn2.48xlarge"],
}
MANAGERS = ["auto", "dra", "device-plugin", "none"]


def generated_stack(rng: random.Random, mode: str, name: str,
                    kubernetes: tuple[str, ...] = ("1.35", "1.36")) -> dict[str, Any]:
    """A stack of `mode` with one to three random pools, on one of the `kubernetes` minors."""
    pools: dict[str, Any] = {}
    for i in range(rng.randint(1, 3)):
        family = rng.choice(sorted(INSTANCE_TYPES))
        pool: dict[str, Any] = {"instanceTypes": rng.sample(INSTANCE_TYPES[family], rng.randint(1, 2))}
        if mode == "managed-node-groups" or rng.random() < 0.3:
            pool.update(provisioning="static", replicas=rng.randint(1, 3))
        devices = {f: rng.choice(MANAGERS) for f in ("nvidia", "efa", "neuron") if rng.random() < 0.5}
        if devices:
            pool["devices"] = devices
        if rng.random() < 0.3:
            pool["ami"] = "bottlerocket"
        if rng.random() < 0.3:
            pool["labels"] = {"team": rng.choice(["research", "infer", "a.b-c_d"])}
        pools[f"pool-{i}"] = pool
    return stacks.config(mode, rng.choice(kubernetes), pools, name=name)


def generated_stacks(per_mode: int, seed: int = 22,
                     kubernetes: tuple[str, ...] = ("1.35", "1.36")) -> list[tuple[str, dict[str, Any]]]:
    """`per_mode` stacks of each mode on the `kubernetes` minors that the toolkit accepts (no config
    problems, no error findings)."""
    rng = random.Random(seed)
    out: list[tuple[str, dict[str, Any]]] = []
    for mode in ("auto-mode", "karpenter", "managed-node-groups"):
        found = 0
        for _ in range(400):
            cfg = generated_stack(rng, mode, f"gen-{mode[:4]}-{found}", kubernetes)
            try:
                if stacks.build(cfg).errors:
                    continue
            except ConfigError:
                continue
            out.append((f"{mode}-{found}", cfg))
            found += 1
            if found == per_mode:
                break
        assert found == per_mode, f"only {found} accepted {mode} stacks in 400 tries"
    return out


GENERATED = generated_stacks(8)


def test_generated_stacks_cover_every_mode() -> None:
    assert len(GENERATED) >= 20
    assert {cfg["eks-devices:cluster"]["mode"] for _, cfg in GENERATED} == {
        "auto-mode", "karpenter", "managed-node-groups"}


@pytest.mark.parametrize(("name", "cfg"), GENERATED, ids=[n for n, _ in GENERATED])
def test_generated_stack_objects_are_created(plane: ControlPlane, name: str, cfg: dict[str, Any]) -> None:
    docs = k8s_objects(cfg, name)
    refused, unchecked = apply_stack(plane, docs)
    assert refused == {}
    assert unchecked <= UNSERVED
    for d in reversed(docs):  # physical names may repeat across generated stacks
        if (d["apiVersion"], d["kind"]) not in unchecked:
            plane.delete(d["apiVersion"], d["kind"], d["metadata"]["name"], d["metadata"].get("namespace"))


def test_the_server_compiles_device_class_cel(plane: ControlPlane) -> None:
    """The server type-checks selectors (a string is no bool): proof the CEL above was compiled."""
    good = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "e2e-cel"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}
    plane.apply(good, dry_run=True)
    for expression in ("device.driver", "device.driver ==", "device.nope == 1"):
        bad = copy.deepcopy(good)
        bad["spec"]["selectors"][0]["cel"]["expression"] = expression
        with pytest.raises(ApiError) as refused:
            plane.apply(bad, dry_run=True)
        assert refused.value.status == 422 and "cel" in refused.value.message.lower()


# -- the models against the server -------------------------------------------------------------------
def model_accepts(doc: dict[str, Any]) -> bool:
    return not render.problems(render.Rendered(f"{doc['kind'].lower()}/x.yaml", doc), VERSION)


def server_accepts(plane: ControlPlane, doc: dict[str, Any]) -> bool:
    try:
        plane.apply(doc, dry_run=True)
    except ApiError as exc:
        if exc.status in (400, 422, 500):  # SSA answers 500 for a field its typed schema lacks
            return False
        raise
    return True


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], bool]:
    """A mutation setting `path` to `value`; it applies only where the object has the path's parent."""
    def mutate(doc: dict[str, Any]) -> bool:
        node: Any = doc
        for key in path[:-1]:
            if (isinstance(node, dict) and key in node) or (isinstance(node, list) and isinstance(key, int) and key < len(node)):
                node = node[key]
            else:
                return False
        node[path[-1]] = value
        return True
    return mutate


BAD_CEL = [{"cel": {"expression": "device.driver =="}}]
EVERY_KIND = "*"
# kind → mutation → how; each is something a user's override or a toolkit bug could produce.
MUTATIONS: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    EVERY_KIND: {
        "name-not-dns": _set(("metadata", "name"), "Not_A_Name"),
        "label-value-bad": _set(("metadata", "labels"), {"eks-devices.io/pool": "bad value!"}),
        "label-key-bad": _set(("metadata", "labels"), {"-bad/key-": "x"}),
        "unknown-field": _set(("spec", "notAField"), 1),
    },
    "Namespace": {"name-too-long": _set(("metadata", "name"), "a" * 64)},
    "DeviceClass": {"cel-does-not-compile": _set(("spec", "selectors"), BAD_CEL)},
    "ResourceClaim": {"cel-does-not-compile": _set(("spec", "devices", "requests", 0, "exactly", "selectors"), BAD_CEL),
                      "no-requests": _set(("spec", "devices", "requests"), [])},
    "ResourceClaimTemplate": {
        "cel-does-not-compile": _set(("spec", "spec", "devices", "requests", 0, "exactly", "selectors"), BAD_CEL),
        "count-zero": _set(("spec", "spec", "devices", "requests", 0, "exactly", "count"), 0)},
    "NodePool": {
        "template-label-bad": _set(("spec", "template", "metadata", "labels"), {"team": "bad value!"}),
        "requirement-operator": _set(("spec", "template", "spec", "requirements"),
                                     [{"key": "karpenter.sh/capacity-type", "operator": "Sideways"}]),
        "taint-effect": _set(("spec", "template", "spec", "taints"), [{"key": "k", "value": "v", "effect": "Sometimes"}]),
        "restricted-label": _set(("spec", "template", "metadata", "labels"), {"karpenter.sh/nodepool": "x"}),
        "restricted-domain": _set(("spec", "template", "metadata", "labels"), {"node-role.kubernetes.io/gpu": "x"}),
    },
    "EC2NodeClass": {
        "no-ami": _set(("spec", "amiSelectorTerms"), []),
        "bad-alias": _set(("spec", "amiSelectorTerms"), [{"alias": "windows@latest!"}]),
        "no-role": _set(("spec", "role"), ""),
    },
}


def _agreement_cases() -> list[tuple[str, dict[str, Any]]]:
    """(case id, mutated object): every mutation of each kind the shipped stacks produce, once per kind."""
    cases: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for stack in stacks.SHIPPED:
        for doc in k8s_objects(stacks.shipped(stack), stack):
            if (doc["apiVersion"], doc["kind"]) in UNSERVED:
                continue
            for name, mutate in {**MUTATIONS[EVERY_KIND], **MUTATIONS.get(doc["kind"], {})}.items():
                case = f"{doc['kind']}-{name}"
                mutated = copy.deepcopy(doc)
                # a fresh name: spec fields of claims are immutable, so an update would be refused for that
                mutated["metadata"]["name"] = f"agree-{len(cases)}"
                fresh = copy.deepcopy(mutated)
                if case not in seen and mutate(mutated) and mutated != fresh:
                    seen.add(case)
                    cases.append((case, mutated))
    return cases


AGREEMENT = _agreement_cases()


def test_agreement_cases_cover_the_kinds() -> None:
    kinds = {case.split("-")[0] for case, _ in AGREEMENT}
    assert kinds >= {"DeviceClass", "NodePool", "EC2NodeClass", "Namespace", "ResourceClaimTemplate"}
    assert len(AGREEMENT) >= 30


@pytest.mark.parametrize(("case", "doc"), AGREEMENT, ids=[c for c, _ in AGREEMENT])
def test_models_agree_with_the_server(plane: ControlPlane, case: str, doc: dict[str, Any]) -> None:
    server = server_accepts(plane, doc)
    model = model_accepts(doc)
    assert model == server, f"{case}: the server {'accepts' if server else 'refuses'} it, our model does not agree"


def _property_paths(schema: dict[str, Any], at: str = "") -> set[str]:
    """Every property path a structural schema names (through objects and array items)."""
    out: set[str] = set()
    for name, child in (schema.get("properties") or {}).items():
        out.add(f"{at}.{name}")
        out |= _property_paths(child, f"{at}.{name}")
    if isinstance(schema.get("items"), dict):
        out |= _property_paths(schema["items"], f"{at}[]")
    return out


@pytest.mark.parametrize(("kind", "file"), [("NodePool", "karpenter.sh_nodepools.yaml"),
                                            ("EC2NodeClass", "karpenter.k8s.aws_ec2nodeclasses.yaml")])
def test_our_crd_schemas_name_only_fields_karpenter_has(control_plane: ControlPlane, kind: str, file: str) -> None:
    from eks_devices.core.knowledge import crd_schemas

    real = yaml.safe_load((control_plane.crds / file).read_text())
    served = next(v for v in real["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]
    ours = crd_schemas.SCHEMAS[(f"{real['spec']['group']}/v1", kind)]
    missing = _property_paths(ours["properties"]["spec"], ".spec") - _property_paths(served["properties"]["spec"],
                                                                                       ".spec")
    assert missing == set(), f"our {kind} schema names fields Karpenter's CRD does not have"
    assert set(ours["properties"]["spec"]["properties"]) == set(served["properties"]["spec"]["properties"])
