"""Device-manager rules: one manager per node, instance types, GPU sharing."""

from __future__ import annotations

from collections.abc import Iterator

from .. import scope
from ..plan import Plan
from ..values import dig
from .registry import Finding, at, rule


@rule("one-manager-per-node", "no node may run a DRA driver and a device plugin for one family")
def _one_manager_per_node(plan: Plan) -> Iterator[Finding]:
    for overlap in scope.overlaps(plan):
        pool = plan.pools.get(overlap.pool)  # None for a release that lost its scope ("*")
        if any(r.source == "bottlerocket" for r in overlap.running) and pool and pool.manager("nvidia") == "dra":
            continue  # reported by bottlerocket-bundled-plugin with its own fix
        serving = pool.releases.get(overlap.family) if pool else None
        overridden = [r.source for r in overlap.running if r.source in plan.spec.helm_values] + (
            [serving] if serving in plan.spec.helm_values else [])
        path = f"helmValues.{overridden[0]}" if overridden else f"nodePools.{overlap.pool}.devices.{overlap.family}"
        yield Finding("one-manager-per-node", "error", path, overlap.problem,
                      "keep each release's nodeSelector on its eks-devices.io/device-manager-<family> label "
                      "(do not override nodeSelector/affinity/enabled in helmValues) and keep the pool's "
                      "device-manager labels as planned")


@rule("bottlerocket-bundled-plugin", "Bottlerocket's bundled NVIDIA plugin must be off on NVIDIA DRA pools")
def _bottlerocket_bundled_plugin(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools.values():
        if pool.ami != "bottlerocket" or pool.manager("nvidia") != "dra":
            continue
        if dig(pool.bottlerocket_settings, "kubelet-device-plugins.nvidia.enabled", True) is not False:
            yield Finding("bottlerocket-bundled-plugin", "error", at(pool, "bottlerocketSettings"),
                          "the Bottlerocket NVIDIA variant would run its bundled device plugin beside the "
                          "NVIDIA DRA driver",
                          "remove kubelet-device-plugins.nvidia.enabled from bottlerocketSettings "
                          "(the toolkit sets it to false)")
