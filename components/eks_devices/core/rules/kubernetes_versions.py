"""Version rules: Kubernetes, Karpenter and driver minimums."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.families import DESCRIPTORS, DeviceFamily
from eks_devices.core.knowledge import versions
from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, at, dra_pools, error, rule


@rule("dra-kubernetes-version", "DRA needs Kubernetes 1.34 (1.33: warning)")
def _dra_kubernetes_version(plan: Plan) -> Iterator[Verdict]:
    k8s = plan.spec.cluster.kubernetes
    users = sorted({f"{p.name}.{f}" for p, f in dra_pools(plan)})
    if users and k8s < versions.DRA_KUBERNETES:
        yield Verdict("error" if k8s < (1, 33) else "warning", "cluster.version",
                      f"DRA is used by {', '.join(users)} but the cluster runs Kubernetes {plan.spec.cluster.version}"
                      + (" (DRA works on 1.33 only with an upstream issue)" if k8s == (1, 33) else ""),
                      'set cluster.version to "1.34" or later, or set those pools\' devices to device-plugin')


AUTO_MODE_DRA = tuple(d.name for d in DESCRIPTORS if d.auto_mode_dra)  # the families Auto Mode runs with DRA


@rule("auto-mode-dra-version", "Auto Mode DRA needs Kubernetes 1.36", modes=("auto-mode",))
def _auto_mode_dra_version(plan: Plan) -> Iterator[Verdict]:
    if plan.spec.cluster.kubernetes >= versions.AUTO_MODE_DRA_KUBERNETES:
        return
    for pool, family in dra_pools(plan, AUTO_MODE_DRA, inferred=True):
        inferred = (f" (devices.{family}: inferred would never get a DRA node)"
                    if pool.manager(family) == "inferred" else "")  # type: ignore[arg-type]
        yield error(at(pool, f"devices.{family}"),
                    f"Auto Mode includes the {family} DRA driver only from Kubernetes 1.36 "
                    f"(cluster is {plan.spec.cluster.version}){inferred}",
                    f'set cluster.version to "1.36", or devices.{family}: device-plugin on this pool')


@rule("karpenter-dra-version", "dynamic DRA pools need Karpenter 1.15", modes=("karpenter",))
def _karpenter_dra_version(plan: Plan) -> Iterator[Verdict]:
    if plan.spec.cluster.karpenter_version >= (1, 15, 0):
        return
    pools = sorted({p.name for p, _ in dra_pools(plan) if p.provisioning == "dynamic"})
    if pools:
        fix = "set cluster.karpenter.version to 1.15.0 or later, or make those pools static"
        if plan.spec.cluster.existing:
            fix = ("set Karpenter 1.15.0 or later with settings.enableDRA (or the gate of each DRA driver) on the "
                   f"cluster's release, {versions.KARPENTER_RESET_THEN_REUSE}, and state them in "
                   "cluster.karpenter.version and cluster.karpenter.settings; or make those pools static")
        yield error("cluster.karpenter.version",
                    f"dynamic pools {', '.join(pools)} use DRA but Karpenter {plan.spec.cluster.karpenter.version} "
                    "cannot provision nodes for ResourceClaims (added in 1.15)", fix)


# Kubernetes minor → the first Karpenter release that supports it (KARP compatibility.md).
KARPENTER_MINIMUM = {
    (1, 33): (1, 5, 0), (1, 34): (1, 6, 0), (1, 35): (1, 9, 0), (1, 36): (1, 13, 0), (1, 37): (1, 15, 0),
}


@rule("karpenter-kubernetes-compat", "Karpenter supports the cluster's Kubernetes version", modes=("karpenter",))
def _karpenter_kubernetes_compat(plan: Plan) -> Iterator[Verdict]:
    k8s, karp = plan.spec.cluster.kubernetes, plan.spec.cluster.karpenter_version
    newest = max(KARPENTER_MINIMUM)
    if k8s > newest:
        yield error("cluster.version",
                    f"no Karpenter release is known to support Kubernetes {plan.spec.cluster.version} "
                    f"(newest known: {versions.show(newest)})",
                    f'use cluster.version "{versions.show(newest)}" or earlier')
    elif k8s in KARPENTER_MINIMUM and karp < KARPENTER_MINIMUM[k8s]:
        need = versions.show(KARPENTER_MINIMUM[k8s])
        yield error("cluster.karpenter.version",
                    f"Karpenter {plan.spec.cluster.karpenter.version} does not support Kubernetes "
                    f"{plan.spec.cluster.version} (needs {need} or later)",
                    f"set cluster.karpenter.version to {need} or later")


def _driver_version_rule(family: DeviceFamily) -> None:
    """`<family>-dra-kubernetes-version`: a family whose DRA driver needs a later Kubernetes than DRA itself
    (its descriptor's `dra_kubernetes`; aws-dranet needs 1.35: aws/eks-charts `stable/aws-dranet` README).
    Auto Mode runs its own drivers (`auto-mode-dra-version`)."""
    need, driver = ".".join(map(str, family.dra_kubernetes)), family.releases["dra"]

    @rule(f"{family.name}-dra-kubernetes-version", f"{driver} ({family.title} DRA) needs Kubernetes {need}",
          modes=("karpenter", "managed-node-groups"))
    def _check(plan: Plan) -> Iterator[Verdict]:
        if plan.spec.cluster.kubernetes >= family.dra_kubernetes:
            return
        for pool, _ in dra_pools(plan, (family.name,)):
            yield error(at(pool, f"devices.{family.name}"),
                        f"{driver} requires Kubernetes {need} (cluster is {plan.spec.cluster.version})",
                        f'set cluster.version to "{need}" or later, or devices.{family.name}: device-plugin')


for _family in DESCRIPTORS:
    if _family.dra_kubernetes > versions.DRA_KUBERNETES:
        _driver_version_rule(_family)
