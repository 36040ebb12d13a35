"""Every rule in the catalogue fires on a stack that breaks it and stays quiet on its nearest fix."""

from __future__ import annotations

from typing import Any

import pytest

from eks_devices.core.config.errors import ConfigError
from eks_devices.core.rules import RULES
from support import stacks

STATIC = {"provisioning": "static", "replicas": 1}
P5 = {"instanceTypes": ["p5.48xlarge"]}
CB = {"capacity": "capacity-block", "capacityReservationIds": ["cr-0123456789abcdef0"]}
LAYOUT_1 = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
            {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}]


DIGEST = "sha256:" + "ab" * 32  # a digest of the right shape (no registry is asked)

def case(mode: str, pools: dict[str, Any], version: str | None = None, **sections: Any) -> dict[str, Any]:
    return {"mode": mode, "pools": pools, "version": version, **sections}


# slug → (stack where it fires, severity, blamed path, the nearest stack where it stays quiet)
CASES: dict[str, tuple[dict[str, Any], str, str, dict[str, Any]]] = {
    "dra-kubernetes-version": (
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"nvidia": "dra"}}}, "1.32"),
        "error", "cluster.version",
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"nvidia": "dra", "efa": "dra"}}}, "1.35")),
    "auto-mode-dra-version": (
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}}}, "1.35"),
        "error", "nodePools.p.devices.nvidia",
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}}}, "1.36")),
    "karpenter-dra-version": (
        case("karpenter", {"p": {**P5, "devices": {"nvidia": "dra"}}}, cluster={"karpenter": {"version": "1.14.1"}}),
        "error", "cluster.karpenter.version",
        case("karpenter", {"p": {**P5, **STATIC, "devices": {"nvidia": "dra"}}},
             cluster={"karpenter": {"version": "1.14.1"}})),
    "karpenter-kubernetes-compat": (
        case("karpenter", {}, "1.37", cluster={"karpenter": {"version": "1.14.1"}}),
        "error", "cluster.karpenter.version",
        case("karpenter", {}, "1.37", cluster={"karpenter": {"version": "1.15.2"}})),
    "one-manager-per-node": (
        case("karpenter", {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}},
                           "b": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}},
             helmValues={"nvidia-device-plugin": {"nodeSelector": None}}),
        "error", "helmValues.nvidia-device-plugin",
        case("karpenter", {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}},
                           "b": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}},
             helmValues={"nvidia-device-plugin": {"priorityClassName": "system-node-critical"}})),
    "device-software-unserved": (
        case("karpenter", {"b": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}},
             helmValues={"nvidia-device-plugin": {"affinity": {"nodeAffinity": {
                 "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": []}]}}}}}),
        "error", "helmValues.nvidia-device-plugin.affinity",
        case("karpenter", {"b": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}},
             helmValues={"nvidia-device-plugin": {"affinity": {"nodeAffinity": {
                 "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}}}})),
    "device-software-installable": (
        case("karpenter", {"b": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}},
             helmValues={"nvidia-device-plugin": {"tolerations": [
                 {"key": "nvidia.com/gpu", "operator": "Exists", "value": "true"}]}}),
        "error", "helmValues.nvidia-device-plugin.tolerations.0.value",
        case("karpenter", {"b": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}},
             helmValues={"nvidia-device-plugin": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}})),
    "bottlerocket-bundled-plugin": (
        case("managed-node-groups", {"p": {**P5, **STATIC, "ami": "bottlerocket", "devices": {"nvidia": "dra"},
                                           "bottlerocketSettings": {"kubelet-device-plugins": {"nvidia": {"enabled": True}}}}}),
        "error", "nodePools.p.bottlerocketSettings",
        case("managed-node-groups", {"p": {**P5, **STATIC, "ami": "bottlerocket", "devices": {"nvidia": "dra"}}})),
    "auto-mode-no-gpu-sharing": (
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 2}}}),
        "error", "nodePools.p.gpuSharing.strategy",
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "shared-claim", "claimName": "s"}}})),
    "auto-mode-no-compute-domains": (
        case("auto-mode", {"p": {**P5, "computeDomains": True}}),
        "error", "nodePools.p.computeDomains",
        case("auto-mode", {"p": P5})),
    "auto-mode-neuron-plugin-only": (
        case("auto-mode", {"p": {"instanceTypes": ["inf2.xlarge"], "devices": {"neuron": "dra"}}}),
        "error", "nodePools.p.devices.neuron",
        case("auto-mode", {"p": {"instanceTypes": ["inf2.xlarge"], "devices": {"neuron": "device-plugin"}}})),
    "dra-unsupported-instance-type": (
        case("karpenter", {"p": {"instanceTypes": ["g7e.2xlarge"], "devices": {"nvidia": "dra"}}}),
        "error", "nodePools.p.instanceTypes",
        case("karpenter", {"p": {"instanceTypes": ["g7e.2xlarge"], "devices": {"nvidia": "dra"}, **STATIC}})),
    "static-pool-device-manager-label": (
        case("auto-mode", {"p": {**P5, **STATIC,
                                 "labels": {"eks.amazonaws.com/device-manager-nvidia": "device-plugin"}}}),
        "error", "nodePools.p.labels.eks.amazonaws.com/device-manager-nvidia",
        case("auto-mode", {"p": {**P5, **STATIC, "labels": {"team": "research"}}})),
    "efa-interfaces-dynamic-aligned": (
        case("karpenter", {"p": {**P5, "efa": {"alignWith": "gpu", "networkInterfaces": LAYOUT_1}}}),
        "error", "nodePools.p.efa.networkInterfaces",
        case("karpenter", {"p": {**P5, **STATIC, "efa": {"alignWith": "gpu", "networkInterfaces": LAYOUT_1}}})),
    "efa-partial-interfaces": (
        case("karpenter", {"p": {**P5, "efa": {"networkInterfaces": LAYOUT_1}}}),
        "warning", "nodePools.p.efa.networkInterfaces",
        case("karpenter", {"p": P5})),
    "efa-static-layout-uniform": (
        case("karpenter", {"p": {"instanceTypes": ["p5.48xlarge", "p5en.48xlarge"], **STATIC}}),
        "error", "nodePools.p.instanceTypes",
        case("karpenter", {"p": {"instanceTypes": ["p5.48xlarge", "p5e.48xlarge"], **STATIC}})),
    "efa-private-subnets": (
        case("karpenter", {"p": {**P5, "subnets": "public"}}),
        "error", "nodePools.p.subnets",
        case("karpenter", {"p": {**P5, "subnets": "private"}})),
    "efa-unsupported-instance-type": (
        case("karpenter", {"p": {"instanceTypes": ["g6.8xlarge", "g6.xlarge"], "devices": {"efa": "device-plugin"}}}),
        "error", "nodePools.p.instanceTypes",
        case("karpenter", {"p": {"instanceTypes": ["g6.8xlarge", "g6.xlarge"]}})),
    "efa-alignment-shared-root": (
        case("karpenter", {"p": {"instanceTypes": ["g6e.48xlarge"], "efa": {"alignWith": "gpu"}}}),
        "error", "nodePools.p.instanceTypes",
        case("karpenter", {"p": {"instanceTypes": ["p5e.48xlarge"], "efa": {"alignWith": "gpu"}}})),
    "topology-alignment-needs-dra": (
        case("karpenter", {"p": {**P5, "efa": {"alignWith": "gpu"}, "devices": {"efa": "device-plugin"}}}),
        "error", "nodePools.p.efa.alignWith",
        case("karpenter", {"p": {**P5, "efa": {"alignWith": "gpu"}}})),
    "chart-render-refused": (
        case("karpenter", {"p": {**P5, "devices": {"nvidia": "dra"}}},
             helmValues={"nvidia-dra-driver": {"gpuResourcesEnabledOverride": False}}),
        "error", "helmValues.nvidia-dra-driver.gpuResourcesEnabledOverride",
        case("karpenter", {"p": {**P5, "devices": {"nvidia": "dra"}}},
             helmValues={"nvidia-dra-driver": {"gpuResourcesEnabledOverride": True}})),
    "chart-version-known": (
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"efa": "device-plugin"}}},
             chartVersions={"aws-efa-k8s-device-plugin": "0.5.31"}),
        "warning", "chartVersions.aws-efa-k8s-device-plugin",
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"efa": "device-plugin"}}},
             chartVersions={"aws-efa-k8s-device-plugin": "0.5.30"})),
    "karpenter-dra-gates-exclusive": (
        case("karpenter", {"p": P5}, helmValues={"karpenter": {"settings": {"ignoreDRARequests": False}}}),
        "error", "helmValues.karpenter.settings.ignoreDRARequests",
        case("karpenter", {"p": P5}, helmValues={"karpenter": {"settings": {"batchMaxDuration": "10s"}}})),
    "karpenter-dra-gates-match-drivers": (
        case("karpenter", {"p": {**P5, "devices": {"efa": "device-plugin"}}},
             helmValues={"karpenter": {"settings": {"enableDRA": True, "awsFeatureGates": None}}}),
        "error", "helmValues.karpenter.settings.enableDRA",
        case("karpenter", {"p": {**P5, "devices": {"efa": "device-plugin"}}})),
    "karpenter-shared-instance-types": (
        case("karpenter", {"a": P5, "b": {**P5, "devices": {"nvidia": "device-plugin", "efa": "device-plugin"}}}),
        "warning", "nodePools.a.instanceTypes",
        case("karpenter", {"a": P5, "b": {**P5, **STATIC, "devices": {"nvidia": "device-plugin",
                                                                       "efa": "device-plugin"}}})),
    "karpenter-enable-dra-one-driver": (
        case("karpenter", {"a": P5, "b": {"instanceTypes": ["p4d.24xlarge"], "devices": {"efa": "device-plugin"}}}),
        "warning", "nodePools.b.devices.efa",
        case("karpenter", {"a": {**P5, "devices": {"efa": "device-plugin"}},
                           "b": {"instanceTypes": ["p4d.24xlarge"], "devices": {"efa": "device-plugin"}}})),
    "karpenter-compute-domains-static-only": (
        case("karpenter", {"p": {**P5, "computeDomains": True}}),
        "error", "nodePools.p.computeDomains",
        case("karpenter", {"p": {**P5, **STATIC, "computeDomains": True}})),
    "karpenter-mig-static-only": (
        case("karpenter", {"p": {"instanceTypes": ["p4d.24xlarge"], "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}}}),
        "error", "nodePools.p.gpuSharing.strategy",
        case("karpenter", {"p": {"instanceTypes": ["p4d.24xlarge"], **STATIC,
                                 "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}}})),
    "karpenter-static-capacity-gate": (
        case("karpenter", {"p": {**P5, **STATIC}},
             helmValues={"karpenter": {"settings": {"featureGates": {"staticCapacity": False}}}}),
        "error", "helmValues.karpenter.settings.featureGates.staticCapacity",
        case("karpenter", {"p": {**P5, **STATIC}})),
    "karpenter-ami-latest": (
        case("karpenter", {"p": {**P5, **STATIC}}), "warning", "nodePools.p.amiVersion",
        case("karpenter", {"p": {**P5, **STATIC, "amiVersion": "v20251117"}})),
    "karpenter-reuse-values": (
        case("karpenter", {}, cluster={"karpenter": {"reuseValues": True}}),
        "error", "cluster.karpenter.reuseValues",
        case("karpenter", {}, cluster={"karpenter": {"reuseValues": False}})),
    "karpenter-time-slicing": (
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}}, "1.35"),
        "error", "nodePools.p.gpuSharing.strategy",
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}}, "1.35")),
    "mig-unsupported-gpu": (
        case("managed-node-groups", {"p": {"instanceTypes": ["g6e.2xlarge"], **STATIC,
                                           "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}}),
        "error", "nodePools.p.gpuSharing.strategy",
        case("managed-node-groups", {"p": {"instanceTypes": ["p4d.24xlarge"], **STATIC,
                                           "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}}})),
    "neuron-dra-version": (
        case("managed-node-groups", {"p": {"instanceTypes": ["inf2.xlarge"], **STATIC, "devices": {"neuron": "dra"}}},
             "1.33"),
        "error", "nodePools.p.devices.neuron",
        case("managed-node-groups", {"p": {"instanceTypes": ["inf2.xlarge"], **STATIC, "devices": {"neuron": "dra"}}},
             "1.34")),
    "efa-dra-kubernetes-version": (
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"efa": "dra"}}}, "1.34"),
        "error", "nodePools.p.devices.efa",
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"efa": "dra"}}}, "1.35")),
    "managed-node-group-reserved-labels": (
        case("managed-node-groups", {"p": {"instanceTypes": ["g6.xlarge"], **STATIC,
                                           "labels": {"node.kubernetes.io/role": "gpu"}}}),
        "error", "nodePools.p.labels.node.kubernetes.io/role",
        case("managed-node-groups", {"p": {"instanceTypes": ["g6.xlarge"], **STATIC,
                                           "labels": {"example.com/role": "gpu"}}})),
    "node-pool-karpenter-labels": (
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "labels": {"team.karpenter.sh/owner": "ml"}}}),
        "error", "nodePools.p.labels.team.karpenter.sh/owner",
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "labels": {"karpenter.sh/capacity-type": "spot",
                                                                             "example.com/role": "gpu"}}})),
    "device-family-absent": (
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"neuron": "dra"}}}),
        "error", "nodePools.p.devices.neuron",
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"neuron": "none"}}})),
    "device-classes-present": (
        case("auto-mode", {"p": P5}, cluster={"autoMode": {"createDeviceClasses": False}}),
        "error", "cluster.autoMode.createDeviceClasses",
        case("auto-mode", {"p": {**P5, "devices": {"nvidia": "device-plugin", "efa": "device-plugin"}}},
             cluster={"autoMode": {"createDeviceClasses": False}})),
    "gpu-sharing-needs-nvidia": (
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"},
                                 "gpuSharing": {"strategy": "shared-claim", "claimName": "s"}}}),
        "error", "nodePools.p.gpuSharing.strategy",
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "shared-claim", "claimName": "s"}}})),
    "auto-mode-ignored-settings": (
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "ami": "bottlerocket"}}),
        "warning", "nodePools.p.ami",
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"]}})),
    "placement-group-with-reservation": (
        case("managed-node-groups", {"p": {**P5, **STATIC, **CB, "availabilityZone": "us-west-2a"}}),
        "warning", "nodePools.p.placementGroup",
        case("managed-node-groups", {"p": {**P5, **STATIC, **CB, "availabilityZone": "us-west-2a",
                                           "placementGroup": False}})),
    "p6e-gb200-prerequisites": (
        case("managed-node-groups", {"p": {"instanceTypes": ["p6e-gb200.36xlarge"], **STATIC, "devices": {"nvidia": "dra"}}}),
        "error", "nodePools.p.capacity",
        case("managed-node-groups", {"p": {"instanceTypes": ["p6e-gb200.36xlarge"], **STATIC, **CB,
                                           "availabilityZone": "us-west-2a", "placementGroup": False,
                                           "computeDomains": True, "devices": {"nvidia": "dra"}}})),
    "managed-node-group-shape": (
        case("managed-node-groups", {"p": {"instanceTypes": ["g6e.xlarge", "g5g.xlarge"], **STATIC}}),
        "error", "nodePools.p.instanceTypes",
        case("managed-node-groups", {"p": {"instanceTypes": ["g6e.xlarge", "g6e.2xlarge"], **STATIC}})),
    "pool-public-subnets": (
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "subnets": "public"}},
             network={"vpcId": "vpc-00000001", "privateSubnetIds": ["subnet-00000001"]}),
        "error", "nodePools.p.subnets",
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "subnets": "public"}},
             network={"vpcId": "vpc-00000001", "privateSubnetIds": ["subnet-00000001"], "publicSubnetIds": ["subnet-00000002"]})),
    "mig-partitions": (
        case("managed-node-groups", {"p": {"instanceTypes": ["p4d.24xlarge"], **STATIC,
                                           "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}}}),
        "warning", "nodePools.p.gpuSharing.profile",
        case("managed-node-groups", {"p": {"instanceTypes": ["p5.48xlarge"], **STATIC,
                                           "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}})),
    "nvidia-dra-feature-gates": (
        case("managed-node-groups", {"p": {"instanceTypes": ["p5.48xlarge"], **STATIC,
                                           "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}},
             helmValues={"nvidia-dra-driver": {"featureGates": {"MPSSupport": True}}}),
        "error", "helmValues.nvidia-dra-driver.featureGates.MPSSupport",
        case("managed-node-groups", {"p": {"instanceTypes": ["p5.48xlarge"], **STATIC}},
             helmValues={"nvidia-dra-driver": {"featureGates": {"MPSSupport": True}}})),
    "digest-pins-installed": (
        case("karpenter", {"p": P5}, digests={"charts": {"karpenter": f"1.14.1@{DIGEST}"}}),
        "error", "digests.charts.karpenter",
        case("karpenter", {"p": P5}, digests={"charts": {"karpenter": f"1.15.0@{DIGEST}", "karpenter-crd": f"1.15.0@{DIGEST}"},
                                              "images": {"public.ecr.aws/karpenter/controller": f"1.15.0@{DIGEST}"}})),
    "digests-complete": (
        case("karpenter", {}, digests={"charts": {"karpenter": f"1.15.0@{DIGEST}"}}),
        "warning", "digests.charts.karpenter-crd",
        case("karpenter", {}, digests={"charts": {"karpenter": f"1.15.0@{DIGEST}", "karpenter-crd": f"1.15.0@{DIGEST}"},
                                              "images": {"public.ecr.aws/karpenter/controller": f"1.15.0@{DIGEST}"}})),
    "helm-values-unused": (
        case("auto-mode", {"p": P5}, helmValues={"nvidia-dra-driver": {"logVerbosity": 4}}),
        "warning", "helmValues.nvidia-dra-driver",
        case("karpenter", {"p": P5}, helmValues={"nvidia-dra-driver": {"logVerbosity": 4}})),
    "karpenter-time-slicing-shares": (
        case("karpenter", {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 4}},
                           "b": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 2}}}),
        "error", "nodePools.b.gpuSharing.replicas",
        case("karpenter", {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 4}},
                           "b": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}})),
    "dra-extended-resources": (
        case("karpenter", {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}},
                           "b": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}}),
        "warning", "cluster.draExtendedResources",
        case("karpenter", {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}},
                           "b": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}},
             cluster={"draExtendedResources": True})),
    "dra-extended-resources-off": (
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"nvidia": "dra"}}},
             cluster={"draExtendedResources": False}),
        "error", "cluster.draExtendedResources",
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"nvidia": "dra"}}},
             cluster={"draExtendedResources": True})),
    "public-endpoint-open": (
        case("auto-mode", {}, cluster={"endpoint": {"publicAccessCidrs": ["0.0.0.0/0"]}}),
        "warning", "cluster.endpoint.publicAccessCidrs",
        case("auto-mode", {}, cluster={"endpoint": {"publicAccessCidrs": ["203.0.113.0/24"]}})),
    "endpoint-reachable-from-nodes": (
        case("auto-mode", {}, cluster={"endpoint": {"privateAccess": False, "publicAccessCidrs": ["203.0.113.0/24"]}}),
        "error", "cluster.endpoint.privateAccess",
        case("auto-mode", {}, cluster={"endpoint": {"privateAccess": True, "publicAccessCidrs": ["203.0.113.0/24"]}})),
    "control-plane-logging-off": (
        case("auto-mode", {}, cluster={"logging": []}), "warning", "cluster.logging",
        case("auto-mode", {}, cluster={"logging": ["api", "audit"]})),
    "dra-time-slicing-replicas": (
        case("managed-node-groups", {"p": {"instanceTypes": ["g6.xlarge"], **STATIC, "devices": {"nvidia": "dra"},
                                           "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}}),
        "warning", "nodePools.p.gpuSharing.replicas",
        case("managed-node-groups", {"p": {"instanceTypes": ["g6.xlarge"], **STATIC, "devices": {"nvidia": "device-plugin"},
                                           "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}})),
    "pool-public-ips": (
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "subnets": "public"}}), "warning",
        "nodePools.p.subnets",
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "subnets": "private"}})),
}


