"""Managed node group rules: what EKS node groups accept and what one node group can express."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.families import DESCRIPTORS
from eks_devices.core.knowledge import catalog
from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, at, error, refused_labels, rule
from eks_devices.core.vocabulary import reserves

RESERVED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "eks.amazonaws.com")


def reserved_label(key: str) -> bool:
    """EKS rejects node group labels under kubernetes.io/, k8s.io/ and eks.amazonaws.com/ (and their subdomains)."""
    domain = key.split("/", 1)[0] if "/" in key else ""
    return any(domain == d or domain.endswith("." + d) for d in RESERVED_LABEL_DOMAINS)


@rule("managed-node-group-reserved-labels", "no reserved label prefixes on managed node groups",
      modes=("managed-node-groups",))
def _mng_reserved_labels(plan: Plan) -> Iterator[Verdict]:
    for pool, key in refused_labels(plan, reserved_label):
        yield error(at(pool, f"labels.{key}"),
                    f"EKS rejects node group label {key}: Label cannot contain reserved prefixes",
                    "use a label under your own prefix; device managers are in eks-devices.io/ labels")


@rule("managed-node-group-shape", "one architecture, one reservation, one Capacity Block type and zone per node "
      "group", modes=("managed-node-groups",))
def _mng_shape(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        archs = sorted({catalog.instance_types()[t].architecture for t in pool.instance_types})
        if len(archs) > 1:
            yield error(at(pool, "instanceTypes"),
                        f"a node group runs one AMI, so one architecture (given {', '.join(archs)})",
                        "split the pool into one pool per architecture (each with the instanceTypes of one)")
        for devices in DESCRIPTORS if pool.ami == "al2023" else ():
            if pool.has_hardware(devices.name) and pool.architecture not in devices.al2023_architectures:
                yield error(at(pool, "instanceTypes"), f"EKS has no {pool.architecture} AL2023 {devices.title} AMI",
                            f"use {' or '.join(devices.al2023_architectures)} {devices.title} instance types")
        reservations = pool.config.capacity_reservation_ids
        if reserves(pool.capacity) and len(reservations) != 1:
            yield error(at(pool, "capacityReservationIds"),
                        f"a launch template targets exactly one reservation (given {len(reservations)})",
                        "use one pool per reservation")
        if pool.capacity == "capacity-block":
            if len(pool.instance_types) != 1:
                yield error(at(pool, "instanceTypes"),
                            "a Capacity Block holds one instance type", "list exactly the block's instance type")
            if not pool.config.availability_zone:
                yield error(at(pool, "availabilityZone"),
                            "a Capacity Block lives in one zone and the node group may only use that zone's subnet",
                            "set availabilityZone to the Capacity Block's zone")


@rule("pool-public-subnets", "public pools need public subnets in a brought VPC")
def _pool_public_subnets(plan: Plan) -> Iterator[Verdict]:
    network = plan.spec.network
    if network.vpc_id is None or network.public_subnet_ids:
        return
    for pool in plan.pools.values():
        if pool.config.subnets == "public":
            yield error(at(pool, "subnets"),
                        "the pool asks for public subnets but network.publicSubnetIds is empty",
                        "list the VPC's public subnets in network.publicSubnetIds, or use subnets: private")
