"""The real scheduler as the oracle for extended-resource claims on DRA pools (`claim_fit.fit_extended`):
a Pod asking for `nvidia.com/gpu: N` (or another device plugin's resource) on a node whose devices a DRA
driver publishes is served through the DeviceClass naming that `extendedResourceName` (DRAExtendedResource,
beta and on by default from Kubernetes 1.36: the scheduler allocates a claim for the Pod from the class).

Per (claim, DRA pool, instance type) a case is a Ready node with the labels the toolkit plans and the
ResourceSlices its DRA drivers publish (the fit check's own inventory), the stack's DeviceClasses, and
N+1 Pods asking for the resource (N: the fit check's per-node count; N at its cap), pinned to the node
with the claim's nodeSelector. The scheduler must bind exactly N, and a case the fit check says does not
fit binds none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from e2e.controlplane import ControlPlane
from e2e.settling import add_device_nodes, remove_device_nodes, settle
from eks_devices.core.derive import claim_fit, fit, scope
from eks_devices.core.knowledge.devices import Device
from eks_devices.core.manifests import software
from eks_devices.core.model import ClaimPlan, NodeFit, Plan
from support import stacks

CASE_LABEL = "e2e.eks-devices.io/extended-case"
HOSTNAME = "kubernetes.io/hostname"


@dataclass
class Case:
    id: str
    claim: ClaimPlan
    pool: str
    node_fit: NodeFit
    labels: dict[str, str]
    devices: tuple[Device, ...]
    classes: dict[str, dict[str, Any]]

    @property
    def node(self) -> str:
        return f"ext-{self.id}"

    @property
    def pods(self) -> int:
        n = self.node_fit.per_node
        return n if n >= fit.MAX_PER_NODE else n + 1

    def objects(self) -> list[dict[str, Any]]:
        limits = {k: str(v) for k, v in self.claim.config.extended_resources.items()}
        return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.node}}, *(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"p{i}", "namespace": self.node, "labels": {CASE_LABEL: self.id}}, "spec": {
                "nodeSelector": {**self.claim.node_selector, HOSTNAME: self.node},
                "tolerations": [{"operator": "Exists"}],
                "containers": [{"name": "work", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"limits": limits}}]}} for i in range(self.pods))]


def cases_of(ident: str, plan: Plan) -> list[Case]:
    """A case for every extended-resource claim on every DRA pool and instance type it was fitted on."""
    classes = {c.name: software.device_class(c) for c in plan.device_classes}
    out = []
    for claim in plan.claims:
        if claim.built is not None:
            continue
        for pool_name, pool_fit in sorted(claim.pools.items()):
            pool = plan.pools[pool_name]
            if not all(pool.manager(f) == "dra" for f in claim.families):
                continue
            # a pool the claim cannot use at all (no class names the resource) is tried on each type too
            nodes = pool_fit.nodes or tuple(NodeFit(t, 0, pool_fit.reason, "no-devices") for t in pool.instance_types)
            for node_fit in nodes:
                node = scope.pool_nodes(plan, pool, node_fit.instance_type)[0]
                out.append(Case(f"{ident}-{len(out)}", claim, pool_name, node_fit, node.labels,
                                claim_fit.node_devices(pool, node_fit.instance_type, plan.spec.cluster.kubernetes), classes))
    return out


def bound(plane: ControlPlane, cases: list[Case], timeout: float = 150) -> dict[str, int]:
    """Create the cases' classes, nodes, slices and Pods; once the scheduler has settled, the Pods bound per case."""
    for dc in {name: obj for case in cases for name, obj in case.classes.items()}.values():
        plane.apply(dc)

    add_device_nodes(plane, [(case.node, {**case.labels, HOSTNAME: case.node}, case.devices, case.objects())
                             for case in cases])
    return settle(lambda: _snapshot(plane, cases), timeout, f"the Pods of {sorted(c.id for c in cases)}")


def _snapshot(plane: ControlPlane, cases: list[Case]) -> dict[str, int] | None:
    """Bound Pods per case, or None while a Pod is neither bound nor found unschedulable."""
    pods: dict[str, list[dict[str, Any]]] = {c.id: [] for c in cases}
    for pod in plane.list_all("v1", "Pod", selector=CASE_LABEL):
        pods.setdefault(pod["metadata"]["labels"][CASE_LABEL], []).append(pod)
    out = {}
    for case in cases:
        if len(pods[case.id]) != case.pods:
            return None
        for pod in pods[case.id]:
            unschedulable = any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                                for c in (pod.get("status") or {}).get("conditions") or [])
            if not pod["spec"].get("nodeName") and not unschedulable:
                return None
        out[case.id] = sum(bool(p["spec"].get("nodeName")) for p in pods[case.id])
    return out


