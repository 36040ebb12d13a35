"""The preflight runner: every check in order against one account, each guarded so one denied
call or AWS error makes that check "not run" (naming the IAM action) instead of stopping the rest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import ClientError

from eks_devices.core.model import Plan
from eks_devices.preflight import capacity, cluster, instances, network
from eks_devices.preflight.aws import AwsReader, Denied, PreflightAborted, Unavailable, error_code
from eks_devices.preflight.model import CheckResult, Context

IDENTITY = "aws.identity"


@dataclass(frozen=True)
class Check:
    name: str
    summary: str
    run: Callable[[Context], list[CheckResult]]


CHECKS: tuple[Check, ...] = (
    Check(network.EGRESS, "subnets the pools use reach the internet (NAT, or VPC endpoints); none sends EFA "
          "nodes to an internet gateway", network.egress),
    Check(network.ZONES, "the pools' zones offer their instance types", network.zones),
    Check(instances.INSTANCES, "the instance types exist in the region and agree with the catalogue",
          instances.instances),
    Check(capacity.CAPACITY, "reservations and capacity blocks exist, are usable, match type and zone, and cover "
          "static replicas", capacity.capacity),
    Check(cluster.VERSION, "an existing cluster's Kubernetes version meets the plan", cluster.version),
    Check(cluster.NODE_GROUPS, "existing node groups' device-manager labels agree with the plan", cluster.node_groups),
    Check(cluster.BOTTLEROCKET, "Bottlerocket NVIDIA node groups on DRA switch the bundled plugin off",
          cluster.bottlerocket),
    Check(cluster.CAPACITY_BLOCK_UPGRADE, "Capacity Block node groups the stack would upgrade have no nodes",
          cluster.capacity_block_upgrade),
    Check(cluster.ADDONS, "no EKS add-on runs a device plugin where the plan puts a DRA driver", cluster.addons),
    Check(cluster.DAEMONSETS, "device plugin DaemonSets inside the cluster (needs Kubernetes credentials)",
          cluster.daemonsets),
)


def run_check(check: Check, ctx: Context) -> list[CheckResult]:
    """One check; a denied call or an AWS error makes it "not run" with the reason."""
    try:
        return check.run(ctx)
    except Denied as denied:
        return [CheckResult(check.name, "-", "not-run",
                            f"not allowed to call {denied.call.action} ({denied.code}), needed for "
                            f"{denied.call.purpose}",
                            f"grant {denied.call.action} (policies/preflight-readonly.json lists every action)",
                            denied.call.action, blocked=True)]
    except Unavailable as exc:
        return [CheckResult(check.name, "-", "not-run", f"{exc.call.action} failed: {exc.reason}",
                            "re-run once AWS answers again (or the credentials are renewed)", blocked=True)]
    except ClientError as exc:
        message = exc.response.get("Error", {}).get("Message", "")
        return [CheckResult(check.name, "-", "not-run", f"{exc.operation_name} failed: {error_code(exc)}: {message}",
                            "re-run once the error is resolved", blocked=True)]


def _identity(aws: AwsReader) -> dict[str, Any]:
    """The caller's identity; any refusal here means nothing else can run (exit 2, one line).

    GetCallerIdentity needs no IAM permission, so a denial or another AWS error here is not a
    missing policy action: the endpoint, the region or the account is unusable."""
    try:
        who = aws.identity()
        aws.identified = True
        return who
    except Denied as denied:
        raise PreflightAborted(f"sts:GetCallerIdentity was refused ({denied.code}) in {aws.region}: the "
                               "credentials cannot be used here") from None
    except ClientError as exc:
        message = exc.response.get("Error", {}).get("Message", "")
        raise PreflightAborted(f"sts:GetCallerIdentity failed in {aws.region}: {error_code(exc)}: "
                               f"{message}".rstrip(": ")) from None


def run_preflight(plan: Plan, session: boto3.Session, region: str | None = None) -> list[CheckResult]:
    """Run every check read-only against the account behind `session`, in `region` (default: the
    stack's `aws:region`). Raises PreflightAborted when nothing can run (credentials, endpoint)."""
    aws = AwsReader(session, region or plan.spec.region)
    who = _identity(aws)
    results = [CheckResult(IDENTITY, f"account {who.get('Account')}", "pass",
                           f"calling as {who.get('Arn')} in {aws.region}")]
    ctx = Context(plan, aws)
    for check in CHECKS:
        results.extend(run_check(check, ctx))
    return results
