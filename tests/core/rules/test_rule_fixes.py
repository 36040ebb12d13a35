"""Every finding's fix can be applied: for each rule whose fix is a config change, the change (a patch
written here, as the fix text says it) applied to a stack where the rule fires silences the rule and
leaves no error at all. Rules whose fix is not a config change are listed with the reason. A rule in
neither table fails the test, so a new rule cannot be skipped silently."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from eks_devices.core.derive import scope
from eks_devices.core.manifests import software
from eks_devices.core.rules import RULES
from support import stacks

STATIC = {"provisioning": "static", "replicas": 1}
P5 = {"instanceTypes": ["p5.48xlarge"]}
TRN2 = {"instanceTypes": ["trn2.48xlarge"]}
CB = {"capacity": "capacity-block", "capacityReservationIds": ["cr-0123456789abcdef0"],
      "availabilityZone": "us-west-2a", "placementGroup": False}
LAYOUT_1 = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
            {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}]
K115 = {"karpenter": {"version": "1.15.0"}}


def existing(version: str = "1.15.0", **settings: Any) -> dict[str, Any]:
    """The cluster section of a cluster that runs its own Karpenter release with `settings`."""
    return {"existing": True, "karpenter": {"version": version, "settings": settings}}
INFERRED = {"nvidia": "inferred", "efa": "inferred"}  # dynamic Auto Mode pools only


class _Delete:
    """Patch value: remove the key."""


DELETE = _Delete()


@dataclass(frozen=True)
class Replace:
    """Patch value: replace a mapping instead of merging into it."""

    value: Any


DIGEST = "sha256:" + "ab" * 32  # a digest of the right shape (no registry is asked)

def case(mode: str, pools: dict[str, Any], version: str | None = None, **sections: Any) -> dict[str, Any]:
    return {"mode": mode, "pools": pools, "version": version, **sections}


def apply(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge `patch` onto a copy of `base`; `DELETE` removes a key, `Replace` sets it whole."""
    out = copy.deepcopy(base)
    for key, value in patch.items():
        if value is DELETE:
            out.pop(key, None)
        elif isinstance(value, Replace):
            out[key] = copy.deepcopy(value.value)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = apply(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def pool(name: str, **changes: Any) -> dict[str, Any]:
    return {"pools": {name: changes}}


# slug → [(a stack where the rule fires, the patch its fix describes)]
FIXES: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {
    "dra-kubernetes-version": [(
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"nvidia": "dra"}}}, "1.32"),
        {"version": "1.34"})],
    "auto-mode-dra-version": [
        (case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}}}, "1.35"),
         {"version": "1.36"}),
        (case("auto-mode", {"p": {**P5, "devices": INFERRED}}, "1.35"), pool("p", devices={"nvidia": "device-plugin",
                                                                                          "efa": "device-plugin"})),
    ],
    "karpenter-dra-version": [
        (case("karpenter", {"p": {**P5, "devices": {"nvidia": "dra"}}}, cluster={"karpenter": {"version": "1.14.1"}}),
         {"cluster": K115}),
        (case("karpenter", {"p": {**P5, "devices": {"nvidia": "dra"}}},
              cluster=existing("1.14.1", awsFeatureGates={"draNVIDIAGPU": True})),
         {"cluster": {"karpenter": {"version": "1.15.0", "settings": Replace({"enableDRA": True})}}})],
    "karpenter-kubernetes-compat": [(
        case("karpenter", {}, "1.37", cluster={"karpenter": {"version": "1.14.1"}}), {"cluster": K115})],
    "one-manager-per-node": [
        (case("karpenter", {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}},
                            "b": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}},
              helmValues={"nvidia-device-plugin": {"nodeSelector": None}}),
         {"helmValues": {"nvidia-device-plugin": DELETE}}),
        (case("auto-mode", {"p": {**P5, **STATIC, "labels": {"eks.amazonaws.com/device-manager-efa": "device-plugin"}}}),
         pool("p", labels=Replace({}))),
        # an unscoped plugin that tolerates everything lands on a pool that chose no NVIDIA manager and on
        # the system nodes
        (case("managed-node-groups", {"gpu": {"instanceTypes": ["g6e.xlarge"], **STATIC,
                                              "devices": {"nvidia": "device-plugin"}},
                                      "trn": {"instanceTypes": ["trn1.32xlarge"], **STATIC,
                                              "devices": {"neuron": "device-plugin"}}},
              helmValues={"nvidia-device-plugin": {"nodeSelector": None, "affinity": None,
                                                   "tolerations": [{"operator": "Exists"}]}}),
         {"helmValues": {"nvidia-device-plugin": DELETE}}),
        # a label on an inferred pool picks one manager for every node: the toolkit sets none there
        (case("auto-mode", {"p": {**P5, "devices": INFERRED,
                                  "labels": {"eks.amazonaws.com/device-manager-nvidia": "device-plugin"}}}),
         pool("p", labels=Replace({}))),
    ],
    "device-software-unserved": [
        # the Neuron chart keeps its DRA driver off inf* types: nothing would serve the devices
        (case("managed-node-groups", {"p": {"instanceTypes": ["inf2.xlarge"], **STATIC, "devices": {"neuron": "dra"}}}),
         pool("p", devices={"neuron": "device-plugin"})),
        # an empty node selector term matches no node
        (case("karpenter", {"gpu": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}}},
              helmValues={"nvidia-device-plugin": {"affinity": {"nodeAffinity": {
                  "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": []}]}}}}}),
         {"helmValues": {"nvidia-device-plugin": DELETE}}),
        # a Karpenter instance-family key compared with instance type names: fix the override's values
        (case("karpenter", {"efa": {**P5, **STATIC, "devices": {"efa": "device-plugin"}}},
              helmValues={"aws-efa-k8s-device-plugin": {
                  "supportedInstanceLabels": {"keys": ["karpenter.k8s.aws/instance-family"]}}}),
         {"helmValues": {"aws-efa-k8s-device-plugin": {"supportedInstanceLabels": {"values": ["p5"]}}}}),
        # ... or drop the override's key, where the finding points
        (case("karpenter", {"efa": {**P5, **STATIC, "devices": {"efa": "device-plugin"}}},
              helmValues={"aws-efa-k8s-device-plugin": {
                  "supportedInstanceLabels": {"keys": ["karpenter.k8s.aws/instance-family"]}}}),
         {"helmValues": {"aws-efa-k8s-device-plugin": {"supportedInstanceLabels": {"keys": DELETE}}}}),
        # Bottlerocket's bundled plugin is the pool's device plugin: turning it off leaves the GPUs unserved
        (case("managed-node-groups", {"p": {"instanceTypes": ["g6e.xlarge"], **STATIC, "ami": "bottlerocket",
                                            "devices": {"nvidia": "device-plugin"}, "bottlerocketSettings": {
                                                "kubelet-device-plugins": {"nvidia": {"enabled": False}}}}}),
         pool("p", bottlerocketSettings=DELETE)),
    ],
    "device-software-installable": [
        (case("karpenter", {"gpu": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}}},
              helmValues={"nvidia-device-plugin": {"tolerations": [
                  {"key": "nvidia.com/gpu", "operator": "Exists", "value": "true"}]}}),
         {"helmValues": {"nvidia-device-plugin": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}}}),
        (case("managed-node-groups", {"efa": {**P5, **STATIC, "devices": {"efa": "device-plugin"}}},
              helmValues={"aws-efa-k8s-device-plugin": {"supportedInstanceLabels": {"keys": []}}}),
         {"helmValues": {"aws-efa-k8s-device-plugin": {"supportedInstanceLabels": {"keys": DELETE}}}}),
    ],
    "dra-extended-resources": [
        (case("karpenter", {"dra": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}},
                            "plugin": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}}, "1.36"),
         {"cluster": {"draExtendedResources": True}}),
        # Auto Mode: the toolkit's own class can leave the extended resource out; an inferred pool takes
        # plugin-style Pods too
        (case("auto-mode", {"dra": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}},
                            "any": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "inferred"}}}, "1.36"),
         {"cluster": {"draExtendedResources": False}}),
    ],
    "dra-extended-resources-off": [(
        case("karpenter", {"dra": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}}}, "1.36",
             cluster={"draExtendedResources": False}),
        {"cluster": {"draExtendedResources": True}})],
    "bottlerocket-bundled-plugin": [(
        case("managed-node-groups", {"p": {**P5, **STATIC, "ami": "bottlerocket", "devices": {"nvidia": "dra"},
                                           "bottlerocketSettings": {"kubelet-device-plugins": {"nvidia": {"enabled": True}}}}}),
        pool("p", bottlerocketSettings=DELETE))],
    "auto-mode-no-gpu-sharing": [(
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 2}}}),
        pool("p", gpuSharing=Replace({"strategy": "shared-claim", "claimName": "s"})))],
    "auto-mode-no-compute-domains": [(
        case("auto-mode", {"p": {**P5, "computeDomains": True}}),
        {"mode": "karpenter", **pool("p", **STATIC)})],
    "auto-mode-neuron-plugin-only": [(
        case("auto-mode", {"p": {"instanceTypes": ["inf2.xlarge"], "devices": {"neuron": "dra"}}}),
        pool("p", devices={"neuron": "device-plugin"}))],
    "dra-unsupported-instance-type": [(
        case("karpenter", {"p": {"instanceTypes": ["g7e.2xlarge"], "devices": {"nvidia": "dra"}}}),
        pool("p", **STATIC))],
    "static-pool-device-manager-label": [
        (case("auto-mode", {"p": {**P5, **STATIC, "labels": {"eks.amazonaws.com/device-manager-nvidia": "device-plugin"}}}),
         pool("p", labels=Replace({}))),
        (case("auto-mode", {"p": {**P5, "labels": {"eks.amazonaws.com/device-manager-nvidia": "device-plugin"}}}),
         pool("p", labels=Replace({}))),
        (case("auto-mode", {"p": {**P5, "devices": INFERRED,
                                  "labels": {"eks.amazonaws.com/device-manager-efa": "dra"}}}),
         pool("p", labels=Replace({}))),
    ],
    "efa-interfaces-dynamic-aligned": [(
        case("karpenter", {"p": {**P5, "efa": {"alignWith": "gpu", "networkInterfaces": LAYOUT_1}}}),
        pool("p", efa={"networkInterfaces": DELETE}))],
    "efa-partial-interfaces": [(
        case("karpenter", {"p": {**P5, "efa": {"networkInterfaces": LAYOUT_1}}}),
        pool("p", efa={"networkInterfaces": DELETE}))],
    "efa-static-layout-uniform": [
        (case("karpenter", {"p": {"instanceTypes": ["p5.48xlarge", "p5en.48xlarge"], **STATIC}}),
         pool("p", instanceTypes=["p5.48xlarge"])),
        (case("managed-node-groups", {"p": {"instanceTypes": ["p5.48xlarge", "p5en.48xlarge"], **STATIC}}),
         pool("p", efa={"networkInterfaces": [
             LAYOUT_1[0], *({"networkCardIndex": c, "deviceIndex": 1 if c == 0 else 0, "interfaceType": "efa-only"}
                            for c in range(16))]})),
    ],
    "efa-private-subnets": [(case("karpenter", {"p": {**P5, "subnets": "public"}}), pool("p", subnets="private"))],
    "efa-unsupported-instance-type": [
        (case("karpenter", {"p": {"instanceTypes": ["g6.8xlarge", "g6.xlarge"], "devices": {"efa": "device-plugin"}}}),
         pool("p", devices={"efa": "none"})),
        (case("auto-mode", {"p": {"instanceTypes": ["g6.8xlarge", "g6.xlarge"], "devices": {"efa": "inferred"}}}),
         pool("p", instanceTypes=["g6.8xlarge"])),
    ],
    "efa-alignment-shared-root": [
        (case("karpenter", {"p": {"instanceTypes": ["g6e.48xlarge", "p5.48xlarge"], "efa": {"alignWith": "gpu"}}}),
         pool("p", instanceTypes=Replace(["p5.48xlarge"]))),
        (case("karpenter", {"p": {"instanceTypes": ["g6e.12xlarge"], "efa": {"alignWith": "gpu"}}}),
         pool("p", efa={"alignWith": DELETE})),
    ],
    "topology-alignment-needs-dra": [
        (case("karpenter", {"p": {**P5, "efa": {"alignWith": "gpu"}, "devices": {"efa": "device-plugin"}}}),
         pool("p", devices={"efa": "dra"})),
        # Auto Mode keeps Neuron on the plugin: the only fix is to drop the alignment
        (case("auto-mode", {"p": {**TRN2, **STATIC, "efa": {"alignWith": "neuron"}}}),
         pool("p", efa={"alignWith": DELETE})),
        # Karpenter has no DRA metadata for trn2: DRA needs a static pool
        (case("karpenter", {"p": {**TRN2, "efa": {"alignWith": "neuron"}}}),
         pool("p", **STATIC, devices={"efa": "dra", "neuron": "dra"})),
    ],
    "chart-render-refused": [
        (case("karpenter", {"p": {**P5, "devices": {"nvidia": "dra"}}},
              helmValues={"nvidia-dra-driver": {"gpuResourcesEnabledOverride": False}}),
         {"helmValues": {"nvidia-dra-driver": {"gpuResourcesEnabledOverride": DELETE}}}),
        (case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"},
                                  "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}},
              helmValues={"nvidia-device-plugin": {"config": {"name": "my-configs"}}}),
         {"helmValues": {"nvidia-device-plugin": {"config": {"name": DELETE}}}}),
    ],
    "chart-version-known": [
        (case("karpenter", {"p": {**P5, "devices": {"nvidia": "dra"}}}, chartVersions={"nvidia-dra-driver": "0.4.7"}),
         {"chartVersions": {"nvidia-dra-driver": DELETE}}),
        (case("karpenter", {"p": P5}, cluster={"karpenter": {"version": "1.15.9"}}),
         {"cluster": {"karpenter": {"version": "1.15.2"}}}),
    ],
    "karpenter-dra-gates-exclusive": [
        (case("karpenter", {"p": P5}, helmValues={"karpenter": {"settings": {"ignoreDRARequests": False}}}),
         {"helmValues": {"karpenter": {"settings": {"ignoreDRARequests": DELETE}}}}),
        (case("karpenter", {"p": P5}, cluster=existing(enableDRA=True, ignoreDRARequests=False)),
         {"cluster": {"karpenter": {"settings": {"ignoreDRARequests": DELETE}}}})],
    "karpenter-dra-gates-match-drivers": [
        (case("karpenter", {"p": {**P5, "devices": {"efa": "device-plugin"}}},
              helmValues={"karpenter": {"settings": {"enableDRA": True, "awsFeatureGates": None}}}),
         {"helmValues": {"karpenter": {"settings": {"enableDRA": DELETE, "awsFeatureGates": DELETE}}}}),
        # the cluster's own release, without the DRA gates its dynamic DRA pools need
        (case("karpenter", {"p": P5}, cluster=existing()), {"cluster": {"karpenter": {"settings": {"enableDRA": True}}}}),
        (case("karpenter", {"p": {**P5, "devices": {"efa": "device-plugin"}}}, cluster=existing(enableDRA=False)),
         {"cluster": {"karpenter": {"settings": Replace({"awsFeatureGates": {"draNVIDIAGPU": True}})}}}),
        # one single gate set, both drivers run: the other gate beside it (enableDRA with it fails the render)
        (case("karpenter", {"p": P5}, cluster=existing(awsFeatureGates={"draNVIDIAGPU": True})),
         {"cluster": {"karpenter": {"settings": {"awsFeatureGates": {"draEFA": True}}}}})],
    "karpenter-shared-instance-types": [(
        case("karpenter", {"a": P5, "b": {**P5, "devices": {"nvidia": "device-plugin", "efa": "device-plugin"}}}),
        pool("b", instanceTypes=["g6e.xlarge"], devices=Replace({"nvidia": "device-plugin"})))],
    "karpenter-enable-dra-one-driver": [(
        case("karpenter", {"a": P5, "b": {"instanceTypes": ["p4d.24xlarge"], "devices": {"efa": "device-plugin"}}}),
        pool("b", devices={"efa": "dra"}))],
    "karpenter-compute-domains-static-only": [(
        case("karpenter", {"p": {**P5, "computeDomains": True}}), pool("p", **STATIC))],
    "karpenter-mig-static-only": [(
        case("karpenter", {"p": {"instanceTypes": ["p5.48xlarge"], "gpuSharing": {"strategy": "mig",
                                                                                  "profile": "1g.10gb"}}}),
        pool("p", **STATIC))],
    "karpenter-static-capacity-gate": [
        (case("karpenter", {"p": {**P5, **STATIC}},
              helmValues={"karpenter": {"settings": {"featureGates": {"staticCapacity": False}}}}),
         {"helmValues": {"karpenter": {"settings": {"featureGates": {"staticCapacity": DELETE}}}}}),
        (case("karpenter", {"p": {**P5, **STATIC, "amiVersion": "v20251117"}}, cluster=existing()),
         {"cluster": {"karpenter": {"settings": {"featureGates": {"staticCapacity": True}}}}})],
    "karpenter-ami-latest": [
        (case("karpenter", {"p": {**P5, **STATIC}}), pool("p", amiVersion="v20251117")),
        (case("karpenter", {"t": {**TRN2, **STATIC, **CB, "ami": "bottlerocket"}}),
         {"cluster": {"amiVersion": "v1.49.0"}})],
    "karpenter-reuse-values": [(
        case("karpenter", {}, cluster={"karpenter": {"reuseValues": True}}),
        {"cluster": {"karpenter": {"reuseValues": False}}})],
    "karpenter-time-slicing": [
        (case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                  "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}}, "1.35"),
         pool("p", devices={"nvidia": "device-plugin"})),
        # ... or the versions it needs, named (not "upgrade")
        (case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                  "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}}, "1.35"),
         {"version": "1.36"}),
    ],
    "mig-unsupported-gpu": [(
        case("managed-node-groups", {"p": {"instanceTypes": ["g6e.2xlarge"], **STATIC,
                                           "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}}),
        pool("p", instanceTypes=["p5.48xlarge"]))],
    "neuron-dra-version": [(
        case("managed-node-groups", {"p": {"instanceTypes": ["trn1.32xlarge"], **STATIC, "devices": {"neuron": "dra"}}},
             "1.33"),
        {"version": "1.34"})],
    "efa-dra-kubernetes-version": [(
        case("managed-node-groups", {"p": {**P5, **STATIC, "devices": {"efa": "dra"}}}, "1.34"),
        {"version": "1.35"})],
    "managed-node-group-reserved-labels": [(
        case("managed-node-groups", {"p": {"instanceTypes": ["g6.xlarge"], **STATIC,
                                           "labels": {"node.kubernetes.io/role": "gpu"}}}),
        pool("p", labels=Replace({"example.com/role": "gpu"})))],
    "node-pool-karpenter-labels": [(
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "labels": {"team.karpenter.sh/owner": "ml"}}}),
        pool("p", labels=Replace({"team.example.com/owner": "ml"})))],
    "device-family-absent": [
        (case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"neuron": "dra"}}}),
         pool("p", devices={"neuron": "auto"})),
        (case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"efa": "inferred"}}}),
         pool("p", devices={"efa": "none"})),
    ],
    "device-classes-present": [
        (case("auto-mode", {"p": P5}, cluster={"autoMode": {"createDeviceClasses": False}}),
         {"cluster": {"autoMode": {"createDeviceClasses": True}}}),
        (case("auto-mode", {"p": {**P5, "devices": INFERRED}}, cluster={"autoMode": {"createDeviceClasses": False}}),
         {"cluster": {"autoMode": {"createDeviceClasses": True}}}),
    ],
    "gpu-sharing-needs-nvidia": [
        (case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"},
                                  "gpuSharing": {"strategy": "shared-claim", "claimName": "s"}}}),
         pool("p", devices={"nvidia": "dra"})),
        (case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"},
                                  "gpuSharing": {"strategy": "shared-claim", "claimName": "s"}}}),
         pool("p", devices={"nvidia": "inferred"})),
        (case("managed-node-groups", {"p": {"instanceTypes": ["p5.48xlarge"], **STATIC,
                                            "devices": {"nvidia": "device-plugin"}, "computeDomains": True}}),
         pool("p", devices={"nvidia": "dra"})),
    ],
    "auto-mode-ignored-settings": [(
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "ami": "bottlerocket"}}), pool("p", ami=DELETE))],
    "placement-group-with-reservation": [(
        case("managed-node-groups", {"p": {**P5, **STATIC, **CB, "placementGroup": True}}),
        pool("p", placementGroup=False))],
    "p6e-gb200-prerequisites": [(
        case("managed-node-groups", {"p": {"instanceTypes": ["p6e-gb200.36xlarge"], **STATIC,
                                           "devices": {"nvidia": "dra"}}}),
        pool("p", **CB, computeDomains=True))],
    "managed-node-group-shape": [(
        case("managed-node-groups", {"p": {"instanceTypes": ["g6e.xlarge", "g5g.xlarge"], **STATIC}}),
        pool("p", instanceTypes=["g6e.xlarge"]))],
    "pool-public-subnets": [(
        case("karpenter", {"p": {"instanceTypes": ["g6.xlarge"], "subnets": "public"}},
             network={"vpcId": "vpc-00000001", "privateSubnetIds": ["subnet-00000001"]}),
        {"network": {"publicSubnetIds": ["subnet-00000002"]}})],
    "mig-partitions": [(
        case("managed-node-groups", {"p": {"instanceTypes": ["p4d.24xlarge"], **STATIC,
                                           "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}}}),
        pool("p", instanceTypes=["p5.48xlarge"], gpuSharing={"profile": "1g.10gb"})), (
        # Bottlerocket's bundled plugin: its own MIG manager partitions at boot when its settings ask
        case("managed-node-groups", {"p": {"instanceTypes": ["p4d.24xlarge"], **STATIC, "ami": "bottlerocket",
                                           "devices": {"nvidia": "device-plugin"},
                                           "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}}}),
        pool("p", bottlerocketSettings={"kubelet-device-plugins": {"nvidia": {
            "device-partitioning-strategy": "mig", "mig": {"profile": {"a100.40gb": "1g.5gb"}}}}}))],
    "nvidia-dra-feature-gates": [(
        case("managed-node-groups", {"p": {"instanceTypes": ["p5.48xlarge"], **STATIC,
                                           "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}},
             helmValues={"nvidia-dra-driver": {"featureGates": {"MPSSupport": True}}}),
        {"helmValues": {"nvidia-dra-driver": {"featureGates": {"MPSSupport": False}}}})],
    "digest-pins-installed": [
        (case("karpenter", {"p": P5}, digests={"charts": {"karpenter": f"1.14.1@{DIGEST}"}}),
         {"digests": {"charts": {"karpenter": f"1.15.0@{DIGEST}"}}}),
        (case("karpenter", {"p": P5}, digests={"images": {"public.ecr.aws/karpenter/controller": f"1.15.0@{DIGEST}"}},
              helmValues={"karpenter": {"controller": {"image": {"tag": "1.15.0"}}}}),
         {"helmValues": {"karpenter": DELETE}}),
    ],
    "digests-complete": [(
        case("karpenter", {}, digests={"charts": {"karpenter": f"1.15.0@{DIGEST}"}}),
        {"digests": {"charts": {"karpenter-crd": f"1.15.0@{DIGEST}"},
                     "images": {"public.ecr.aws/karpenter/controller": f"1.15.0@{DIGEST}"}}})],
    "helm-values-unused": [(
        case("auto-mode", {"p": P5}, helmValues={"nvidia-dra-driver": {"logVerbosity": 4}}),
        {"helmValues": {"nvidia-dra-driver": DELETE}})],
    "karpenter-time-slicing-shares": [(
        case("karpenter", {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 4}},
                           "b": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"},
                                 "gpuSharing": {"strategy": "time-slicing", "replicas": 2}}},
             cluster=K115, chartVersions={"nvidia-dra-driver": "0.5.0"}),
        pool("b", gpuSharing={"replicas": 4}))],
    "public-endpoint-open": [(
        case("auto-mode", {}, cluster={"endpoint": {"publicAccessCidrs": ["0.0.0.0/0"]}}),
        {"cluster": {"endpoint": {"publicAccessCidrs": ["203.0.113.0/24"]}}})],
    "endpoint-reachable-from-nodes": [
        (case("auto-mode", {}, cluster={"endpoint": {"privateAccess": False, "publicAccessCidrs": ["203.0.113.0/24"]}}),
         {"cluster": {"endpoint": {"privateAccess": True}}}),
        (case("karpenter", {}, cluster={"endpoint": {"privateAccess": False, "publicAccessCidrs": ["203.0.113.7/32"]}},
              network={"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": ["subnet-0123456789abcdef0"]}),
         {"cluster": {"endpoint": {"privateAccess": True}}})],
    "control-plane-logging-off": [(
        case("auto-mode", {}, cluster={"logging": []}), {"cluster": {"logging": ["api", "audit", "authenticator"]}})],
    "dra-time-slicing-replicas": [(
        case("managed-node-groups", {"p": {"instanceTypes": ["g6.xlarge"], **STATIC, "devices": {"nvidia": "dra"},
                                           "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}}),
        pool("p", devices={"nvidia": "device-plugin"}))],
    "pool-public-ips": [(
        case("auto-mode", {"p": {"instanceTypes": ["g6.xlarge"], "subnets": "public"}}), pool("p", subnets="private"))],
    # --- claims ---
    "efa-not-shareable": [(
        case("managed-node-groups", {"p5": {**P5, **STATIC}},
             claims={"x": {"pools": ["p5"], "kind": "claim", "gpus": {}, "efa": {"count": 4}, "alignWith": "gpu"}}),
        {"claims": {"x": {"kind": "template"}}})],
    "extended-resource-not-dra": [(
        case("karpenter", {"gpu-dra": P5, "gpu-plugin": {"instanceTypes": ["g6e.xlarge"],
                                                         "devices": {"nvidia": "device-plugin"}}},
             cluster=K115, claims={"x": {"pools": ["gpu-dra"], "kind": "extended-resource",
                                         "extendedResources": {"nvidia.com/gpu": 1}}}),
        {"claims": {"x": {"pools": ["gpu-plugin"]}}})],
    "claim-device-class-missing": [
        (case("auto-mode", {"p5": {**P5, **STATIC}}, claims={"x": {"pools": ["p5"], "requests": [
            {"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com"}}]}}),
         {"claims": {"x": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}),
        # Auto Mode with the toolkit's classes turned off: the pool runs DRA, the classes are what is missing
        (case("auto-mode", {"p5": {**P5, **STATIC}}, cluster={"autoMode": {"createDeviceClasses": False}},
              claims={"x": {"pools": ["p5"], "gpus": {}}}),
         {"cluster": {"autoMode": {"createDeviceClasses": True}}}),
        # an EFA claim where every pool runs the EFA device plugin: only the EFA DRA driver brings the class
        (case("karpenter", {"p5": {**P5, "devices": {"efa": "device-plugin"}}}, cluster=K115,
              claims={"x": {"pools": ["p5"], "efa": {"count": 1}}}),
         pool("p5", devices={"efa": "dra"})),
        # Neuron (+ EFA) in Auto Mode: no Neuron DRA at all, the device plugin's extended resource is the way
        (case("auto-mode", {"trn": {**TRN2, **STATIC}},
              claims={"x": {"pools": ["trn"], "neurons": {"count": 1}, "efa": {"count": 1}, "alignWith": "neuron"}}),
         {"claims": {"x": {"kind": "extended-resource", "extendedResources": {"aws.amazon.com/neuron": 1},
                           "neurons": DELETE, "efa": DELETE, "alignWith": DELETE}}}),
        # a Neuron claim on Inferentia: the Neuron DRA driver serves Trainium only
        (case("managed-node-groups", {"p": {"instanceTypes": ["inf2.xlarge"], **STATIC}},
              claims={"x": {"pools": ["p"], "neurons": {"count": 1}}}),
         pool("p", instanceTypes=["trn1.32xlarge"])),
        # a ComputeDomain channel on a pool that does not turn ComputeDomains on (Karpenter: static pools only)
        (case("karpenter", {"p5": P5}, cluster=K115, claims={"x": {"pools": ["p5"], "computeDomainChannel": {}}}),
         pool("p5", **STATIC, computeDomains=True)),
        # an EFA request on a pool without EFA hardware
        (case("karpenter", {"g6": {"instanceTypes": ["g6.xlarge"]}}, cluster=K115,
              claims={"x": {"pools": ["g6"], "gpus": {}, "efa": {"count": 1}, "alignWith": "gpu"}}),
         {"claims": {"x": {"efa": DELETE, "alignWith": DELETE}}}),
        # ... and on 1.34, where aws-dranet cannot run, the version is the fix
        (case("managed-node-groups", {"p5": {**P5, **STATIC}}, "1.34", claims={"x": {"pools": ["p5"], "efa": {"count": 1}}}),
         {"version": "1.35"}),
    ],
    "claim-unsatisfiable": [
        (case("managed-node-groups", {"l40s": {"instanceTypes": ["g6e.48xlarge"], **STATIC}},
              claims={"x": {"pools": ["l40s"], "gpus": {"model": "H100"}}}),
         {"claims": {"x": {"gpus": {"model": "L40S"}}}}),
        # a MIG claim on a pool whose GPUs are whole: the pool's gpuSharing partitions them
        (case("managed-node-groups", {"p5": {**P5, **STATIC}}, claims={"x": {"pools": ["p5"], "mig": {"profile": "1g.10gb"}}}),
         pool("p5", gpuSharing={"strategy": "mig", "profile": "1g.10gb"})),
        # ... or into another profile: either side can change
        (case("managed-node-groups", {"p5": {**P5, **STATIC, "gpuSharing": {"strategy": "mig", "profile": "2g.20gb"}}},
              claims={"x": {"pools": ["p5"], "mig": {"profile": "1g.10gb"}}}),
         {"claims": {"x": {"mig": {"profile": "2g.20gb"}}}}),
        # one target pool runs the EFA DRA driver, the other the plugin: the blocked pool's fix is its manager
        (case("karpenter", {"dra": P5, "plugin": {**P5, "devices": {"efa": "device-plugin"}}}, cluster=K115,
              claims={"x": {"pools": ["dra", "plugin"], "efa": {"count": 1}}}),
         pool("plugin", devices={"efa": "dra"})),
    ],
    "claim-alignment-needs-dra": [
        (case("karpenter", {"p5": {**P5, "devices": {"efa": "device-plugin"}}}, cluster=K115,
              claims={"x": {"pools": ["p5"], "gpus": {}, "efa": {"count": 1}, "alignWith": "gpu"}}),
         pool("p5", devices={"efa": "dra"})),
        # 1.34: aws-dranet needs 1.35, so `auto` put EFA on the plugin
        (case("managed-node-groups", {"p5": {**P5, **STATIC}}, "1.34",
              claims={"x": {"pools": ["p5"], "gpus": {}, "efa": {"count": 1}, "alignWith": "gpu"}}),
         {"version": "1.35"}),
        # Auto Mode before 1.36 has no DRA at all
        (case("auto-mode", {"p5": {**P5, **STATIC}}, "1.35",
              claims={"x": {"pools": ["p5"], "gpus": {}, "efa": {"count": 1}, "alignWith": "gpu"}}),
         {"version": "1.36"}),
    ],
    "karpenter-mig-claim-static-only": [(
        case("karpenter", {"p5": P5}, cluster=K115, claims={"x": {"pools": ["p5"], "mig": {"profile": "1g.10gb"}}}),
        pool("p5", **STATIC, gpuSharing={"strategy": "mig", "profile": "1g.10gb"}))],
    "karpenter-claim-selector-attributes": [(
        case("karpenter", {"gpu-dra": P5}, cluster=K115, claims={"x": {"pools": ["gpu-dra"], "requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {
                "expression": "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))"}}]}}]}}),
        {"claims": {"x": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "selectors": [
            {"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"}}]}}]}}})],
    "karpenter-claim-not-launched": [(
        case("karpenter", {"p5": P5}, cluster=K115, claims={"x": {
            "pools": ["p5"], "requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}],
            "constraints": [{"requests": ["gpus"], "distinctAttribute": "resource.kubernetes.io/pcieRoot"}]}}),
        {"claims": {"x": {"constraints": DELETE}}})],
    "claim-distinct-attribute-version": [(
        case("managed-node-groups", {"p5": {**P5, **STATIC}}, "1.35", claims={"x": {
            "pools": ["p5"], "requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}],
            "constraints": [{"requests": ["gpus"], "distinctAttribute": "resource.kubernetes.io/pcieRoot"}]}}),
        {"version": "1.36"}), (
        case("managed-node-groups", {"p5": {**P5, **STATIC}}, "1.35", claims={"x": {
            "pools": ["p5"], "requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}],
            "constraints": [{"requests": ["gpus"], "distinctAttribute": "resource.kubernetes.io/pcieRoot"}]}}),
        {"claims": {"x": {"constraints": DELETE}}})],
}

