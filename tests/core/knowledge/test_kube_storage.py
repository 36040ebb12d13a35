"""`kube_storage`: the empty lists the API server does not store (judged against the server in
tests/e2e/test_pulumi_refresh.py), left out only where its types omit them."""

from __future__ import annotations

import copy

from eks_devices.core.knowledge import kube_storage
from eks_devices.core.knowledge.device_classes import RESOURCE_API_V1

CLAIM = {"apiVersion": RESOURCE_API_V1, "kind": "ResourceClaim", "metadata": {"name": "c", "labels": {}},
         "spec": {"devices": {
             "requests": [{"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com", "selectors": []}},
                          {"name": "b", "firstAvailable": [{"name": "x", "deviceClassName": "gpu.nvidia.com",
                                                            "selectors": []}]}],
             "constraints": [{"requests": [], "matchAttribute": "gpu.nvidia.com/productName"}],
             "config": [{"requests": [], "opaque": {"driver": "gpu.nvidia.com", "parameters": {"list": []}}}]}}}


def test_a_claim_is_stored_without_its_empty_selectors_and_requests_and_is_not_changed() -> None:
    sent = copy.deepcopy(CLAIM)
    stored = kube_storage.as_stored(sent)
    assert sent == CLAIM
    devices = stored["spec"]["devices"]
    assert devices["requests"] == [{"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                                   {"name": "b", "firstAvailable": [{"name": "x", "deviceClassName": "gpu.nvidia.com"}]}]
    assert devices["constraints"] == [{"matchAttribute": "gpu.nvidia.com/productName"}]
    assert devices["config"] == [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {"list": []}}}]
    assert stored["metadata"] == {"name": "c", "labels": {}}  # no path of the table: as sent


def test_a_template_is_stored_alike_and_a_custom_resource_as_sent() -> None:
    template = {**CLAIM, "kind": "ResourceClaimTemplate", "spec": {"spec": CLAIM["spec"]}}
    assert kube_storage.as_stored(template)["spec"]["spec"] == kube_storage.as_stored(CLAIM)["spec"]
    node_pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "spec": {"disruption": {"budgets": []}}}
    assert kube_storage.as_stored(node_pool) == node_pool
