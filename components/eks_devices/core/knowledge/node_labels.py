"""The labels a node really carries, beyond the ones its pool asks for, by mode and AMI.

The overlap proof places each DaemonSet by these, so an override that selects on any of them is
judged as the scheduler would judge it. Where each label comes from:

- every node: `kubernetes.io/arch` and `kubernetes.io/os` (the kubelet, from Go's GOARCH/GOOS:
  `amd64` or `arm64`, `linux`), `node.kubernetes.io/instance-type`, `topology.kubernetes.io/region`
  and `topology.kubernetes.io/zone` (the AWS cloud provider's node controller); Kubernetes
  documents all five under "Well-Known Labels, Annotations and Taints";
- Karpenter nodes (aws/karpenter-provider-aws v1.14.1 `pkg/apis/v1/labels.go` lines 148-162,
  `pkg/providers/instancetype/types.go` `computeRequirements` lines 246-290):
  `karpenter.sh/nodepool`, `karpenter.sh/capacity-type` (`on-demand`, `spot`, `reserved`),
  `karpenter.sh/registered` and `karpenter.sh/initialized`, and the instance labels
  `karpenter.k8s.aws/instance-family` and `-size` (the name split at the dot), `-category` and
  `-generation` (its `instanceTypeScheme` regexp), `-gpu-count` and `-gpu-manufacturer` on GPU
  types, `-accelerator-count` and `-accelerator-manufacturer` (`aws`) on Neuron types (CPU, memory,
  GPU- and accelerator-name labels are not modelled: the catalogue does not hold their values);
- managed node groups (EKS user guide, "Create a managed node group": the labels EKS applies):
  `eks.amazonaws.com/nodegroup` (the group's name) and `eks.amazonaws.com/capacityType`
  (`ON_DEMAND`, `SPOT`, `CAPACITY_BLOCK`);
- Auto Mode nodes (EKS user guide, "Auto Mode: node labels"): `eks.amazonaws.com/compute-type=auto`
  with Karpenter's `karpenter.sh/nodepool` and `-capacity-type` (its `eks.amazonaws.com/instance-*`
  labels are not modelled);
- AL2023 NVIDIA nodes: `nvidia.com/gpu.present=true`, which nodeadm sets on the accelerated AL2023
  AMI (Karpenter v1.15 docs `tasks/dra.md`: the NVIDIA DRA kubelet plugin's affinity relies on it);
  other AMIs get it only from the pool's labels.

Labels whose value the plan cannot know (a node group's AMI id, the node's name) are left out: an
affinity that needs them cannot be proven to admit the node.
"""

from __future__ import annotations

import re

from eks_devices.core.knowledge.catalog import InstanceType
from eks_devices.core.names import (
    ARCH_LABEL,
    COMPUTE_TYPE_LABEL,
    INSTANCE_TYPE_LABEL,
    KARPENTER_CAPACITY_TYPE_LABEL,
    KARPENTER_INITIALIZED_LABEL,
    KARPENTER_INSTANCE_PREFIX,
    KARPENTER_NODEPOOL_LABEL,
    KARPENTER_REGISTERED_LABEL,
    NODEGROUP_CAPACITY_LABEL,
    NODEGROUP_LABEL,
    NVIDIA_GPU_PRESENT_LABEL,
    OS_LABEL,
    REGION_LABEL,
    ZONE_LABEL,
)

GO_ARCH = {"x86_64": "amd64", "arm64": "arm64"}
GRAVITON = re.compile(r"^[a-z]+\d+g[a-z]*\.")  # m7g.large, c7gn.xlarge, t4g.medium, r8gd.large

# Karpenter's split of an instance type name: category letters, optional size tag, generation digits.
_SCHEME = re.compile(r"^([a-z]+)(-[0-9]+tb)?([0-9]+).*\.")


def architecture_of(instance_type: str) -> str:
    """An instance type's architecture from its name: Graviton types are arm64."""
    return "arm64" if GRAVITON.match(instance_type) else "x86_64"


def common(instance_type: str, architecture: str, region: str | None, zone: str | None) -> dict[str, str]:
    """What the kubelet and the cloud provider put on every node (`architecture` as the catalogue
    writes it: x86_64 or arm64; a region or zone not known is left out)."""
    labels = {ARCH_LABEL: GO_ARCH[architecture], OS_LABEL: "linux", INSTANCE_TYPE_LABEL: instance_type}
    if region:
        labels[REGION_LABEL] = region
    if zone:
        labels[ZONE_LABEL] = zone
    return labels


def karpenter(itype: InstanceType, node_pool: str | None, capacity_type: str) -> dict[str, str]:
    """What Karpenter puts on the nodes it launches (the NodePool's name left out when not known)."""
    labels = {KARPENTER_CAPACITY_TYPE_LABEL: capacity_type,
              KARPENTER_REGISTERED_LABEL: "true", KARPENTER_INITIALIZED_LABEL: "true",
              f"{KARPENTER_INSTANCE_PREFIX}family": itype.family,
              f"{KARPENTER_INSTANCE_PREFIX}size": itype.name.split(".", 1)[1]}
    if node_pool:
        labels[KARPENTER_NODEPOOL_LABEL] = node_pool
    if match := _SCHEME.match(itype.name):
        labels[f"{KARPENTER_INSTANCE_PREFIX}category"] = match.group(1)
        labels[f"{KARPENTER_INSTANCE_PREFIX}generation"] = match.group(3)
    if itype.gpu_count:
        labels[f"{KARPENTER_INSTANCE_PREFIX}gpu-count"] = str(itype.gpu_count)
        labels[f"{KARPENTER_INSTANCE_PREFIX}gpu-manufacturer"] = "nvidia"
    if itype.neuron_count:
        labels[f"{KARPENTER_INSTANCE_PREFIX}accelerator-count"] = str(itype.neuron_count)
        labels[f"{KARPENTER_INSTANCE_PREFIX}accelerator-manufacturer"] = "aws"
    return labels


def node_group(name: str | None, capacity_type: str) -> dict[str, str]:
    """What EKS puts on the nodes of a managed node group (the group's name left out when not known)."""
    return {**({NODEGROUP_LABEL: name} if name else {}), NODEGROUP_CAPACITY_LABEL: capacity_type}


def auto_mode(node_pool: str | None, capacity_type: str) -> dict[str, str]:
    """What Auto Mode puts on the nodes it launches, of the labels modelled here."""
    return {COMPUTE_TYPE_LABEL: "auto", KARPENTER_CAPACITY_TYPE_LABEL: capacity_type,
            **({KARPENTER_NODEPOOL_LABEL: node_pool} if node_pool else {})}


def image(ami: str, itype: InstanceType) -> dict[str, str]:
    """What the node image sets by itself: nodeadm's GPU label on AL2023 NVIDIA nodes."""
    return {NVIDIA_GPU_PRESENT_LABEL: "true"} if ami == "al2023" and itype.has_nvidia else {}
