"""Rule endpoint-reachable-from-nodes: with the private endpoint off, nodes reach the API server from
their NAT gateways' addresses, which the public endpoint's CIDRs must admit."""

from __future__ import annotations

from typing import Any

import pytest

from support import stacks

BROUGHT = {"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": ["subnet-0123456789abcdef0"]}


def found(endpoint: dict[str, Any], network: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    plan = stacks.plan("karpenter", "1.36", {}, cluster={"endpoint": endpoint}, **({"network": network} if network
                                                                                   else {}))
    return [(f.severity, f.path) for f in plan.findings if f.slug == "endpoint-reachable-from-nodes"]


def test_a_created_vpc_with_the_private_endpoint_off_and_listed_cidrs_is_an_error() -> None:
    """The stack's NAT gateways get Elastic IPs only when created: no CIDR list can admit them."""
    plan = stacks.plan("karpenter", "1.36", {}, cluster={"endpoint": {"privateAccess": False,
                                                                      "publicAccessCidrs": ["203.0.113.0/24"]}})
    [finding] = [f for f in plan.findings if f.slug == "endpoint-reachable-from-nodes"]
    assert (finding.severity, finding.path) == ("error", "cluster.endpoint.privateAccess")
    assert "loses the API server" in finding.message and "privateAccess: true" in finding.fix


def test_a_brought_vpc_is_a_warning_pointing_at_preflight() -> None:
    assert found({"privateAccess": False, "publicAccessCidrs": ["203.0.113.7/32"]}, BROUGHT) == [
        ("warning", "cluster.endpoint.privateAccess")]


@pytest.mark.parametrize("endpoint", [
    {"privateAccess": True, "publicAccessCidrs": ["203.0.113.0/24"]},
    {"privateAccess": False, "publicAccessCidrs": ["0.0.0.0/0"]},
    {"privateAccess": True},
])
def test_reachable_endpoints_pass(endpoint: dict[str, Any]) -> None:
    assert found(endpoint) == []
