"""A brought VPC's pools pinned to zones: offline nothing says which zone a brought subnet is in, so
the mock engine places the subnets in the pools' pinned zones (the program then runs as it will
against EC2, which `preflight` checks), and a stack pinning more zones than it brings subnets is
refused at its path."""

from __future__ import annotations

from typing import Any

import pytest

from eks_devices.core.config.errors import ConfigError
from eks_devices.core.config.stack import brought_subnet_zones, parse
from eks_devices.testing import Mocks
from support import engine, stacks

PRIVATE = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
PUBLIC = ["subnet-0123456789abcdef2", "subnet-0123456789abcdef3"]


def stack(mode: str, zones: dict[str, str], private: list[str] = PRIVATE) -> dict[str, Any]:
    pools = {name: {"instanceTypes": ["p5.48xlarge"], "provisioning": "static", "replicas": 1,
                    "availabilityZone": zone} for name, zone in zones.items()}
    return stacks.config(mode, pools=pools, network={"vpcId": "vpc-0123456789abcdef0",
                                                     "privateSubnetIds": private, "publicSubnetIds": PUBLIC})


@pytest.mark.parametrize("zone", ["us-west-2a", "us-west-2d"])
def test_a_node_group_pinned_to_any_zone_gets_a_brought_subnet_there(zone: str) -> None:
    """The mocks' own guess puts these two subnets in us-west-2b and us-west-2c, which failed the
    program ("no private subnet in zone ...") for a pin EC2 may well honour."""
    guessed = {Mocks("us-west-2").subnet(s)["availabilityZone"] for s in PRIVATE}
    assert zone not in guessed  # the case that failed before
    rec = engine.main(stack("managed-node-groups", {"p5": zone}))
    [group] = [r for r in rec.of_type("aws:eks/nodeGroup:NodeGroup") if "p5" in r.name]
    assert group.inputs["subnetIds"] == [PRIVATE[0]]


def test_the_subnets_cover_the_pinned_zones_in_list_order_and_the_rest_keep_the_mocks_guess() -> None:
    spec = parse(stack("karpenter", {"a": "us-west-2c", "b": "us-west-2a"}))
    assert brought_subnet_zones(spec) == {PRIVATE[0]: "us-west-2a", PRIVATE[1]: "us-west-2c"}
    mocks = Mocks("us-west-2", subnet_zones={PRIVATE[0]: "us-west-2d"})
    assert mocks.subnet(PRIVATE[0])["availabilityZone"] == "us-west-2d"
    assert mocks.subnet(PRIVATE[1]) == Mocks("us-west-2").subnet(PRIVATE[1])


def test_more_pinned_zones_than_brought_subnets_is_refused_at_the_subnet_list() -> None:
    with pytest.raises(ConfigError) as caught:
        parse(stack("managed-node-groups", {"a": "us-west-2a", "b": "us-west-2b", "c": "us-west-2c"}))
    [problem] = [p for p in caught.value.problems if p.path == "network.privateSubnetIds"]
    assert problem.given == "2 subnet(s)"
    assert "us-west-2a, us-west-2b, us-west-2c" in problem.accepted and "at least 3" in problem.accepted
