"""Node-pool Kubernetes objects as plain dicts: the Auto Mode `NodeClass`, the Karpenter
`EC2NodeClass`, and the `karpenter.sh/v1` `NodePool` that both modes use.

Pure: the NodePools component applies these objects with pulumi-kubernetes and `render` writes
them as manifests, so the two always agree. Nothing here decides a device manager: labels,
taints, Bottlerocket settings, interface layouts and NodeClass annotations come from the plan
as they are; this module only translates them into each CRD's shape (Karpenter v1.15 docs;
EKS User Guide, Auto Mode pages and "Manage hardware devices on Amazon EKS").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eks_devices.core.config.bottlerocket import bottlerocket_toml
from eks_devices.core.config.stack import FAMILIES
from eks_devices.core.families import EFA
from eks_devices.core.knowledge import amis, catalog
from eks_devices.core.model import Plan, PoolPlan
from eks_devices.core.names import (
    ARCH_LABEL,
    AUTO_MODE_NODE_CLASS_API,
    CLUSTER_SECURITY_GROUP,
    CLUSTER_TAG,
    DISCOVERY_TAG,
    EFA_SECURITY_GROUP,
    HOSTNAME_LABEL,
    INSTANCE_TYPE_LABEL,
    KARPENTER_CAPACITY_TYPE_LABEL,
    KARPENTER_NODE_CLASS_API,
    KARPENTER_NODEPOOL_LABEL,
    MANAGED_BY,
    NODE_POOL_API,
    OS_LABEL,
    POOL_LABEL,
    SECURITY_GROUP_TAG,
    ZONE_LABEL,
    manager_label,
)
from eks_devices.core.naming import KARPENTER_CAPACITY_TYPES, digest, node_pool_name
from eks_devices.core.vocabulary import reserves

NODE_CLASS_KINDS = {"auto-mode": (AUTO_MODE_NODE_CLASS_API, "NodeClass"),
                    "karpenter": (KARPENTER_NODE_CLASS_API, "EC2NodeClass")}
ARCHITECTURES = {"x86_64": "amd64", "arm64": "arm64"}
BOTTLEROCKET_OS_VOLUME_GIB = 4  # Bottlerocket's OS volume; images and pods live on the data volume
# Dynamic pools of accelerated nodes: reclaim a node once it has been empty for a while, but never
# evict running (often long) accelerated jobs to repack them.
DYNAMIC_DISRUPTION = {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"}
# Label domains Karpenter keeps for itself on NodePool templates (its CRD refuses them there), with
# the one karpenter.sh label a template may carry. karpenter.k8s.aws is refused whole: Karpenter
# accepts only its own instance labels there, which it derives from the instance anyway.
KARPENTER_LABEL_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
TEMPLATE_LABEL_EXCEPTIONS = (KARPENTER_CAPACITY_TYPE_LABEL,)
TEMPLATE_LABELS_KARPENTER_SETS = (KARPENTER_NODEPOOL_LABEL, HOSTNAME_LABEL)
# The tag that tells the toolkit's two security groups apart: both carry the discovery tag, but only
# EFA pools may select the EFA group. The Network tags its EFA group with the EFA role, the Cluster tags the EKS
# cluster security group with the cluster role (`names`).


def refused_template_label(key: str) -> bool:
    """Whether Karpenter's NodePool CRD refuses `key` as a template label: the node labels Karpenter
    sets itself, and keys in its own label domains. Like the CRD, the domain is the part before the
    first '/' (the whole key when there is none) and matches by suffix."""
    if key in TEMPLATE_LABELS_KARPENTER_SETS:
        return True
    domain = key.split("/", 1)[0]
    return key not in TEMPLATE_LABEL_EXCEPTIONS and domain.endswith(KARPENTER_LABEL_DOMAINS)


@dataclass(frozen=True)
class ClusterFacts:
    """What a NodeClass needs from the cluster beyond the plan. Security group and public subnet
    ids are optional so that manifests can be rendered without a deployed cluster.

    `tagged_security_groups`: the cluster and EFA security groups carry the discovery tag and
    `SECURITY_GROUP_TAG` (its role), as the toolkit's Cluster and Network tag them; the
    NodeClasses then select them by tag, so their spec names no id known only after deploy."""

    cluster_name: str
    node_role_name: str
    discovery_tag: str
    cluster_security_group_id: str | None = None
    efa_security_group_id: str | None = None
    public_subnet_ids: tuple[str, ...] = ()
    placement_groups: tuple[tuple[str, str], ...] = ()  # (pool name, placement group name)
    tags: tuple[tuple[str, str], ...] = ()  # `cluster.tags`, for what the node pools create in EC2
    tagged_security_groups: bool = False

    def placement_group(self, pool: PoolPlan) -> str | None:
        return dict(self.placement_groups).get(pool.name)


def pool_tags(cluster_tags: Mapping[str, str], pool: PoolPlan) -> dict[str, str]:
    """Tags for what a pool creates in EC2 (instances, volumes, launch templates, placement
    groups): the cluster's tags (cost allocation, ownership) and the pool's own."""
    return {**cluster_tags, POOL_LABEL: pool.name}


def uses_efa(pool: PoolPlan) -> bool:
    """Whether the pool runs EFA devices (any manager): its nodes need the EFA security group."""
    return pool.manager(EFA.name) != "none"


def uses_placement_group(mode: str, pool: PoolPlan) -> bool:
    """EFA pools get a cluster placement group unless the config turns it off. A placement group
    lives in one zone: node groups pin their subnet to one, NodePools only when the pool names its
    `availabilityZone` (without it the pool spans zones and gets no group)."""
    if not (uses_efa(pool) and pool.config.placement_group):
        return False
    return mode == "managed-node-groups" or pool.config.availability_zone is not None


def replacement_paths(pool: PoolPlan, prefix: str) -> list[str]:
    """Property paths of the device-manager labels under `prefix`: a change there replaces the
    pool's nodes rather than relabelling them."""
    return [f'{prefix}["{manager_label(family)}"]' for family in FAMILIES]