def test_every_rule_has_a_case() -> None:
    """Claim rules (every rule of rules/claims.py, and family rules about claims) have their own both-ways tests
    in test_claim_rules.py; every other rule is here."""
    from test_claim_rules import CLAIM_RULES

    claim_rules = set(CLAIM_RULES)
    assert {slug for slug, r in RULES.items() if r.check.__module__ == "eks_devices.core.rules.claims"} <= claim_rules
    assert claim_rules <= set(RULES)
    assert set(CASES) == set(RULES) - claim_rules


def _plan(kwargs: dict[str, Any]):
    kwargs = dict(kwargs)
    return stacks.plan(kwargs.pop("mode"), kwargs.pop("version"), kwargs.pop("pools"), **kwargs)


@pytest.mark.parametrize("slug", sorted(CASES))
def test_rule_fires(slug: str) -> None:
    firing, severity, path, _ = CASES[slug]
    found = stacks.findings(_plan(firing), slug)
    assert found, f"{slug} did not fire"
    assert {(f.severity, f.path) for f in found} >= {(severity, path)}
    for f in found:
        assert f.message and f.fix


@pytest.mark.parametrize("slug", sorted(CASES))
def test_rule_stays_quiet(slug: str) -> None:
    *_, quiet = CASES[slug]
    assert not stacks.findings(_plan(quiet), slug)


