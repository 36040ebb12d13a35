"""Instance checks: types missing from the region fail; a live figure that differs from the
catalogue is a warning naming the field."""

from __future__ import annotations

import dataclasses

import boto3
import pytest

from eks_devices.core.knowledge import catalog
from eks_devices.preflight.instances import INSTANCES
from support import aws


def test_catalogued_types_agree_with_ec2(session: boto3.Session) -> None:
    plan = aws.stack(pools={"a": {"replicas": 1, "instanceTypes": ["p5.48xlarge", "p4d.24xlarge"]},
                            "b": {"replicas": 1, "instanceTypes": ["trn2.48xlarge", "p5.48xlarge"]}})
    results = {r.subject: r for r in aws.check(session, plan, INSTANCES)}
    assert set(results) == {"p4d.24xlarge (pool a)", "p5.48xlarge (pool a, b)", "trn2.48xlarge (pool b)"}
    assert all(r.status == "pass" for r in results.values())


def test_type_missing_from_the_region_fails(session: boto3.Session) -> None:
    # p6e-gb200 is absent from EC2's public data as moto 5.2.5 ships it.
    plan = aws.stack(pools={"gb": {"replicas": 1, "instanceTypes": ["p6e-gb200.36xlarge"]}})
    [result] = aws.check(session, plan, INSTANCES)
    assert result.status == "fail" and "does not describe p6e-gb200.36xlarge in us-west-2" in result.detail


def test_difference_from_the_catalogue_warns_naming_the_field(session: boto3.Session,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    plan = aws.stack(pools={"a": {"replicas": 1, "instanceTypes": ["p5.48xlarge"]}})
    known = dict(catalog.instance_types())
    known["p5.48xlarge"] = dataclasses.replace(known["p5.48xlarge"], max_efa_interfaces=16, gpu_count=4)
    monkeypatch.setattr(catalog, "instance_types", lambda: known)
    [result] = aws.check(session, plan, INSTANCES)
    assert result.status == "warn"
    assert "gpu_count: catalogue 4, EC2 8" in result.detail
    assert "max_efa_interfaces: catalogue 16, EC2 32" in result.detail
    assert "network_cards" not in result.detail