# --- NodePool ---------------------------------------------------------------------------------

def architectures(pool: PoolPlan) -> list[str]:
    """Kubernetes architecture names of the pool's instance types."""
    types = catalog.instance_types()
    return sorted({ARCHITECTURES[types[t].architecture] for t in pool.instance_types})


def requirements(mode: str, pool: PoolPlan) -> list[dict[str, Any]]:
    """NodePool requirements: exactly the pool's instance types, their architectures, Linux (under
    Karpenter only), its capacity type and, when pinned, its zone. Auto Mode runs Linux only and
    lists `kubernetes.io/os` among the labels its NodePools do not support, so it gets no OS term."""
    reqs: list[dict[str, Any]] = [
        {"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": list(pool.instance_types)},
        {"key": ARCH_LABEL, "operator": "In", "values": architectures(pool)},
    ]
    if mode != "auto-mode":
        reqs.append({"key": OS_LABEL, "operator": "In", "values": ["linux"]})
    reqs.append({"key": KARPENTER_CAPACITY_TYPE_LABEL, "operator": "In",
                 "values": [KARPENTER_CAPACITY_TYPES[pool.capacity]]})
    if pool.config.availability_zone:
        reqs.append({"key": ZONE_LABEL, "operator": "In",
                     "values": [pool.config.availability_zone]})
    return reqs


def static_node_limit(pool: PoolPlan) -> int:
    """A static pool's default node limit: one above `replicas`, so that a drifted node's replacement
    (launched before the old node goes) fits; exactly `replicas` on reserved capacity, which holds
    no spare instance anyway."""
    replicas = pool.replicas or 0
    return replicas if reserves(pool.capacity) else replicas + 1


def limits(pool: PoolPlan) -> dict[str, Any]:
    """Static pools may only limit `nodes` (the API rejects more); dynamic pools take the config's."""
    configured = pool.config.limits
    if pool.provisioning == "static":
        return {"nodes": configured.nodes if configured.nodes is not None else static_node_limit(pool)}
    out: dict[str, Any] = {}
    if configured.cpu is not None:
        out["cpu"] = configured.cpu
    if configured.memory is not None:
        out["memory"] = configured.memory
    if configured.nodes is not None:
        out["nodes"] = configured.nodes
    return out


def node_class_ref(mode: str, pool: PoolPlan) -> dict[str, str]:
    api, kind = NODE_CLASS_KINDS[mode]
    name = auto_mode_node_class_name(pool) if mode == "auto-mode" else node_pool_name(pool)
    return {"group": api.split("/")[0], "kind": kind, "name": name}