def test_gb200_needs_an_efa_plugin_that_knows_it() -> None:
    pool = {"instanceTypes": ["p6e-gb200.36xlarge"], **STATIC, **CB, "availabilityZone": "us-west-2a",
            "placementGroup": False, "computeDomains": True, "devices": {"nvidia": "dra", "efa": "device-plugin"}}
    old = stacks.plan("managed-node-groups", pools={"p": pool},
                          chartVersions={"aws-efa-k8s-device-plugin": "v0.5.13"})
    assert [f.path for f in stacks.findings(old, "p6e-gb200-prerequisites")] == [
        "chartVersions.aws-efa-k8s-device-plugin"]
    assert not stacks.findings(stacks.plan("managed-node-groups", pools={"p": pool}), "p6e-gb200-prerequisites")


def test_dra_on_1_33_is_a_warning() -> None:
    p = stacks.plan("managed-node-groups", "1.33", {"p": {**P5, **STATIC, "devices": {"nvidia": "dra"}}})
    assert [f.severity for f in stacks.findings(p, "dra-kubernetes-version")] == ["warning"]


def test_time_slicing_needs_a_driver_with_consumable_shares() -> None:
    """dra-driver-nvidia-gpu 0.5.0 (the pin) carries the ConsumableShares gate: only the alpha warning. 0.4.1
    refuses the unknown gate, and a version the toolkit does not know to be released is not trusted with it;
    both fixes name the known releases that carry it."""
    pools = {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                   "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}}
    default = stacks.plan("karpenter", "1.36", pools)
    assert default.releases["nvidia-dra-driver"].version == "0.5.0"
    assert [f.severity for f in stacks.findings(default, "karpenter-time-slicing")] == ["warning"]
    assert default.releases["nvidia-dra-driver"].values["featureGates"]["ConsumableShares"] is True
    assert not default.errors
    old = stacks.plan("karpenter", "1.36", pools, chartVersions={"nvidia-dra-driver": "0.4.1"})
    [error] = stacks.findings(old, "karpenter-time-slicing")
    assert error.severity == "error" and "0.4.1 has no ConsumableShares feature gate" in error.message
    assert "pin chartVersions.nvidia-dra-driver to 0.5.0 " in error.fix
    unreleased = stacks.plan("karpenter", "1.36", pools, chartVersions={"nvidia-dra-driver": "0.6.0"})
    [error] = stacks.findings(unreleased, "karpenter-time-slicing")
    assert error.severity == "error" and "0.6.0 is not a release the toolkit knows" in error.message
    assert "0.6.0" not in error.fix and "0.5.0" in error.fix
    assert [f.severity for f in stacks.findings(unreleased, "chart-version-known")] == ["warning"]


def test_chart_versions_checked_against_known_releases() -> None:
    """Every chart's pin is a known release; a `v` prefix is optional as Helm reads it; an unknown chartVersions
    entry or Karpenter version is a warning whose fix lists the newest known releases and the pin."""
    from eks_devices.core.knowledge import charts
    assert all(charts.RELEASES[key].knows(chart.version) for key, chart in charts.CHARTS.items())
    efa = {"p": {**P5, **STATIC, "devices": {"efa": "device-plugin"}}}
    assert not stacks.findings(stacks.plan("managed-node-groups", pools=efa,
                                           chartVersions={"aws-efa-k8s-device-plugin": "0.5.29"}),
                               "chart-version-known")
    [finding] = stacks.findings(stacks.plan("managed-node-groups", pools=efa,
                                            chartVersions={"aws-efa-k8s-device-plugin": "v0.5.99"}),
                                "chart-version-known")
    assert "aws-efa-k8s-device-plugin v0.5.99 is not a release the toolkit knows (newest known: v0.5.30)" in (
        finding.message)
    assert "v0.5.30" in finding.fix and "the toolkit pins v0.5.30" in finding.fix
    [karpenter] = stacks.findings(stacks.plan("karpenter", cluster={"karpenter": {"version": "1.15.7"}}),
                                  "chart-version-known")
    assert karpenter.path == "cluster.karpenter.version" and "1.15.2" in karpenter.fix


def test_kubernetes_beyond_known_is_refused_at_parse() -> None:
    """A minor newer than the toolkit knows (or older than EKS offers) never reaches EKS."""
    for version in ("1.38", "1.31"):
        with pytest.raises(ConfigError) as caught:
            stacks.plan("karpenter", version)
        assert [p.path for p in caught.value.problems] == ["cluster.version"]


def test_dra_gates_overridden_to_match_are_quiet() -> None:
    """Overriding the gates with exactly what the pools need is allowed."""
    p = stacks.plan("karpenter", pools={"p": {**P5, "devices": {"efa": "device-plugin"}}},
                        helmValues={"karpenter": {"settings": {"awsFeatureGates": {"draNVIDIAGPU": True}}}})
    assert not stacks.findings(p, "karpenter-dra-gates-match-drivers")


def test_static_auto_mode_label_emptied_fires() -> None:
    p = stacks.plan("auto-mode", pools={"p": {**P5, **STATIC,
                                                  "labels": {"eks.amazonaws.com/device-manager-efa": ""}}})
    [finding] = stacks.findings(p, "static-pool-device-manager-label")
    assert "efa" in finding.path


def test_findings_sorted_errors_first() -> None:
    p = stacks.plan("karpenter", "1.32", {"p": {**P5, "devices": {"nvidia": "dra", "efa": "dra"},
                                                    "efa": {"networkInterfaces": LAYOUT_1}}})
    severities = [f.severity for f in p.findings]
    assert severities == sorted(severities, key=lambda s: s != "error")
    assert "error" in severities and "warning" in severities


def test_an_mps_claim_needs_the_mps_gate() -> None:
    mps = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
           "sharing": {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 50}}}
    claims = {"mps": {"pools": ["p"], "kind": "claim",
                      "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
                      "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": mps}}]}}
    pools = {"p": {**P5, **STATIC}}
    [finding] = stacks.findings(stacks.plan("managed-node-groups", pools=pools, claims=claims),
                                    "nvidia-dra-feature-gates")
    assert (finding.severity, finding.path) == ("error", "claims.mps.config") and "MPSSupport" in finding.fix
    gated = stacks.plan("managed-node-groups", pools=pools, claims=claims,
                            helmValues={"nvidia-dra-driver": {"featureGates": {"MPSSupport": True}}})
    assert not stacks.findings(gated, "nvidia-dra-feature-gates")


