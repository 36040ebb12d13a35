"""The physical names and values a pool takes in AWS and Karpenter: its NodePool / EC2NodeClass and node
group names, its EKS AMI type and its capacity type in each API.

One home for both sides that need them: the manifests build the objects under these names, and the
overlap proof (derive/scope) models the labels those objects give their nodes; derive never reads the
manifests.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache

from eks_devices.core.families import DESCRIPTORS
from eks_devices.core.model import PoolPlan
from eks_devices.core.vocabulary import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE

# Karpenter's `karpenter.sh/capacity-type` values: reserved covers both On-Demand Capacity Reservations and
# Capacity Blocks (karpenter-provider-aws v1.15.0 website/content/en/docs/concepts/nodepools.md).
KARPENTER_CAPACITY_TYPES = {"on-demand": "on-demand", "spot": "spot", "reserved": "reserved",
                            "capacity-block": "reserved"}
# EKS node groups' `capacityType` (EKS API reference, CreateNodegroup): a reservation is On-Demand capacity.
NODE_GROUP_CAPACITY_TYPES = {"on-demand": "ON_DEMAND", "spot": "SPOT", "reserved": "ON_DEMAND",
                             "capacity-block": "CAPACITY_BLOCK"}
AMI_ARCHITECTURES = {"x86_64": "x86_64", "arm64": "ARM_64"}
# EKS node groups' taint effects (EKS API reference, Taint) for Kubernetes', and back
NODE_GROUP_TAINT_EFFECTS = {NO_SCHEDULE: "NO_SCHEDULE", NO_EXECUTE: "NO_EXECUTE",
                            PREFER_NO_SCHEDULE: "PREFER_NO_SCHEDULE"}
KUBERNETES_TAINT_EFFECTS = {eks: kubernetes for kubernetes, eks in NODE_GROUP_TAINT_EFFECTS.items()}


def digest(*parts: object) -> str:
    """A short, stable digest of plain values (used to give physical names an identity)."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def ami_type(pool: PoolPlan) -> str:
    """EKS AMI type from AMI family × architecture × accelerator. The accelerator follows the
    hardware (its drivers are needed whichever manager runs it). Bottlerocket's standard variants
    carry the Neuron driver; only NVIDIA has its own Bottlerocket variant (the families' descriptors say)."""
    arch = AMI_ARCHITECTURES[pool.architecture]
    present = [d for d in DESCRIPTORS if pool.has_hardware(d.name)]  # in the vocabulary's order: NVIDIA first
    if pool.ami == "bottlerocket":
        variant = next((d.bottlerocket_variant for d in present if d.bottlerocket_variant), None)
        return f"BOTTLEROCKET_{arch}_{variant}" if variant else f"BOTTLEROCKET_{arch}"
    return f"AL2023_{arch}_{next((d.al2023_variant for d in present if d.al2023_variant), 'STANDARD')}"


def node_group_name(pool: PoolPlan) -> str:
    """The pool name plus a digest of everything EKS cannot change on a node group in place
    (device managers, whose labels EKS *would* update in place, included). Any such change gets a
    new name, so the new group can exist beside the old one until it is deleted."""
    fixed = (pool.identity, pool.instance_types, pool.capacity, ami_type(pool), pool.config.subnets,
             pool.config.availability_zone)
    return f"{pool.stem}-{digest(*fixed)}"


def node_pool_name(pool: PoolPlan) -> str:
    """The NodePool's (and Karpenter EC2NodeClass's) name: the pool name plus a digest of what a
    NodePool cannot change in place. A node's device manager is fixed for its life, and the API
    rejects moving a NodePool between static and dynamic; a new name lets Pulumi create the
    replacement before deleting the old pool (or after, for reserved capacity)."""
    return _stem_and_digest(pool.stem, pool.identity, pool.provisioning)


@cache
def _stem_and_digest(stem: str, *fixed: str) -> str:
    """`stem-<digest of fixed>`, made once per distinct value: a plan asks for each NodePool's name once
    per node and per rule that names it."""
    return f"{stem}-{digest(*fixed)}"
