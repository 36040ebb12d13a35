"""Every label, annotation, tag and type-token string the toolkit writes or reads, in one place."""

from __future__ import annotations

from eks_devices.core.vocabulary import Family

TOOLKIT_PREFIX = "eks-devices.io"
POOL_LABEL = f"{TOOLKIT_PREFIX}/pool"
CLUSTER_TAG = f"{TOOLKIT_PREFIX}/cluster"
SYSTEM_LABEL = f"{TOOLKIT_PREFIX}/system"
SECURITY_GROUP_TAG = f"{TOOLKIT_PREFIX}/security-group"  # cluster | efa: what NodeClasses select each group by
MANAGED_BY = {"app.kubernetes.io/managed-by": "eks-devices"}

# NVIDIA: the device plugin's per-node config label, and the label nodeadm sets on AL2023 NVIDIA nodes.
NVIDIA_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
PLUGIN_CONFIG_PREFIX = "time-slicing-"  # + replicas: the plugin config label's value
NVIDIA_GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
CONSUMABLE_CAPACITY_ANNOTATION = "karpenter.k8s.aws/nvidia-consumable-capacity"
DEFAULT_TAINTS: dict[Family, str] = {"nvidia": "nvidia.com/gpu", "neuron": "aws.amazon.com/neuron"}

# Kubernetes and Karpenter well-known labels, and the tags subnets and security groups are found by.
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
INSTANCE_FAMILY_LABEL = "karpenter.k8s.aws/instance-family"  # a Karpenter NodePool requirement key
DISCOVERY_TAG = "karpenter.sh/discovery"

# Component type tokens: `<package>:index:<Component>`.
TYPE_PACKAGE = "eks-devices"
PLATFORM_TYPE = f"{TYPE_PACKAGE}:index:Platform"
NETWORK_TYPE = f"{TYPE_PACKAGE}:index:Network"
CLUSTER_TYPE = f"{TYPE_PACKAGE}:index:Cluster"
KARPENTER_TYPE = f"{TYPE_PACKAGE}:index:Karpenter"
NODE_POOLS_TYPE = f"{TYPE_PACKAGE}:index:NodePools"
DEVICE_SOFTWARE_TYPE = f"{TYPE_PACKAGE}:index:DeviceSoftware"
CLAIM_TEMPLATES_TYPE = f"{TYPE_PACKAGE}:index:ClaimTemplates"


def manager_label(family: Family) -> str:
    """The toolkit's device-manager label, valid in every mode (managed node groups included)."""
    return f"{TOOLKIT_PREFIX}/device-manager-{family}"


def eks_manager_label(family: Family) -> str:
    """The Auto Mode label that selects a node's device manager (NVIDIA and EFA only)."""
    return f"eks.amazonaws.com/device-manager-{family}"


def toolkit_label(key: str) -> bool:
    """Node labels the plan sets and the overlap proof relies on, so a pool's own labels may not.
    (Auto Mode's own device-manager labels have a rule of their own: static-pool-device-manager-label.)"""
    return key.startswith(f"{TOOLKIT_PREFIX}/") or key in (NVIDIA_GPU_PRESENT_LABEL, NVIDIA_PLUGIN_CONFIG_LABEL)