# The alternatives fixes state as an edit at the finding's own path, where the case above edits elsewhere:
# the user who goes to the path and applies what the fix says there clears the finding too.
AT_PATH: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {
    "auto-mode-dra-version": [(FIXES["auto-mode-dra-version"][0][0], pool("p", devices={"nvidia": "device-plugin"}))],
    "efa-dra-kubernetes-version": [(FIXES["efa-dra-kubernetes-version"][0][0], pool("p", devices={"efa": "device-plugin"}))],
    "neuron-dra-version": [(FIXES["neuron-dra-version"][0][0], pool("p", devices={"neuron": "device-plugin"}))],
    "dra-time-slicing-replicas": [(FIXES["dra-time-slicing-replicas"][0][0], pool("p", gpuSharing=DELETE))],
    "dra-unsupported-instance-type": [(
        case("karpenter", {"p": {"instanceTypes": ["g7e.2xlarge", "p5.48xlarge"], "devices": {"nvidia": "dra"}}}),
        pool("p", instanceTypes=["p5.48xlarge"]))],
    "efa-unsupported-instance-type": [(FIXES["efa-unsupported-instance-type"][0][0], pool("p", instanceTypes=["g6.8xlarge"]))],
    "gpu-sharing-needs-nvidia": [(FIXES["gpu-sharing-needs-nvidia"][0][0],
                                  pool("p", gpuSharing=Replace({"strategy": "time-slicing", "replicas": 2})))],
    "mig-unsupported-gpu": [(FIXES["mig-unsupported-gpu"][0][0],
                             pool("p", gpuSharing=Replace({"strategy": "time-slicing", "replicas": 2})))],
    "pool-public-subnets": [(FIXES["pool-public-subnets"][0][0], pool("p", subnets="private"))],
    "topology-alignment-needs-dra": [(FIXES["topology-alignment-needs-dra"][0][0], pool("p", efa={"alignWith": DELETE}))],
    "efa-alignment-shared-root": [(FIXES["efa-alignment-shared-root"][1][0], pool("p", instanceTypes=["p5.48xlarge"]))],
    # before 1.36 nothing asks for distinct values: the constraint goes (matchAttribute asks for one value, the
    # opposite, and cannot be allocated here: it was the former fix's advice)
    "claim-distinct-attribute-version": [(FIXES["claim-distinct-attribute-version"][0][0], {"claims": {"x": {
        "constraints": DELETE}}})],
}


