"""Plan → the Kubernetes objects the device software needs beside its Helm releases, as plain dicts.

Pure and shared: the `DeviceSoftware` component turns each dict into a typed pulumi-kubernetes
resource, and `eks-devices render` prints the same dicts. Three kinds of object:

- Namespaces the releases install into (kube-system excepted) and the shared claims live in
  (the built-in namespaces excepted);
- DeviceClasses the toolkit owns: in Auto Mode the upstream classes of the families its DRA pools use
  (GPUs and EFA); in every mode the extra classes of
  `eks-devices:deviceClasses`. Never a class a driver chart owns (the chart creates those);
- ResourceClaims for `gpuSharing: {strategy: shared-claim}` pools on the NVIDIA DRA driver (or
  whose NVIDIA manager Auto Mode infers per node): one named claim that several pods reference, so
  they share one GPU.
"""

from __future__ import annotations

from typing import Any

from eks_devices.core.families import NVIDIA
from eks_devices.core.knowledge.device_classes import RESOURCE_API_V1
from eks_devices.core.model import DeviceClassPlan, Plan
from eks_devices.core.names import MANAGED_BY, POOL_LABEL

BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
SHARED_GPU_REQUEST = "gpu"


def device_class(dc: DeviceClassPlan) -> dict[str, Any]:
    """A DeviceClass object with one CEL selector (and the extended resource name, if any)."""
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": dc.expression}}]}
    if dc.extended_resource_name:
        spec["extendedResourceName"] = dc.extended_resource_name
    return {"apiVersion": RESOURCE_API_V1, "kind": "DeviceClass",
            "metadata": {"name": dc.name, "labels": dict(MANAGED_BY)}, "spec": spec}


def toolkit_device_classes(plan: Plan) -> list[dict[str, Any]]:
    """The DeviceClasses eks-devices creates itself (never one a driver chart creates)."""
    return [device_class(dc) for dc in sorted(plan.device_classes, key=lambda c: c.name) if dc.created_by_toolkit]


def shared_claim_name(pool_name: str, configured: str | None) -> str:
    """The claim a shared-claim pool's pods reference: `gpuSharing.claimName`, else `<pool>-shared-gpu`."""
    return configured or f"{pool_name}-shared-gpu"


def shared_claims(plan: Plan) -> list[dict[str, Any]]:
    """One ResourceClaim for one GPU per (namespace, name) that shared-claim DRA pools name.
    Pods that reference it are scheduled onto the node of the allocated GPU, so they also select
    the pool (`eks-devices.io/pool`) to keep the first allocation on it."""
    claims: dict[tuple[str, str], list[str]] = {}
    for pool in sorted(plan.pools.values(), key=lambda p: p.name):
        sharing = pool.config.gpu_sharing
        if sharing.strategy != "shared-claim" or not pool.serves(NVIDIA.name, "dra"):  # inferred: a DRA node
            continue
        key = (sharing.claim_namespace, shared_claim_name(pool.name, sharing.claim_name))
        claims.setdefault(key, []).append(pool.name)
    out = []
    for (namespace, name), pools in sorted(claims.items()):
        labels = dict(MANAGED_BY)
        if len(pools) == 1:
            labels[POOL_LABEL] = pools[0]
        request = {"name": SHARED_GPU_REQUEST, "exactly": {"deviceClassName": NVIDIA.device_class, "count": 1}}
        out.append({"apiVersion": RESOURCE_API_V1, "kind": "ResourceClaim",
                    "metadata": {"name": name, "namespace": namespace, "labels": labels},
                    "spec": {"devices": {"requests": [request]}}})
    return out


def namespaces(plan: Plan) -> list[dict[str, Any]]:
    """Namespaces to create: the releases' (kube-system exists), the shared claims' and the declared
    claims' (Kubernetes' own namespaces exist; a claim with createNamespace: false names one that does)."""
    names = {r.namespace for r in plan.releases.values()}
    names |= {c["metadata"]["namespace"] for c in shared_claims(plan)}
    names |= {c.built.namespace for c in plan.claims if c.built is not None and c.config.create_namespace}
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": dict(MANAGED_BY)}}
            for n in sorted(names - BUILTIN_NAMESPACES)]


def manifests(plan: Plan) -> list[dict[str, Any]]:
    """Everything above in apply order: namespaces, DeviceClasses, claims."""
    return namespaces(plan) + toolkit_device_classes(plan) + shared_claims(plan)
