"""eks-devices: Pulumi components that build EKS clusters for accelerated workloads and decide,
per node pool and device family, whether a DRA driver or a device plugin manages the devices.

The public surface is below (`__all__`). Components load Pulumi on first use, so `eks_devices.core`
(and `parse` / `build`) stay importable without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name → the module that defines it
_EXPORTS = {
    "Platform": "eks_devices.platform", "PlatformArgs": "eks_devices.platform",
    "Network": "eks_devices.network", "NetworkArgs": "eks_devices.network",
    "Cluster": "eks_devices.cluster", "ClusterArgs": "eks_devices.cluster",
    "ClusterDevices": "eks_devices.cluster_devices", "ClusterDevicesArgs": "eks_devices.cluster_devices",
    "Karpenter": "eks_devices.karpenter", "KarpenterArgs": "eks_devices.karpenter",
    "NodePools": "eks_devices.node_pools", "NodePoolsArgs": "eks_devices.node_pools",
    "DeviceSoftware": "eks_devices.device_software", "DeviceSoftwareArgs": "eks_devices.device_software",
    "ClaimTemplates": "eks_devices.claims", "ClaimTemplatesArgs": "eks_devices.claims",
    "parse": "eks_devices.core.config.stack", "Spec": "eks_devices.core.config.stack",
    "ConfigError": "eks_devices.core.config.errors", "ConfigProblem": "eks_devices.core.config.errors",
    "build": "eks_devices.core.planner", "Plan": "eks_devices.core.model", "Finding": "eks_devices.core.model",
}
__all__ = [
    "ClaimTemplates",
    "ClaimTemplatesArgs",
    "Cluster",
    "ClusterArgs",
    "ClusterDevices",
    "ClusterDevicesArgs",
    "ConfigError",
    "ConfigProblem",
    "DeviceSoftware",
    "DeviceSoftwareArgs",
    "Finding",
    "Karpenter",
    "KarpenterArgs",
    "Network",
    "NetworkArgs",
    "NodePools",
    "NodePoolsArgs",
    "Plan",
    "Platform",
    "PlatformArgs",
    "Spec",
    "build",
    "parse",
]

if TYPE_CHECKING:
    from eks_devices.claims import ClaimTemplates, ClaimTemplatesArgs
    from eks_devices.cluster import Cluster, ClusterArgs
    from eks_devices.cluster_devices import ClusterDevices, ClusterDevicesArgs
    from eks_devices.core.config.errors import ConfigError, ConfigProblem
    from eks_devices.core.config.stack import Spec, parse
    from eks_devices.core.model import Finding, Plan
    from eks_devices.core.planner import build
    from eks_devices.device_software import DeviceSoftware, DeviceSoftwareArgs
    from eks_devices.karpenter import Karpenter, KarpenterArgs
    from eks_devices.network import Network, NetworkArgs
    from eks_devices.node_pools import NodePools, NodePoolsArgs
    from eks_devices.platform import Platform, PlatformArgs


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'eks_devices' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