@pytest.mark.parametrize(("slug", "index"), [(s, i) for s, cases in sorted(AT_PATH.items()) for i in range(len(cases))])
def test_the_fix_applied_at_the_finding_s_path_clears_it(slug: str, index: int) -> None:
    """(c) at the path: the edit the fix states for the key the finding names clears the rule, no error left."""
    firing, patch = AT_PATH[slug][index]
    found = stacks.findings(_plan(firing), slug)
    assert found, f"{slug} does not fire on its case"
    assert all(any(e == f.path or e.startswith(f"{f.path}.") or f.path.startswith(f"{e}.") for e in edited(patch))
               for f in found), (f"the patch {edited(patch)} is not at {[f.path for f in found]}")
    after = _plan(apply(firing, patch))
    assert not stacks.findings(after, slug), f"{slug} still fires after its fix at the path"
    assert not after.errors, [(f.slug, f.path, f.message) for f in after.errors]


# (slug, case) → (the severity the rule's findings keep after the fix, the words of the fix that say so): a fix
# that trades an error for a warning it states
TRADES: dict[tuple[str, int], tuple[str, str]] = {
    ("karpenter-time-slicing", 1): ("warning", "alpha feature, which a warning of this rule says"),
}

# slug → why its fix is not a change to the stack's configuration
NOT_CONFIG: dict[str, str] = {
    "claim-fit-undetermined": "it reports a limit of the offline model (a search that gave up, or a PCIe layout "
                              "modelled rather than published), not a fault of the stack: the claim may be right, "
                              "and the fix is to check it on a real node",
}