def clean(plane: ControlPlane, cases: list[Case]) -> None:
    remove_device_nodes(plane, [(case.node, case.node, case.devices) for case in cases])


# -- the stacks -------------------------------------------------------------------------------------
def _stack(mode: str, pools: dict[str, Any], claims: dict[str, Any], kubernetes: str) -> Plan:
    static = {} if mode != "managed-node-groups" else {"provisioning": "static", "replicas": 1}
    return stacks.build(stacks.config(mode, kubernetes, {k: {**static, **p} for k, p in pools.items()},
                                      name="extended", claims=claims))


def planned(kubernetes: str = "1.36") -> list[Case]:
    """Extended-resource claims of several counts on DRA pools of each mode: whole GPUs, MIG (whose class
    selects no whole GPU), consumable GPU shares, Neuron and EFA devices; on Kubernetes `kubernetes`."""
    gpu = {"instanceTypes": ["g6.xlarge", "g6e.12xlarge", "p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "dra"}}
    mig = {"instanceTypes": ["p4d.24xlarge"], "devices": {"nvidia": "dra"},
           "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}}
    shares = {"instanceTypes": ["g6e.12xlarge"], "devices": {"nvidia": "dra"},
              "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}
    neuron = {"instanceTypes": ["trn1.32xlarge", "inf2.xlarge"], "devices": {"neuron": "dra", "efa": "dra"}}

    def claims(pools: list[str], resources: list[dict[str, int]]) -> dict[str, Any]:
        return {f"x{i}": {"pools": pools, "kind": "extended-resource", "extendedResources": r}
                for i, r in enumerate(resources)}

    gpus = [{"nvidia.com/gpu": n} for n in (1, 2, 4, 8, 9)]
    out = []
    for mode in ("auto-mode", "karpenter", "managed-node-groups"):
        plans = [_stack(mode, {"gpu": gpu}, claims(["gpu"], gpus), kubernetes)]
        if mode != "auto-mode":
            plans += [_stack(mode, {"mig": mig}, claims(["mig"], gpus[:2]), kubernetes),
                      _stack(mode, {"shares": shares}, claims(["shares"], gpus[:3]), kubernetes),
                      _stack(mode, {"neuron": neuron}, claims(["neuron"], [
                          {"aws.amazon.com/neuron": 1}, {"aws.amazon.com/neuron": 16},
                          {"vpc.amazonaws.com/efa": 1}, {"vpc.amazonaws.com/efa": 8}]), kubernetes)]
        for i, plan in enumerate(plans):
            out += cases_of(f"{mode[:3]}{i}", plan)
    return out


@pytest.fixture(scope="module")
def outcomes(control_plane: ControlPlane) -> list[tuple[Case, int]]:
    return run(control_plane, planned())


def run(control_plane: ControlPlane, cases: list[Case]) -> list[tuple[Case, int]]:
    """Each case with the Pods the scheduler bound, batch by batch."""
    results: list[tuple[Case, int]] = []
    pending = list(cases)
    while pending:  # DeviceClasses are cluster-wide: a batch holds cases whose classes agree
        batch, classes, rest = [], {}, []
        for case in pending:
            if all(classes.get(n, obj) == obj for n, obj in case.classes.items()):
                batch.append(case)
                classes.update(case.classes)
            else:
                rest.append(case)
        try:
            real = bound(control_plane, batch)
        finally:
            clean(control_plane, batch)
            for name in classes:
                control_plane.delete("resource.k8s.io/v1", "DeviceClass", name)
        results += [(c, real[c.id]) for c in batch]
        pending = rest
    return results


def disagreements(outcomes: list[tuple[Case, int]]) -> dict[str, str]:
    """The cases whose bound Pods differ from the fit check's per-node count."""
    return {f"{c.id} {c.claim.name}@{c.pool}/{c.node_fit.instance_type}":
            f"bound {real} of {c.pods}, the fit check says {c.node_fit.per_node} ({c.node_fit.reason or 'fits'})"
            for c, real in outcomes if real != min(c.node_fit.per_node, c.pods)}


def test_extended_resources_on_dra_pools_are_bound_as_the_fit_check_says(outcomes: list[tuple[Case, int]]) -> None:
    wrong = disagreements(outcomes)
    assert not wrong, wrong


def test_the_cases_exercise_fitting_and_failing_claims(outcomes: list[tuple[Case, int]]) -> None:
    fits = [c for c, _ in outcomes if c.node_fit.fits]
    assert len(fits) >= 15 and len(outcomes) - len(fits) >= 5, (len(fits), len(outcomes))
    assert sum(c.node_fit.per_node > 1 for c in fits) >= 8
    assert {f for c, _ in outcomes for f in c.claim.families} == {"nvidia", "neuron", "efa"}
