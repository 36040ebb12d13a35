"""Capacity checks: reservations present, absent, in the wrong zone, too small, for another type,
expired, scheduled, and of the wrong kind. moto 5.2.5 does not implement
DescribeCapacityReservations, so that one operation is answered by `support.aws.reservations`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from eks_devices.preflight import CheckResult
from eks_devices.preflight.capacity import CAPACITY
from support import aws

CR1, CR2 = "cr-0123456789abcdef0", "cr-0fedcba9876543210"


def pool(replicas: int = 2, ids: tuple[str, ...] = (CR1,), **extra: Any) -> dict[str, Any]:
    return {"replicas": replicas, "instanceTypes": ["p5.48xlarge"], "capacity": "reserved",
            "capacityReservationIds": list(ids), "availabilityZone": "us-west-2b", **extra}


def check(session: boto3.Session, reservations: list[dict[str, Any]], pools: dict[str, Any],
          mode: str = "managed-node-groups", name: str = "ml") -> dict[str, CheckResult]:
    aws.reservations(session, reservations)
    results = aws.check(session, aws.stack(mode=mode, pools=pools, name=name), CAPACITY)
    return {r.subject: r for r in results}


def test_present_active_reservation_covering_the_replicas_passes(session: boto3.Session) -> None:
    found = check(session, [aws.reservation(CR1, "p5.48xlarge", "us-west-2b", 2)], {"train": pool()})
    assert found[f"pool train / {CR1}"].status == "pass"
    assert "active: 2 x p5.48xlarge in us-west-2b" in found[f"pool train / {CR1}"].detail
    assert found["pool train"].status == "pass"


def test_absent_reservation_fails(session: boto3.Session) -> None:
    found = check(session, [], {"train": pool()})
    assert found[f"pool train / {CR1}"].status == "fail"
    assert "does not exist" in found[f"pool train / {CR1}"].detail
    assert found["pool train"].status == "fail"


def test_reservation_in_another_zone_fails(session: boto3.Session) -> None:
    found = check(session, [aws.reservation(CR1, "p5.48xlarge", "us-west-2c", 2)], {"train": pool()})
    result = found[f"pool train / {CR1}"]
    assert result.status == "fail" and "it is in us-west-2c, outside the pool's zones us-west-2b" in result.detail
    assert "pin the pool to us-west-2c" in result.fix


def test_reservation_too_small_for_static_replicas_fails(session: boto3.Session) -> None:
    found = check(session, [aws.reservation(CR1, "p5.48xlarge", "us-west-2b", 1)], {"train": pool(replicas=3)})
    assert found[f"pool train / {CR1}"].status == "pass"
    assert found["pool train"].status == "fail"
    assert "hold 1 instance(s); the static pool wants 3" in found["pool train"].detail


def test_two_reservations_add_up(session: boto3.Session) -> None:
    found = check(session, [aws.reservation(CR1, "p5.48xlarge", "us-west-2b", 2),
                            aws.reservation(CR2, "p5.48xlarge", "us-west-2b", 1)],
                  {"train": pool(replicas=3, ids=(CR1, CR2))})
    assert found["pool train"].status == "pass"


def test_reservation_for_another_instance_type_fails(session: boto3.Session) -> None:
    found = check(session, [aws.reservation(CR1, "p4d.24xlarge", "us-west-2b", 2)], {"train": pool()})
    result = found[f"pool train / {CR1}"]
    assert result.status == "fail" and "it reserves p4d.24xlarge" in result.detail


@pytest.mark.parametrize(("state", "status"), [("expired", "fail"), ("cancelled", "fail"),
                                               ("scheduled", "fail"), ("payment-pending", "warn")])
def test_reservation_state(session: boto3.Session, state: str, status: str) -> None:
    found = check(session, [aws.reservation(CR1, "p5.48xlarge", "us-west-2b", 2, state=state)],
                  {"train": pool()})
    assert found[f"pool train / {CR1}"].status == status
    # only active or scheduled capacity counts towards the replicas
    assert found["pool train"].status == ("pass" if status == "pass" else "fail")


def test_capacity_block_pool_on_an_ordinary_reservation_fails(session: boto3.Session) -> None:
    found = check(session, [aws.reservation(CR1, "p5.48xlarge", "us-west-2b", 2, kind="default")],
                  {"train": pool(capacity="capacity-block", placementGroup=False)})
    result = found[f"pool train / {CR1}"]
    assert result.status == "fail" and "pool says capacity: capacity-block" in result.detail


def test_a_capacity_block_that_starts_later_fails(session: boto3.Session) -> None:
    """A scheduled block (or any reservation whose start lies ahead) launches no node before it
    starts: pulumi up would wait on the pool until it fails."""
    later = datetime.now(UTC) + timedelta(days=3)
    block = {**aws.reservation(CR1, "p5.48xlarge", "us-west-2b", 2, state="scheduled", kind="capacity-block"),
             "StartDate": later}
    found = check(session, [block], {"train": pool(capacity="capacity-block", placementGroup=False)})
    result = found[f"pool train / {CR1}"]
    assert result.status == "fail" and f"it starts {later}" in result.detail
    assert result.fix.startswith("run pulumi up once the block has started")
    assert found["pool train"].status == "fail"


def test_a_reservation_whose_instances_are_all_in_use_fails_before_the_stack_exists(session: boto3.Session) -> None:
    full = {**aws.reservation(CR1, "p5.48xlarge", "us-west-2b", 2), "AvailableInstanceCount": 0}
    found = check(session, [full], {"train": pool()})
    result = found[f"pool train / {CR1}"]
    assert result.status == "fail" and "every instance is in use" in result.detail


def test_instances_in_use_by_the_stacks_own_node_group_pass(session: boto3.Session) -> None:
    """Once deployed, the pool's own nodes hold the reservation: that is not a shortage."""
    aws.create_cluster(session, name="ml-held")  # a cluster of its own: the module shares one mocked account
    aws.create_nodegroup(session, "train-group", {"eks-devices.io/pool": "train"}, cluster="ml-held")
    full = {**aws.reservation(CR1, "p5.48xlarge", "us-west-2b", 2), "AvailableInstanceCount": 0}
    found = check(session, [full], {"train": pool()}, name="ml-held")
    assert found[f"pool train / {CR1}"].status == "pass"


def test_dynamic_reserved_pool_has_no_replica_count_to_cover(session: boto3.Session) -> None:
    pools = {"train": {"instanceTypes": ["p5.48xlarge"], "capacity": "reserved", "capacityReservationIds": [CR1],
                       "availabilityZone": "us-west-2b"}}
    found = check(session, [aws.reservation(CR1, "p5.48xlarge", "us-west-2b", 1)], pools, mode="karpenter")
    assert set(found) == {f"pool train / {CR1}"} and found[f"pool train / {CR1}"].status == "pass"


def test_no_reserved_pool_passes_without_calling_ec2(session: boto3.Session) -> None:
    calls = aws.record_calls(session)
    found = check(session, [], {"serve": {"replicas": 1, "instanceTypes": ["g6e.2xlarge"]}})
    assert [r.status for r in found.values()] == ["pass"]
    assert ("ec2", "DescribeCapacityReservations") not in calls