def node_pool(mode: str, pool: PoolPlan) -> dict[str, Any]:
    """The pool's `karpenter.sh/v1` NodePool: the plan's labels and taints on every node."""
    template_spec: dict[str, Any] = {"nodeClassRef": node_class_ref(mode, pool),
                                     "requirements": requirements(mode, pool)}
    if pool.taints:
        template_spec["taints"] = [dict(t) for t in pool.taints]
    spec: dict[str, Any] = {"template": {"metadata": {"labels": dict(pool.labels)}, "spec": template_spec}}
    if pool.provisioning == "static":
        spec["replicas"] = pool.replicas
    else:
        spec["disruption"] = dict(DYNAMIC_DISRUPTION)
    pool_limits = limits(pool)
    if pool_limits:
        spec["limits"] = pool_limits
    return {
        "apiVersion": NODE_POOL_API,
        "kind": "NodePool",
        "metadata": {"name": node_pool_name(pool), "labels": {**MANAGED_BY, POOL_LABEL: pool.name}},
        "spec": spec,
    }


# --- selectors shared by both NodeClass kinds -------------------------------------------------

def subnet_terms(pool: PoolPlan, facts: ClusterFacts) -> list[dict[str, Any]]:
    """Private subnets by the discovery tag; public subnets, when a pool asks for them, by id."""
    if pool.config.subnets == "public":
        if not facts.public_subnet_ids:
            raise ValueError(f"node pool {pool.name} asks for public subnets, but no public subnet ids were given")
        return [{"id": s} for s in facts.public_subnet_ids]
    return [{"tags": {DISCOVERY_TAG: facts.discovery_tag}}]


def security_group_terms(pool: PoolPlan, facts: ClusterFacts) -> list[dict[str, Any]]:
    """The cluster security group and, on EFA pools, the EFA group (EFA traffic needs the
    self-referencing group on every interface, EKS User Guide EFA page).

    Groups the toolkit tagged are selected by the discovery tag and their `SECURITY_GROUP_TAG`, the
    EFA group on EFA pools only (both carry the discovery tag, so it alone would put the EFA group on
    every pool). Brought groups: whatever carries the discovery tag, plus the groups by id."""
    if facts.tagged_security_groups:
        roles = [CLUSTER_SECURITY_GROUP, EFA_SECURITY_GROUP] if uses_efa(pool) else [CLUSTER_SECURITY_GROUP]
        return [{"tags": {DISCOVERY_TAG: facts.discovery_tag, SECURITY_GROUP_TAG: role}} for role in roles]
    terms: list[dict[str, Any]] = [{"tags": {DISCOVERY_TAG: facts.discovery_tag}}]
    if facts.cluster_security_group_id:
        terms.append({"id": facts.cluster_security_group_id})
    if uses_efa(pool) and facts.efa_security_group_id:
        terms.append({"id": facts.efa_security_group_id})
    return terms


def capacity_reservation_terms(pool: PoolPlan) -> list[dict[str, str]]:
    return [{"id": rid} for rid in pool.config.capacity_reservation_ids]


def network_interfaces(pool: PoolPlan) -> list[dict[str, Any]] | None:
    """The plan's interface layout (configured, or generated for a static EFA pool), or None: left
    unset on a dynamic pool, Auto Mode and Karpenter put an EFA on every EFA card for the pods that
    request one, which is what their DRA device metadata assumes."""
    if pool.network_interfaces is None:
        return None
    return [{"networkCardIndex": n["networkCardIndex"], "deviceIndex": n["deviceIndex"],
             "interfaceType": n["interfaceType"]} for n in pool.network_interfaces]


# --- Auto Mode NodeClass ----------------------------------------------------------------------

def _auto_mode_configuration(pool: PoolPlan) -> tuple[Any, ...]:
    """Everything that shapes an Auto Mode NodeClass; pools with equal keys share one."""
    return (pool.config.subnets, pool.config.disk_size_gib, network_interfaces(pool),
            capacity_reservation_terms(pool) if reserves(pool.capacity) else [], uses_efa(pool),
            sorted(pool.node_class_annotations.items()),
            pool.stem if uses_placement_group("auto-mode", pool) else None)  # a group is the pool's own


def auto_mode_node_class_name(pool: PoolPlan) -> str:
    """Named by its configuration, never `default` (Auto Mode's own class)."""
    return f"eks-devices-{digest(_auto_mode_configuration(pool))}"


def auto_mode_node_class_spec(pool: PoolPlan, facts: ClusterFacts) -> dict[str, Any]:
    """No `tags`: Auto Mode's managed cluster policies do not allow user tags on the instances it
    launches, so a tagged NodeClass would fail without extra IAM permissions."""
    spec: dict[str, Any] = {
        "role": facts.node_role_name,
        "subnetSelectorTerms": subnet_terms(pool, facts),
        "securityGroupSelectorTerms": security_group_terms(pool, facts),
        "ephemeralStorage": {"size": f"{pool.config.disk_size_gib}Gi"},
    }
    layout = network_interfaces(pool)
    if layout is not None:
        spec["advancedNetworking"] = {"networkInterfaces": layout}
    if reserves(pool.capacity):
        spec["capacityReservationSelectorTerms"] = capacity_reservation_terms(pool)
    _place(spec, pool, facts)
    return spec


