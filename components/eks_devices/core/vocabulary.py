"""The project's words as types: modes, device families and managers, provisioning, capacity, AMI
families, the other words a stack configuration accepts, and the chart keys. Every other module
takes these from here.

A type's docstring says what the word means; `- value: meaning` lines document its values. The
component package's enums are generated from these (`python -m eks_devices.package.generate`)."""

from __future__ import annotations

from typing import Literal, get_args

NAMESPACE = "eks-devices"  # the stack configuration namespace: `eks-devices:<key>`

Mode = Literal["auto-mode", "karpenter", "managed-node-groups"]
"""How the cluster gets compute.

- auto-mode: EKS Auto Mode: EKS runs the nodes and their device drivers and plugins.
- karpenter: Karpenter NodePools (dynamic or static) and a small system node group.
- managed-node-groups: EKS managed node groups.
"""
MODES: tuple[Mode, ...] = ("auto-mode", "karpenter", "managed-node-groups")
Provisioning = Literal["dynamic", "static"]
"""How a pool gets nodes.

- dynamic: Scales on pending pods.
- static: A fixed number of nodes (`replicas`).
"""
Capacity = Literal["on-demand", "spot", "reserved", "capacity-block"]
"""The EC2 capacity a pool launches on."""
RESERVED_CAPACITY: frozenset[Capacity] = frozenset({"reserved", "capacity-block"})


def reserves(capacity: str) -> bool:
    """Whether `capacity` draws on a capacity reservation or Capacity Block: capacity held for the account,
    which cannot hold two pools and which a delete releases."""
    return capacity in RESERVED_CAPACITY


AmiFamily = Literal["al2023", "bottlerocket"]
"""The node operating system."""
# `inferred` (dynamic Auto Mode pools, NVIDIA and EFA only): no device-manager label, Auto Mode picks per node
ManagerChoice = Literal["dra", "device-plugin", "none", "auto", "inferred"]
"""Which software manages a device family on a pool's nodes.

- dra: A Kubernetes DRA driver.
- device-plugin: A device plugin (extended resources such as nvidia.com/gpu).
- none: Neither: the devices are not advertised.
- auto: Let the toolkit decide, with a stated reason in the device plan.
- inferred: Dynamic Auto Mode pools only (nvidia, efa): Auto Mode picks per node from the Pods it launches it for.
"""
Family = Literal["nvidia", "efa", "neuron"]
# Device families other distributions add: each is a module of the namespace package `eks_devices_families`
# (its descriptor, `DESCRIPTOR`) with the chart descriptors of its releases in `eks_devices_charts` (`CHARTS`),
# found by name here without importing them (core/families and core/knowledge/charts load them).
FAMILY_PLUGINS, CHART_PLUGINS = "eks_devices_families", "eks_devices_charts"


class PluginError(ImportError):
    """An added family's module that is not one: what was found and what is accepted."""


def plugin_modules(namespace: str) -> tuple[str, ...]:
    """The module names in a namespace package that installed distributions contribute to (none: `()`)."""
    import importlib.util
    import pkgutil

    spec = importlib.util.find_spec(namespace)
    if spec is None or not spec.submodule_search_locations:
        return ()
    return tuple(sorted(m.name for m in pkgutil.iter_modules(spec.submodule_search_locations)))


FAMILIES: tuple[Family, ...] = ("nvidia", "efa", "neuron", *plugin_modules(FAMILY_PLUGINS))  # type: ignore[misc]
NatGateways = Literal["one-per-az", "single", "none"]
"""NAT for the private subnets of a created VPC."""
SubnetKind = Literal["private", "public"]
"""The subnets a pool's nodes launch in."""
EfaAlignment = Literal["gpu", "neuron", "none"]
"""The devices a pool's EFA claims align with on one PCIe root or device group."""
InterfaceType = Literal["interface", "efa", "efa-only"]
"""An EC2NodeClass network interface's type."""
INTERFACE, EFA_INTERFACE, EFA_ONLY = get_args(InterfaceType)
GpuSharingStrategy = Literal["none", "time-slicing", "mig", "shared-claim"]
"""How a pool's GPUs are shared."""
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
"""A Kubernetes taint effect."""
TAINT_EFFECTS: tuple[TaintEffect, ...] = get_args(TaintEffect)
NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE = TAINT_EFFECTS
LogType = Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]
"""An EKS control-plane log type."""
# Keys of per-chart settings (`helmValues`, `chartVersions`): one per Helm release the toolkit makes.
ChartKey = Literal[
    "karpenter", "nvidia-dra-driver", "nvidia-device-plugin", "aws-dranet",
    "aws-efa-k8s-device-plugin", "neuron-dra-driver", "neuron-device-plugin",
]
CHART_KEYS: tuple[str, ...] = ChartKey.__args__  # type: ignore[attr-defined]
