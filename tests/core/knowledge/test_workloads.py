"""Which releases run a Deployment (their install waits for a node): read from the merged values
with the chart's defaults, as the chart templates decide it."""

from __future__ import annotations

import pytest

from eks_devices.core.derive import daemonsets
from eks_devices.core.knowledge.charts import CHARTS, runs_deployment
from eks_devices.core.values import chart_value
from support import stacks


def _releases() -> dict:
    plan = stacks.build(stacks.config("managed-node-groups", pools={
        "dra": {"replicas": 1, "instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "dra"}},
        "plugin": {"replicas": 1, "instanceTypes": ["p4d.24xlarge"], "devices": {"nvidia": "device-plugin",
                                                                                 "efa": "device-plugin"}},
        "trn": {"replicas": 1, "instanceTypes": ["trn2.48xlarge"], "devices": {"neuron": "dra"}},
        "inf": {"replicas": 1, "instanceTypes": ["inf2.xlarge"]}}))
    return plan.releases


def test_the_toolkit_values_run_daemonsets_only() -> None:
    releases = _releases()
    assert set(releases) == {k for k, c in CHARTS.items() if c.deployment_switches is not None}
    assert {key: runs_deployment(key, r.values) for key, r in releases.items()} == dict.fromkeys(releases, False)


@pytest.mark.parametrize("key, values, expected", [
    ("nvidia-dra-driver", {"resources": {"computeDomains": {"enabled": True}}}, True),
    ("nvidia-dra-driver", {"resources": {"computeDomains": None}}, False),  # a null drops the default (true)
    ("nvidia-dra-driver", {"webhook": {"enabled": True}}, True),
    ("nvidia-device-plugin", {"gfd": {"enabled": True}}, True),
    ("neuron-device-plugin", {"scheduler": {"enabled": True}}, True),
    ("aws-dranet", {"anything": True}, False),
])
def test_a_switch_in_the_values_runs_a_deployment(key: str, values: dict, expected: bool) -> None:
    assert runs_deployment(key, {**_releases()[key].values, **values}) is expected


def test_a_chart_the_table_does_not_know_is_assumed_to_run_one() -> None:
    assert runs_deployment("someone-elses-chart", _releases()["aws-dranet"].values) is True


def test_a_null_parent_deletes_the_chart_default_for_the_agent_switch_too() -> None:
    """The overlap proof reads an agent's `enabled` switch the same way: `resources.gpus: null`
    deletes `resources.gpus.enabled` (default true), so the NVIDIA DRA plugin manages no GPUs."""
    agent = CHARTS["nvidia-dra-driver"].agents[0]
    assert daemonsets.enabled(agent, {}) is True  # the chart's default
    assert daemonsets.enabled(agent, {"resources": {"gpus": {"enabled": False}}}) is False
    assert daemonsets.enabled(agent, {"resources": {"gpus": None}}) is False
    assert chart_value({"a": {"b": 1}}, "a.b", 7) == 1 and chart_value({}, "a.b", 7) == 7
    assert chart_value({"a": None}, "a.b", 7) is None