@pytest.mark.parametrize("strategy", [{"strategy": "time-slicing", "replicas": 4}, {"strategy": "mig", "profile": "1g.10gb"}])
def test_auto_mode_gpu_sharing_is_refused_on_device_plugin_pools_too(strategy: dict[str, Any]) -> None:
    """Auto Mode's built-in plugin takes no per-node config either: the setting would be silently dropped."""
    plan = stacks.plan("auto-mode", pools={"p": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "device-plugin"},
                                                 "gpuSharing": strategy}})
    (finding,) = [f for f in plan.findings if f.slug == "auto-mode-no-gpu-sharing"]
    assert finding.severity == "error" and "shared-claim" in finding.fix


@pytest.mark.parametrize(("types", "align", "apart"), [
    (["g6e.48xlarge", "g6.12xlarge", "p5.48xlarge"], "gpu", ["g6e.48xlarge", "g6.12xlarge"]),  # scraped: apart
    (["p5.48xlarge", "p4d.24xlarge", "g5.48xlarge"], "gpu", []),  # a GPU shares a root with an EFA
    (["g7e.48xlarge"], "gpu", []),  # a layout modelled from counts is not judged
    (["g6e.48xlarge"], "none", []),  # no alignment asked for
    (["g6e.xlarge"], "gpu", []),  # no EFA at all: another rule's business
])
def test_efa_alignment_needs_a_gpu_on_an_efa_root(types: list[str], align: str, apart: list[str]) -> None:
    """On g6 and g6e no GPU shares a PCIe root with an EFA (what Karpenter found on running instances), so a
    pool aligning the two there never runs an aligned Pod."""
    plan = stacks.plan("managed-node-groups", "1.36", {
        "gpu": {"replicas": 1, "instanceTypes": types, "efa": {"alignWith": align}}})
    found = stacks.findings(plan, "efa-alignment-shared-root")
    assert [f.path for f in found] == (["nodePools.gpu.instanceTypes"] if apart else [])
    if apart:
        assert found[0].severity == "error" and f"no GPU of {', '.join(apart)} shares a PCIe root" in found[0].message