NAMED = ("pools", "claims")  # their next key is a pool's or claim's name, not a setting


def settings(patch: dict[str, Any], parent: str | None = None, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The setting paths a patch changes, without pool and claim names: ("devices", "efa"), ("version",)."""
    out: list[tuple[str, ...]] = []
    for key, value in patch.items():
        here = path if parent in NAMED or key in NAMED else (*path, key)
        if isinstance(value, dict) and value:
            out += settings(value, key, here)
        else:
            out.append(here)
    return out


def _named_in(fix: str, setting: tuple[str, ...]) -> bool:
    """The fix names the setting: its key, or for a helm value or a version the section it is in."""
    return any(k in fix for k in setting[-1:]) or (
        len(setting) > 1 and setting[0] in ("helmValues", "chartVersions") and setting[0] in fix)


def _plan(kwargs: dict[str, Any]):
    kwargs = dict(kwargs)
    return stacks.plan(kwargs.pop("mode"), kwargs.pop("version"), kwargs.pop("pools"), **kwargs)


def test_every_rule_has_an_applicable_fix_or_a_reason() -> None:
    assert not set(FIXES) & set(NOT_CONFIG)
    missing = sorted(set(RULES) - set(FIXES) - set(NOT_CONFIG))
    assert not missing, f"rules without a fix case here or a reason in NOT_CONFIG: {missing}"
    assert not (set(FIXES) | set(NOT_CONFIG)) - set(RULES), "cases for rules that no longer exist"
    assert all(FIXES.values())
    assert all(s in FIXES and i < len(FIXES[s]) for s, i in TRADES), "trades of cases that do not exist"


@pytest.mark.parametrize(("slug", "index"), [(s, i) for s, cases in sorted(FIXES.items()) for i in range(len(cases))])
def test_applying_the_fix_silences_the_rule_and_raises_no_error(slug: str, index: int) -> None:
    firing, patch = FIXES[slug][index]
    before = _plan(firing)
    found = stacks.findings(before, slug)
    assert found, f"{slug} does not fire on its case"
    fixes = " ".join(f.fix for f in found)
    unnamed = [".".join(p) for p in settings(patch) if p and not _named_in(fixes, p)]
    assert not unnamed, f"the patch changes {unnamed}, which the fix of {slug} does not name: {fixes}"
    after = _plan(apply(firing, patch))
    left = stacks.findings(after, slug)
    if (slug, index) in TRADES:
        severity, says = TRADES[slug, index]
        assert left and {f.severity for f in left} == {severity} and says in fixes, (left, fixes)
    else:
        assert not left, f"{slug} still fires after its fix"
    errors = [(f.slug, f.path, f.message) for f in after.errors]
    assert not errors, f"the fix for {slug} leaves errors: {errors}"


# --- every finding points at the key to edit ------------------------------------------------------

SECTIONS = {"pools": "nodePools", "version": "cluster.version", "mode": "cluster.mode"}  # case words → config paths


def edited(patch: dict[str, Any], path: tuple[str, ...] = ()) -> list[str]:
    """The config paths (`nodePools.p.devices.efa`) a patch sets, replaces or removes."""
    out: list[str] = []
    for key, value in patch.items():
        here = (*path, SECTIONS.get(key, key) if not path else key)
        if isinstance(value, dict) and value:
            out += edited(value, here)
        else:
            out.append(".".join(here))
    return out


def resolve(node: Any, path: str) -> bool:
    """Whether a config path names a key of the configuration: dots separate keys, a number indexes a list,
    and a key may hold dots itself (a label, an image: `labels.eks.amazonaws.com/device-manager-efa`)."""
    if not path:
        return True
    if isinstance(node, list):
        index, _, rest = path.partition(".")
        return index.isdigit() and int(index) < len(node) and resolve(node[int(index)], rest)
    if not isinstance(node, dict):
        return False
    return any(path == key or (path.startswith(f"{key}.") and resolve(node[key], path[len(key) + 1:]))
               for key in map(str, node))


def config_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A case as its stack file's `eks-devices:` sections, by section name."""
    kwargs = dict(kwargs)
    cfg = stacks.config(kwargs.pop("mode"), kwargs.pop("version"), kwargs.pop("pools"), **kwargs)
    return {key.removeprefix("eks-devices:"): value for key, value in cfg.items()}


def test_the_resolver_reads_lists_and_keys_with_dots() -> None:
    cfg = {"nodePools": {"p": {"labels": {"eks.amazonaws.com/device-manager-efa": "dra"}, "instanceTypes": ["a", "b"]}}}
    assert resolve(cfg, "nodePools.p.labels.eks.amazonaws.com/device-manager-efa")
    assert resolve(cfg, "nodePools.p.instanceTypes.1")
    assert not resolve(cfg, "nodePools.p.instanceTypes.2") and not resolve(cfg, "nodePools.p.labels.eks")
    assert edited({"pools": {"p": {"devices": {"efa": "dra"}}}, "version": "1.35"}) == [
        "nodePools.p.devices.efa", "cluster.version"]


@pytest.mark.parametrize(("slug", "index"), [(s, i) for s, cases in sorted(FIXES.items()) for i in range(len(cases))])
def test_the_finding_points_at_the_key_to_edit(slug: str, index: int) -> None:
    """(b) of every case: the path is a key of the stack, or the key its fix tells the user to add; and it is
    no coarser than the edit the fix makes (a finding at `claims.x` whose fix edits `claims.x.requests` sends
    the user to the wrong place). A fix whose edit lies elsewhere (another manager, a version) names it."""
    firing, patch = FIXES[slug][index]
    cfg, edits = config_of(firing), edited(patch)
    for found in stacks.findings(_plan(firing), slug):
        setting = ".".join(found.path.split(".")[-2:])  # `devices.efa`: how a fix names a key to add
        assert resolve(cfg, found.path) or found.path in edits or setting in found.fix, (
            f"{slug} blames {found.path}, which is not in the stack and which its fix does not add: {found.fix}")
        coarse = [e for e in edits if e.startswith(f"{found.path}.")]
        assert not coarse, f"{slug} blames {found.path}, but its fix edits {coarse} below it"


# --- fixes that name what applies where -----------------------------------------------------------

def _one(case_: dict[str, Any], slug: str):
    [found] = stacks.findings(_plan(case_), slug)
    return found


def test_auto_mode_overlap_fix_names_the_labels_not_helm_values() -> None:
    """Auto Mode installs no charts: helmValues cannot be the fix there."""
    firing, _ = FIXES["one-manager-per-node"][1]
    found = _one(firing, "one-manager-per-node")
    assert "helmValues" not in found.fix and "labels" in found.fix
    assert found.path == "nodePools.p.labels.eks.amazonaws.com/device-manager-efa"


def test_a_dynamic_pool_s_contradicting_label_is_not_described_as_static() -> None:
    firing, _ = FIXES["static-pool-device-manager-label"][1]
    found = _one(firing, "static-pool-device-manager-label")
    assert "static" not in found.message and "every node of the pool" in found.message
    static, _ = FIXES["static-pool-device-manager-label"][0]
    assert "a static pool without it runs the device plugin" in _one(static, "static-pool-device-manager-label").message


@pytest.mark.parametrize(("index", "says", "never"), [
    (1, "remove efa.alignWith", "devices.neuron"),  # Auto Mode: Neuron stays on the plugin
    (2, "provisioning: static", "or auto on a version"),  # dynamic Karpenter trn2: no DRA metadata
])
def test_alignment_fix_suggests_only_what_the_pool_can_have(index: int, says: str, never: str) -> None:
    firing, _ = FIXES["topology-alignment-needs-dra"][index]
    found = _one(firing, "topology-alignment-needs-dra")
    assert says in found.fix and never not in found.fix


# --- Karpenter pools sharing instance types (issue 13 item 8) -------------------------------------

def test_shared_instance_types_name_the_node_selector_dra_pods_need() -> None:
    firing, _ = FIXES["karpenter-shared-instance-types"][0]
    found = stacks.findings(_plan(firing), "karpenter-shared-instance-types")
    assert {f.severity for f in found} == {"warning"}
    assert {f.path for f in found} == {"nodePools.a.instanceTypes"}
    fixes = " ".join(f.fix for f in found)
    assert "eks-devices.io/device-manager-nvidia: dra" in fixes and "eks-devices.io/device-manager-efa: dra" in fixes
    assert "b (p5.48xlarge)" in found[0].message


@pytest.mark.parametrize("other", [
    {**P5, **STATIC, "devices": {"nvidia": "device-plugin"}},  # static: Karpenter never launches it for a claim
    {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}},  # no type in common
    P5,  # same managers
])
def test_shared_instance_types_quiet_otherwise(other: dict[str, Any]) -> None:
    assert not stacks.findings(_plan(case("karpenter", {"a": P5, "b": other})), "karpenter-shared-instance-types")


