"""The read-only IAM policy covers exactly the calls the code makes, and a denied call makes its
check "not run" naming the action, while credential problems stop the run with one line."""

from __future__ import annotations

import json
import re

import boto3
import pytest
from botocore.stub import Stubber

from eks_devices.preflight import (
    API_CALLS,
    CHECKS,
    AwsReader,
    Context,
    PreflightAborted,
    run_check,
    run_preflight,
)
from eks_devices.preflight.cluster import BOTTLEROCKET
from eks_devices.preflight.instances import INSTANCES
from support import aws
from support.stacks import ROOT

POLICY = json.loads((ROOT / "policies" / "preflight-readonly.json").read_text())
ACTIONS = {a for s in POLICY["Statement"] for a in s["Action"]}
CR = "cr-0123456789abcdef0"
EFA_POOL = {"replicas": 1, "instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}}


def test_policy_is_read_only_and_allows_exactly_the_table() -> None:
    [statement] = POLICY["Statement"]
    assert statement["Effect"] == "Allow" and statement["Resource"] == "*"
    assert {c.action for c in API_CALLS} == ACTIONS
    for action in ACTIONS:
        assert re.fullmatch(r"(ec2|eks|sts):(Describe|List|Get)[A-Za-z]+", action), action


def test_a_full_run_makes_every_call_of_the_table_and_no_other(session: boto3.Session) -> None:
    """Record what the clients send over two stacks that between them reach every code path."""
    calls = aws.record_calls(session)
    vpc = aws.build_vpc(session, egress={"us-west-2a": "nat", "us-west-2b": "none"})
    aws.create_cluster(session, "everything")
    aws.create_nodegroup(session, "br", {"eks-devices.io/device-manager-nvidia": "dra"}, cluster="everything",
                         ami="BOTTLEROCKET_x86_64_NVIDIA", user_data="[settings]\n")
    aws.addons(session, {"vpc-cni": {}})
    aws.reservations(session, [aws.reservation(CR, "p5.48xlarge", "us-west-2a", 1)])
    calls.clear()  # only the preflight's own calls from here on
    pools = {"train": {**EFA_POOL, "capacity": "reserved", "capacityReservationIds": [CR]}}
    run_preflight(aws.stack(pools=pools, network=vpc.network(), name="everything"), session)
    run_preflight(aws.stack(pools={"train": EFA_POOL}, name="everything"), session)
    made = set(calls)
    table = {(c.service, c.operation) for c in API_CALLS}
    assert made <= table, made - table
    assert table <= made, f"listed but never called: {table - made}"
    assert {f"{service}:{operation}" for service, operation in made} <= ACTIONS


def test_docs_name_every_iam_action() -> None:
    text = (ROOT / "docs" / "preflight.md").read_text()
    assert [a for a in sorted(ACTIONS) if f"`{a}`" not in text] == []
    assert [c.name for c in CHECKS if f"`{c.name}`" not in text] == []


def test_denied_call_stubbed_with_botocore_stubber_is_reported_as_not_run(session: boto3.Session) -> None:
    plan = aws.stack(pools={"train": EFA_POOL})
    reader = AwsReader(session, aws.REGION)
    with Stubber(reader.client("ec2")) as stub:
        stub.add_client_error("describe_instance_types", service_error_code="UnauthorizedOperation",
                              service_message="You are not authorized to perform this operation.",
                              http_status_code=403)
        [check] = [c for c in CHECKS if c.name == INSTANCES]
        [result] = run_check(check, Context(plan, reader))
        stub.assert_no_pending_responses()
    assert (result.check, result.status, result.iam_action) == (INSTANCES, "not-run", "ec2:DescribeInstanceTypes")
    assert "UnauthorizedOperation" in result.detail and "ec2:DescribeInstanceTypes" in result.fix


def test_denied_describe_cluster_leaves_the_other_checks_running(session: boto3.Session) -> None:
    aws.deny(session, "eks", "DescribeCluster", code="AccessDeniedException")
    results = run_preflight(aws.stack(pools={"train": EFA_POOL}), session)
    cluster = [r for r in results if r.check.startswith("cluster.")]
    assert len(cluster) == len([c for c in CHECKS if c.name.startswith("cluster.")]) == 6
    assert all(r.status == "not-run" and r.iam_action == "eks:DescribeCluster" for r in cluster)
    assert all(r.status != "not-run" for r in results if r.check in ("network.zones", INSTANCES))


def test_denied_call_inside_one_check_names_that_action(session: boto3.Session) -> None:
    aws.create_cluster(session, "lt-denied")
    aws.create_nodegroup(session, "br", {"eks-devices.io/device-manager-nvidia": "dra"}, cluster="lt-denied",
                         ami="BOTTLEROCKET_x86_64_NVIDIA", user_data="[settings]\n")
    aws.deny(session, "ec2", "DescribeLaunchTemplateVersions", code="UnauthorizedOperation")
    results = run_preflight(aws.stack(pools={"train": EFA_POOL}, name="lt-denied"), session)
    [result] = aws.by_check(results, BOTTLEROCKET)
    assert (result.status, result.iam_action) == ("not-run", "ec2:DescribeLaunchTemplateVersions")
    assert [r.status for r in aws.by_check(results, "cluster.node-groups")] == ["warn"]


def test_other_aws_error_is_not_run_without_an_action(session: boto3.Session) -> None:
    def broken(_: dict[str, object]) -> dict[str, object]:
        raise aws.FakeError("InvalidParameterValue", "bad filter")
    aws.fake(session, "ec2", "DescribeInstanceTypeOfferings", broken)
    [result] = aws.check(session, aws.stack(pools={"train": EFA_POOL}), "network.zones")
    assert result.status == "not-run" and result.iam_action is None
    assert "DescribeInstanceTypeOfferings failed: InvalidParameterValue: bad filter" in result.detail


@pytest.mark.parametrize("code", ["ExpiredToken", "InvalidClientTokenId"])
def test_rejected_credentials_stop_the_run(session: boto3.Session, code: str) -> None:
    aws.deny(session, "sts", "GetCallerIdentity", code=code)
    with pytest.raises(PreflightAborted, match=f"AWS rejected the credentials \\({code}\\)"):
        run_preflight(aws.stack(pools={"train": EFA_POOL}), session)


def test_reader_refuses_calls_outside_the_table(session: boto3.Session) -> None:
    with pytest.raises(KeyError):
        AwsReader(session, aws.REGION).call("ec2", "TerminateInstances", InstanceIds=["i-1"])