def _place(spec: dict[str, Any], pool: PoolPlan, facts: ClusterFacts) -> None:
    group = facts.placement_group(pool)
    if group:
        spec["placementGroupSelector"] = {"name": group}


# --- Karpenter EC2NodeClass -------------------------------------------------------------------

def volumes(pool: PoolPlan) -> list[tuple[str, int, bool]]:
    """(device, GiB, holds images and pods): AL2023 has one root volume; Bottlerocket keeps a small
    OS volume and puts images and pods on a data volume, which gets the pool's disk size."""
    if pool.ami == "bottlerocket":
        return [("/dev/xvda", BOTTLEROCKET_OS_VOLUME_GIB, False), ("/dev/xvdb", pool.config.disk_size_gib, True)]
    return [("/dev/xvda", pool.config.disk_size_gib, True)]


def block_device_mappings(pool: PoolPlan) -> list[dict[str, Any]]:
    out = []
    for device, size, data in volumes(pool):
        mapping: dict[str, Any] = {"deviceName": device, "ebs": {
            "volumeSize": f"{size}Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}}
        if data:
            mapping["rootVolume"] = True
        out.append(mapping)
    return out


def karpenter_node_class_spec(pool: PoolPlan, facts: ClusterFacts) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "role": facts.node_role_name,
        "amiSelectorTerms": [{"alias": amis.alias(pool.ami, pool.ami_version)}],
        "subnetSelectorTerms": subnet_terms(pool, facts),
        "securityGroupSelectorTerms": security_group_terms(pool, facts),
        "metadataOptions": {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                            "httpPutResponseHopLimit": 1, "httpTokens": "required"},
        "blockDeviceMappings": block_device_mappings(pool),
        "tags": {**pool_tags(dict(facts.tags), pool), CLUSTER_TAG: facts.cluster_name},
    }
    if reserves(pool.capacity):
        spec["capacityReservationSelectorTerms"] = capacity_reservation_terms(pool)
    layout = network_interfaces(pool)
    if layout is not None:
        spec["networkInterfaces"] = layout
    if pool.ami == "bottlerocket" and pool.bottlerocket_settings:
        spec["userData"] = bottlerocket_toml(pool.bottlerocket_settings)
    _place(spec, pool, facts)
    return spec


# --- NodeClass dispatch -----------------------------------------------------------------------

def node_class_name(mode: str, pool: PoolPlan) -> str:
    return node_class_ref(mode, pool)["name"]


def node_class_metadata(mode: str, pool: PoolPlan) -> dict[str, Any]:
    """Metadata needs only the plan, so it is known before any cluster output."""
    metadata: dict[str, Any] = {"name": node_class_name(mode, pool), "labels": dict(MANAGED_BY)}
    if mode == "karpenter":
        metadata["labels"][POOL_LABEL] = pool.name
    if pool.node_class_annotations:
        metadata["annotations"] = dict(pool.node_class_annotations)
    return metadata


def node_class_spec(mode: str, pool: PoolPlan, facts: ClusterFacts) -> dict[str, Any]:
    if mode == "auto-mode":
        return auto_mode_node_class_spec(pool, facts)
    return karpenter_node_class_spec(pool, facts)


def node_class(mode: str, pool: PoolPlan, facts: ClusterFacts) -> dict[str, Any]:
    """The pool's NodeClass (Auto Mode) or EC2NodeClass (Karpenter) as a complete object."""
    api, kind = NODE_CLASS_KINDS[mode]
    return {"apiVersion": api, "kind": kind, "metadata": node_class_metadata(mode, pool),
            "spec": node_class_spec(mode, pool, facts)}


def render(plan: Plan, facts: ClusterFacts) -> list[dict[str, Any]]:
    """Every node-pool object of the plan: NodeClasses (one per distinct configuration), then
    NodePools. Managed node groups are not Kubernetes objects, so that mode renders none."""
    if plan.mode not in ("auto-mode", "karpenter"):
        return []
    classes: dict[str, dict[str, Any]] = {}
    for pool in plan.pools.values():
        classes.setdefault(node_class_name(plan.mode, pool), node_class(plan.mode, pool, facts))
    return [*classes.values(), *(node_pool(plan.mode, p) for p in plan.pools.values())]