def test_enable_dra_warns_only_when_derived_and_a_pool_runs_one_driver_on_types_with_both() -> None:
    firing, _ = FIXES["karpenter-enable-dra-one-driver"][0]
    plan = _plan(firing)
    assert plan.karpenter is not None and plan.karpenter.dra_settings == {"enableDRA": True}
    found = _one(firing, "karpenter-enable-dra-one-driver")
    assert "p4d.24xlarge" in found.message and "eks-devices.io/device-manager-efa: dra" in found.fix
    # single gates (only NVIDIA DRA anywhere): Karpenter assumes no EFA DRA devices
    single = case("karpenter", {"b": {"instanceTypes": ["p4d.24xlarge"], "devices": {"efa": "device-plugin"}}})
    assert _plan(single).karpenter.dra_settings == {"awsFeatureGates": {"draNVIDIAGPU": True}}
    assert not stacks.findings(_plan(single), "karpenter-enable-dra-one-driver")
    # an NVIDIA-only DRA pool on a type without EFA offers nothing Karpenter would misjudge
    no_efa = case("karpenter", {"a": P5, "b": {"instanceTypes": ["g6e.xlarge"]}})
    assert not stacks.findings(_plan(no_efa), "karpenter-enable-dra-one-driver")


# --- fixes of the overlap proof's second half (issue 18) ----------------------------------------

