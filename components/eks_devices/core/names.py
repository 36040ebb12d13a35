"""Every label, annotation, tag and type-token string the toolkit writes or reads, in one place."""

from __future__ import annotations

from eks_devices.core.vocabulary import Family

TOOLKIT_PREFIX = "eks-devices.io"
POOL_LABEL = f"{TOOLKIT_PREFIX}/pool"
CLUSTER_TAG = f"{TOOLKIT_PREFIX}/cluster"
SYSTEM_LABEL = f"{TOOLKIT_PREFIX}/system"
SECURITY_GROUP_TAG = f"{TOOLKIT_PREFIX}/security-group"  # what NodeClasses select each group by: its role
# The roles: EKS's cluster group, the Network's EFA group. The EFA group's resource names end in its role word too:
# changing that word renames (and so replaces) every deployed EFA security group.
CLUSTER_SECURITY_GROUP, EFA_SECURITY_GROUP = "cluster", "efa"
MANAGED_BY = {"app.kubernetes.io/managed-by": "eks-devices"}

# NVIDIA: the device plugin's per-node config label, and the label nodeadm sets on AL2023 NVIDIA nodes.
NVIDIA_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
PLUGIN_CONFIG_PREFIX = "time-slicing-"  # + replicas: the plugin config label's value
NVIDIA_GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
CONSUMABLE_CAPACITY_ANNOTATION = "karpenter.k8s.aws/nvidia-consumable-capacity"
# on aws-node's pod template once the VPC CNI runs with its own Pod Identity role (rolls it onto that role)
AWS_NODE_IDENTITY_ANNOTATION = "eks-devices.io/aws-credentials"

# Kubernetes and Karpenter well-known labels, and the tags subnets and security groups are found by.
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
INSTANCE_FAMILY_LABEL = "karpenter.k8s.aws/instance-family"  # a Karpenter NodePool requirement key
DISCOVERY_TAG = "karpenter.sh/discovery"

# Labels nodes carry without the toolkit asking (knowledge/node_labels.py says who sets each), and
# the ones the device charts' default affinities select on (NFD's NVIDIA PCI / CPU-vendor labels,
# eks-charts' Auto Mode exclusion).
ARCH_LABEL = "kubernetes.io/arch"
OS_LABEL = "kubernetes.io/os"
REGION_LABEL = "topology.kubernetes.io/region"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
# the Karpenter chart's service account: named after the release `karpenter` (aws/karpenter-provider-aws v1.15.0
# charts/karpenter/templates/_helpers.tpl `karpenter.serviceAccountName`); its Pod Identity association names it
KARPENTER_SERVICE_ACCOUNT = "karpenter"
KARPENTER_NODEPOOL_LABEL = "karpenter.sh/nodepool"
KARPENTER_CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
KARPENTER_REGISTERED_LABEL = "karpenter.sh/registered"
KARPENTER_INITIALIZED_LABEL = "karpenter.sh/initialized"
KARPENTER_INSTANCE_PREFIX = "karpenter.k8s.aws/instance-"
AUTO_MODE_INSTANCE_PREFIX = "eks.amazonaws.com/instance-"
NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
NODEGROUP_CAPACITY_LABEL = "eks.amazonaws.com/capacityType"
COMPUTE_TYPE_LABEL = "eks.amazonaws.com/compute-type"
NFD_PREFIX = "feature.node.kubernetes.io/"
# Taints the node lifecycle controller sets from node conditions (Kubernetes' well-known taints).
NODE_CONDITION_TAINT_PREFIX = "node.kubernetes.io/"

# Kubernetes' name grammars (kubernetes/apimachinery pkg/util/validation/validation.go), unanchored: a DNS-1123
# label (63 characters at most) and subdomain (253), and a qualified name's name part or a label value (63);
# callers check the lengths. The `_63` forms carry the bound in the pattern, for schemas without maxLength.
DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = rf"{DNS_LABEL}(\.{DNS_LABEL})*"
QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
DNS_LABEL_63 = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
QUALIFIED_NAME_63 = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_KEY = rf"({DNS_SUBDOMAIN}/)?{QUALIFIED_NAME}"  # the prefix at most 253, the name 63
# DRA (resource.k8s.io): a driver name is a DNS subdomain in any letter case, at most 63 characters (checked
# like a CSI driver name); a device attribute's fully qualified name is such a domain, a slash and a C
# identifier of at most 32 characters (`pcieRoot`, `devicegroup4_id`; `pcie-root` is refused).
DRIVER_NAME = r"[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*"
ATTRIBUTE_NAME = rf"(?=[^/]{{1,63}}/){DRIVER_NAME}/[A-Za-z_][A-Za-z0-9_]{{0,31}}"

# API versions of the node-pool objects (Karpenter v1.15 CRDs; EKS Auto Mode's NodeClass)
NODE_POOL_API = "karpenter.sh/v1"
AUTO_MODE_NODE_CLASS_API = "eks.amazonaws.com/v1"
KARPENTER_NODE_CLASS_API = "karpenter.k8s.aws/v1"

# Component type tokens: `<package>:index:<Component>`.
TYPE_PACKAGE = "eks-devices"
PLATFORM_TYPE = f"{TYPE_PACKAGE}:index:Platform"
NETWORK_TYPE = f"{TYPE_PACKAGE}:index:Network"
CLUSTER_TYPE = f"{TYPE_PACKAGE}:index:Cluster"
KARPENTER_TYPE = f"{TYPE_PACKAGE}:index:Karpenter"
NODE_POOLS_TYPE = f"{TYPE_PACKAGE}:index:NodePools"
DEVICE_SOFTWARE_TYPE = f"{TYPE_PACKAGE}:index:DeviceSoftware"
CLAIM_TEMPLATES_TYPE = f"{TYPE_PACKAGE}:index:ClaimTemplates"
# pulumi-eks's package: its remote components' type tokens are `eks:index:<Component>`.
PULUMI_EKS_PACKAGE = "eks"
# Bottlerocket's settings for the NVIDIA device plugin its NVIDIA variants bundle (bottlerocket.dev,
# API settings `settings.kubelet-device-plugins`): the switch, GPU sharing and MIG partitioning.
BOTTLEROCKET_NVIDIA_PLUGIN = "kubelet-device-plugins.nvidia"
BOTTLEROCKET_NVIDIA_ENABLED = f"{BOTTLEROCKET_NVIDIA_PLUGIN}.enabled"
BOTTLEROCKET_NVIDIA_PARTITIONING = f"{BOTTLEROCKET_NVIDIA_PLUGIN}.device-partitioning-strategy"


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

RESOURCE_API_V1 = "resource.k8s.io/v1"  # the DRA API group's GA version (Kubernetes 1.34)
