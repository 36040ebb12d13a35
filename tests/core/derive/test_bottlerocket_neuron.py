"""Bottlerocket Neuron pools set `[settings.kubernetes] device-ownership-from-security-context = true`, or
non-root Neuron containers cannot open /dev/neuron* (bottlerocket QUICKSTART-EKS, PR #4400; Karpenter
docs PR #7722); the user's bottlerocketSettings still win."""

from __future__ import annotations

import base64
import tomllib
from typing import Any

import pytest

from eks_devices.core.manifests import launch_templates as lt
from eks_devices.core.manifests import nodes as nm
from support import stacks

OWNERSHIP = {"kubernetes": {"device-ownership-from-security-context": True}}
STATIC = {"provisioning": "static", "replicas": 1}
CLUSTER = nm.ClusterFacts(cluster_name="ml", node_role_name="ml-node", discovery_tag="ml",
                          cluster_security_group_id="sg-0cluster", efa_security_group_id="sg-0efa")


def node_class_settings(p: Any, pool: str) -> dict[str, Any] | None:
    classes = {o["metadata"]["name"]: o for o in nm.render(p, CLUSTER) if o["kind"] == "EC2NodeClass"}
    user_data = classes[nm.node_pool_name(p.pools[pool])]["spec"].get("userData")
    return None if user_data is None else tomllib.loads(user_data)["settings"]


def launch_template_settings(p: Any, pool: str) -> dict[str, Any] | None:
    args = lt.launch_template_args(p.pools[pool], efa_security_group_id="sg-e", cluster_security_group_id="sg-c",
                                   placement_group_name=None)
    return None if "user_data" not in args else tomllib.loads(base64.b64decode(args["user_data"]).decode())["settings"]


@pytest.mark.parametrize("itype", ["trn1.32xlarge", "inf2.xlarge"])
def test_a_bottlerocket_neuron_karpenter_pool_sets_device_ownership(itype: str) -> None:
    p = stacks.plan(pools={"n": {"instanceTypes": [itype], "ami": "bottlerocket"}})
    assert p.pools["n"].bottlerocket_settings == OWNERSHIP
    assert node_class_settings(p, "n") == OWNERSHIP


def test_a_bottlerocket_neuron_node_group_sets_device_ownership() -> None:
    p = stacks.plan("managed-node-groups", pools={"n": {"instanceTypes": ["trn1.32xlarge"], **STATIC,
                                                        "ami": "bottlerocket"}})
    assert p.pools["n"].bottlerocket_settings == OWNERSHIP
    assert launch_template_settings(p, "n") == OWNERSHIP


def test_the_shipped_bottlerocket_trn_pool_sets_it() -> None:
    assert node_class_settings(stacks.shipped_plan("staging"), "trn-static") == OWNERSHIP


def test_non_neuron_bottlerocket_and_al2023_neuron_pools_do_not() -> None:
    p = stacks.plan(pools={
        "gpu": {"instanceTypes": ["g6.xlarge"], "ami": "bottlerocket", "devices": {"nvidia": "device-plugin"}},
        "al": {"instanceTypes": ["trn1.32xlarge"]},
    })
    assert p.pools["gpu"].bottlerocket_settings == {} and node_class_settings(p, "gpu") is None
    assert p.pools["al"].bottlerocket_settings == {} and node_class_settings(p, "al") is None


def test_an_explicit_user_value_wins() -> None:
    own = {"kubernetes": {"device-ownership-from-security-context": False, "max-pods": 50}}
    p = stacks.plan(pools={"n": {"instanceTypes": ["trn1.32xlarge"], "ami": "bottlerocket",
                                 "bottlerocketSettings": own}})
    assert p.pools["n"].bottlerocket_settings == own
    assert node_class_settings(p, "n") == own