def test_unserved_fix_names_only_what_applies_to_the_gap() -> None:
    """No override to drop where the chart's own scope or the pool's Bottlerocket settings leave it out."""
    chart, _ = FIXES["device-software-unserved"][0]
    found = _one(chart, "device-software-unserved")
    assert "helmValues" not in found.fix and "nodePools.p.devices.neuron: device-plugin" in found.fix
    assert "inf2.xlarge" in found.fix
    override, _ = FIXES["device-software-unserved"][1]
    assert "helmValues.nvidia-device-plugin" in _one(override, "device-software-unserved").fix
    bottlerocket, _ = FIXES["device-software-unserved"][4]
    found = _one(bottlerocket, "device-software-unserved")
    assert "helmValues" not in found.fix and "nodePools.p.bottlerocketSettings" in found.fix


def test_an_override_that_places_nothing_is_not_blamed_for_the_chart_s_own_gap() -> None:
    """The Neuron chart keeps its DRA driver off inf* types whatever the override says: an override of
    other values is not the key to edit (dropping it would change nothing), the pool's manager is."""
    chart, _ = FIXES["device-software-unserved"][0]
    found = _one(apply(chart, {"helmValues": {"neuron-dra-driver": {"logLevel": "debug"}}}), "device-software-unserved")
    assert found.path == "nodePools.p.devices.neuron" and "helmValues" not in found.fix
    assert "nodePools.p.devices.neuron: device-plugin" in found.fix


