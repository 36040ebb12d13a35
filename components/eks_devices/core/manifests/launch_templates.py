"""Managed node groups from a PoolPlan: the AMI type, capacity type, name, labels, taints and
subnets of each `aws.eks.NodeGroup`, and the arguments of the `aws.ec2.LaunchTemplate` it uses.

Pure: every function returns plain values (keyword arguments in pulumi-aws's snake_case); the
NodePools component passes them on. Values that only exist at deploy time (security group ids, a
placement group's name) are taken as opaque arguments and placed where they belong.

The toolkit writes its own launch template rather than letting pulumi-eks build one: pulumi-eks's
template path cannot handle AL2023_x86_64_NEURON or AL2023_ARM_64_NVIDIA (pulumi/pulumi-eks v4.3.0), and only a
template carries the EFA interface layout, a Capacity Block's market type and IMDSv2 settings.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from eks_devices.core.knowledge import amis
from eks_devices.core.manifests.nodes import (
    bottlerocket_toml,
    pool_tags,
    uses_efa,
    volumes,
)
from eks_devices.core.model import PoolPlan
from eks_devices.core.naming import NODE_GROUP_CAPACITY_TYPES, NODE_GROUP_TAINT_EFFECTS, ami_type, node_group_name
from eks_devices.core.vocabulary import reserves


def node_group_zone(pool: PoolPlan, zones: list[str]) -> str | None:
    """The single zone of a pool that needs one: the configured zone, else for EFA pools (one
    placement group, one EFA fabric) the first of `zones` in name order. None: every zone."""
    if pool.config.availability_zone:
        return pool.config.availability_zone
    if uses_efa(pool) and zones:
        return sorted(zones)[0]
    return None


def node_group_subnets(pool: PoolPlan, subnet_ids: list[str], subnets_by_zone: dict[str, str]) -> list[str]:
    """The node group's subnets (private or public, as the pool asks): the one subnet of its zone
    when it needs a single zone, all of `subnet_ids` otherwise."""
    zone = node_group_zone(pool, list(subnets_by_zone))
    if zone is None:
        return list(subnet_ids)
    if zone not in subnets_by_zone:
        raise ValueError(f"node pool {pool.name}: no {pool.config.subnets} subnet in zone {zone} "
                         f"(zones: {', '.join(sorted(subnets_by_zone)) or 'none'})")
    return [subnets_by_zone[zone]]


def node_group_args(pool: PoolPlan, cluster_tags: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`aws.eks.NodeGroup` arguments that come from the plan alone (cluster, role, subnets and
    launch template are added by the component)."""
    replicas = pool.replicas or 0
    args: dict[str, Any] = {
        "node_group_name": node_group_name(pool),
        "ami_type": ami_type(pool),
        "capacity_type": NODE_GROUP_CAPACITY_TYPES[pool.capacity],
        "labels": dict(pool.labels),
        "taints": [{"key": t["key"], **({"value": t["value"]} if t.get("value") else {}),
                    "effect": NODE_GROUP_TAINT_EFFECTS[t["effect"]]} for t in pool.taints],
        "scaling_config": {"desired_size": replicas, "min_size": replicas, "max_size": max(replicas, 1)},
        "tags": pool_tags(cluster_tags or {}, pool),
    }
    if pool.capacity != "capacity-block":  # a Capacity Block's instance type is in the template
        args["instance_types"] = list(pool.instance_types)
    if pool.ami_version != amis.LATEST:  # unset: the newest release when the group is created, then kept
        args["release_version"] = pool.ami_version
    return args


def network_interfaces(pool: PoolPlan, security_groups: list[Any]) -> list[dict[str, Any]] | None:
    """The plan's interface layout as launch-template interfaces: the ENA `interface` at card 0 /
    device 0, EFA-only elsewhere (as the plan says), each with the given security groups and no
    subnet (EKS takes subnets from the node group only)."""
    if pool.network_interfaces is None:
        return None
    return [{"network_card_index": nic["networkCardIndex"], "device_index": nic["deviceIndex"],
             "interface_type": nic["interfaceType"], "security_groups": list(security_groups),
             "delete_on_termination": "true"} for nic in pool.network_interfaces]


def launch_template_args(pool: PoolPlan, *, efa_security_group_id: Any, cluster_security_group_id: Any,
                         placement_group_name: Any | None,
                         cluster_tags: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`aws.ec2.LaunchTemplate` arguments: IMDSv2 with hop limit 1, encrypted gp3 volumes sized
    from the pool, the EFA layout, the placement group, the capacity reservation or Capacity Block,
    and Bottlerocket settings as user data."""
    tags = pool_tags(cluster_tags or {}, pool)
    args: dict[str, Any] = {
        "description": f"eks-devices node pool {pool.name}",
        "update_default_version": True,
        "metadata_options": {"http_endpoint": "enabled", "http_tokens": "required",
                             "http_put_response_hop_limit": 1},
        "block_device_mappings": [
            {"device_name": device, "ebs": {"volume_size": size, "volume_type": "gp3", "encrypted": "true",
                                            "delete_on_termination": "true"}}
            for device, size, _ in volumes(pool)],
        "tag_specifications": [{"resource_type": kind, "tags": tags} for kind in ("instance", "volume")],
        "tags": tags,
    }
    interfaces = network_interfaces(pool, [efa_security_group_id, cluster_security_group_id])
    if interfaces is not None:
        args["network_interfaces"] = interfaces
    if placement_group_name is not None:
        args["placement"] = {"group_name": placement_group_name}
    if reserves(pool.capacity):
        args["capacity_reservation_specification"] = {
            "capacity_reservation_target": {"capacity_reservation_id": pool.config.capacity_reservation_ids[0]}}
    if pool.capacity == "capacity-block":
        args["instance_market_options"] = {"market_type": "capacity-block"}
        args["instance_type"] = pool.instance_types[0]
    if pool.ami == "bottlerocket" and pool.bottlerocket_settings:
        args["user_data"] = base64.b64encode(bottlerocket_toml(pool.bottlerocket_settings).encode()).decode()
    return args
