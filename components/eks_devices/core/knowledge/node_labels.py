"""The labels a node really carries, beyond the ones its pool asks for, by mode and AMI.

The overlap proof places each DaemonSet by these, so an override that selects on any of them is
judged as the scheduler would judge it. Where each label comes from:

- every node: `kubernetes.io/arch` and `kubernetes.io/os` (the kubelet, from Go's GOARCH/GOOS:
  `amd64` or `arm64`, `linux`), `node.kubernetes.io/instance-type`, `topology.kubernetes.io/region`
  and `topology.kubernetes.io/zone` (the AWS cloud provider's node controller); Kubernetes
  documents all five under "Well-Known Labels, Annotations and Taints";
- Karpenter nodes (aws/karpenter-provider-aws `pkg/apis/v1/labels.go` lines 148-170 and
  `pkg/providers/instancetype/types.go` `computeRequirements` and `lowerKabobCase`, read at v1.14.1, the
  newest source read; the pinned 1.15.0's were not in reach): `karpenter.sh/nodepool`,
  `karpenter.sh/capacity-type` (`on-demand`, `spot`, `reserved`), `karpenter.sh/registered` and
  `karpenter.sh/initialized`, and the instance labels `karpenter.k8s.aws/instance-family` and `-size`
  (the name split at the dot), `-category` and `-generation` (its `instanceTypeScheme` regexp); on GPU
  types `-gpu-name` (EC2's GPU name in lower kebab case: `h100`, `a10g`, `rtx-pro-server-6000`),
  `-gpu-manufacturer` (EC2's manufacturer in lower kebab case), `-gpu-count` and `-gpu-memory` (MiB per GPU,
  where EC2 reports it); on Neuron types `-accelerator-name` (`trainium2`, `inferentia2`),
  `-accelerator-manufacturer` (`aws`) and `-accelerator-count` (CPU and memory labels are not modelled: the
  catalogue does not hold their values);
- managed node groups (EKS user guide, "Create a managed node group": the labels EKS applies):
  `eks.amazonaws.com/nodegroup` (the group's name) and `eks.amazonaws.com/capacityType`
  (`ON_DEMAND`, `SPOT`, `CAPACITY_BLOCK`);
- Auto Mode nodes (EKS user guide, "Create a Node Pool for EKS Auto Mode", supported labels):
  `eks.amazonaws.com/compute-type=auto` with Karpenter's `karpenter.sh/nodepool` and `-capacity-type`,
  and `eks.amazonaws.com/instance-family`, `-size`, `-category`, `-generation`, `-gpu-name`,
  `-gpu-manufacturer`, `-gpu-count`, `-gpu-memory`, valued as Karpenter's;
- AL2023 NVIDIA nodes: `names.NVIDIA_GPU_PRESENT_LABEL=true`, which nodeadm sets on the accelerated AL2023
  AMI (Karpenter v1.15 docs `tasks/dra.md`: the NVIDIA DRA kubelet plugin's affinity relies on it);
  other AMIs get it only from the pool's labels.

Labels whose value the plan cannot know (a node group's AMI id, the node's name) are left out: an
affinity that needs them cannot be proven to admit the node.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from eks_devices.core.knowledge.catalog import InstanceType
from eks_devices.core.knowledge.catalog_refresh import NVIDIA_MODEL_PREFIX
from eks_devices.core.names import (
    ARCH_LABEL,
    AUTO_MODE_INSTANCE_PREFIX,
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


def kebab(text: str) -> str:
    """Karpenter's `lowerKabobCase`: lower case, spaces as hyphens (`RTX PRO Server 6000` → `rtx-pro-server-6000`)."""
    return text.replace(" ", "-").lower()


@cache
def instance(prefix: str, itype: InstanceType) -> Mapping[str, str]:
    """The instance labels Karpenter (`karpenter.k8s.aws/instance-`) and Auto Mode
    (`eks.amazonaws.com/instance-`) derive from the instance type: name parts and GPUs. Made once per
    prefix and type, read-only: every node of a type carries the same."""
    labels = {f"{prefix}family": itype.family, f"{prefix}size": itype.name.split(".", 1)[1]}
    if match := _SCHEME.match(itype.name):
        labels[f"{prefix}category"] = match.group(1)
        labels[f"{prefix}generation"] = match.group(3)
    if itype.gpu_count and itype.gpu_model:
        labels[f"{prefix}gpu-name"] = kebab(itype.gpu_model.removeprefix(NVIDIA_MODEL_PREFIX))
        labels[f"{prefix}gpu-manufacturer"] = kebab(NVIDIA_MODEL_PREFIX.strip())  # the catalogue's GPUs are NVIDIA's
        labels[f"{prefix}gpu-count"] = str(itype.gpu_count)
        if itype.gpu_memory_mib:
            labels[f"{prefix}gpu-memory"] = str(itype.gpu_memory_mib)
    return MappingProxyType(labels)


def karpenter(itype: InstanceType, node_pool: str | None, capacity_type: str) -> dict[str, str]:
    """What Karpenter puts on the nodes it launches (the NodePool's name left out when not known)."""
    labels = {KARPENTER_CAPACITY_TYPE_LABEL: capacity_type,
              KARPENTER_REGISTERED_LABEL: "true", KARPENTER_INITIALIZED_LABEL: "true",
              **instance(KARPENTER_INSTANCE_PREFIX, itype)}
    if node_pool:
        labels[KARPENTER_NODEPOOL_LABEL] = node_pool
    if itype.neuron_count and itype.neuron_model:
        labels[f"{KARPENTER_INSTANCE_PREFIX}accelerator-name"] = kebab(itype.neuron_model)
        labels[f"{KARPENTER_INSTANCE_PREFIX}accelerator-manufacturer"] = "aws"
        labels[f"{KARPENTER_INSTANCE_PREFIX}accelerator-count"] = str(itype.neuron_count)
    return labels


def node_group(name: str | None, capacity_type: str) -> dict[str, str]:
    """What EKS puts on the nodes of a managed node group (the group's name left out when not known)."""
    return {**({NODEGROUP_LABEL: name} if name else {}), NODEGROUP_CAPACITY_LABEL: capacity_type}


def auto_mode(itype: InstanceType, node_pool: str | None, capacity_type: str) -> dict[str, str]:
    """What Auto Mode puts on the nodes it launches, of the labels modelled here."""
    return {COMPUTE_TYPE_LABEL: "auto", KARPENTER_CAPACITY_TYPE_LABEL: capacity_type,
            **instance(AUTO_MODE_INSTANCE_PREFIX, itype),
            **({KARPENTER_NODEPOOL_LABEL: node_pool} if node_pool else {})}


def image(ami: str, itype: InstanceType) -> dict[str, str]:
    """What the node image sets by itself: nodeadm's GPU label on AL2023 NVIDIA nodes."""
    return {NVIDIA_GPU_PRESENT_LABEL: "true"} if ami == "al2023" and itype.has_nvidia else {}