def test_installable_fix_names_the_field_to_fix() -> None:
    firing, _ = FIXES["device-software-installable"][0]
    found = _one(firing, "device-software-installable")
    assert "helmValues.nvidia-device-plugin.tolerations.0.value" in found.fix


@pytest.mark.parametrize(("slug", "index"), [("one-manager-per-node", 3), ("static-pool-device-manager-label", 2)])
def test_label_fixes_on_an_inferred_pool_do_not_promise_a_label(slug: str, index: int) -> None:
    """An inferred family gets no device-manager label from the toolkit: Auto Mode decides per node."""
    firing, _ = FIXES[slug][index]
    fixes = " ".join(f.fix for f in stacks.findings(_plan(firing), slug))
    assert "inferred" in fixes and "sets them from" not in fixes and "sets it from" not in fixes


def test_unserved_bottlerocket_points_at_the_setting_its_fix_names() -> None:
    """The bundled plugin turned off is the cause: the path is the pool's bottlerocketSettings."""
    bottlerocket, _ = FIXES["device-software-unserved"][4]
    found = _one(bottlerocket, "device-software-unserved")
    assert found.path == "nodePools.p.bottlerocketSettings" and found.path in found.fix


def test_a_chart_that_keeps_off_an_instance_type_is_unserved_not_an_overlap() -> None:
    """Outside Auto Mode an overlap always names what runs: a pool whose nodes run nothing for the
    family is reported once, by device-software-unserved (one-manager-per-node's former branch for it
    was unreachable)."""
    chart, _ = FIXES["device-software-unserved"][0]
    plan = _plan(chart)
    assert not stacks.findings(plan, "one-manager-per-node")
    assert "does not run on inf2.xlarge" in _one(chart, "device-software-unserved").fix
    checked = 0
    for cases in FIXES.values():
        for firing, _ in cases:
            if firing["mode"] != "auto-mode":
                found = scope.overlaps(_plan(firing))
                checked += len(found)
                assert all(o.running for o in found), found
    assert checked > 5


SHARED = {"instanceTypes": ["g6.xlarge"], "gpuSharing": {"strategy": "shared-claim", "claimName": "s"}}


def test_a_shared_claim_takes_an_auto_mode_pool_that_infers_the_manager() -> None:
    """Auto Mode launches a DRA node for the Pods of a shared claim: no finding, and the claim is created."""
    plan = stacks.plan("auto-mode", pools={"p": {**SHARED, "devices": {"nvidia": "inferred"}}})
    assert not stacks.findings(plan, "gpu-sharing-needs-nvidia") and not plan.errors
    assert [c["metadata"]["name"] for c in software.shared_claims(plan)] == ["s"]
    plugin = stacks.plan("auto-mode", pools={"p": {**SHARED, "devices": {"nvidia": "device-plugin"}}})
    assert "inferred" in _one_of(plugin, "gpu-sharing-needs-nvidia").fix
    assert software.shared_claims(plugin) == []


def test_compute_domains_in_auto_mode_are_left_to_their_own_rule() -> None:
    """Auto Mode has no ComputeDomains with any manager: one finding, whose fix leaves Auto Mode."""
    plan = stacks.plan("auto-mode", pools={"p": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "inferred"},
                                                 "computeDomains": True}})
    assert [f.slug for f in plan.errors] == ["auto-mode-no-compute-domains"]
    firing, _ = FIXES["gpu-sharing-needs-nvidia"][2]
    assert _one(firing, "gpu-sharing-needs-nvidia").path == "nodePools.p.computeDomains"


def _one_of(plan, slug: str):
    [found] = stacks.findings(plan, slug)
    return found
