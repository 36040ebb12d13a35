"""The plan: labels and taints per pool, one release per (family, manager), DeviceClass ownership,
Karpenter DRA settings, and the overlap proof on the shipped stacks."""

from __future__ import annotations

import pytest

from eks_devices.core import planner as planning
from eks_devices.core.derive import scope
from support import stacks

STATIC = {"provisioning": "static", "replicas": 1}


@pytest.fixture(scope="module", params=["dev", "staging", "prod"])
def shipped(request: pytest.FixtureRequest) -> planning.Plan:
    return stacks.shipped_plan(request.param)


def test_shipped_stacks_are_clean(shipped: planning.Plan) -> None:
    """No finding but staging's static pools on @latest (pre-production: warned, and left so)."""
    expected = ["nodePools.gpu-mig.amiVersion", "nodePools.trn-static.amiVersion"] \
        if shipped.spec.cluster.name == "ml-staging" else []
    assert [(f.slug, f.path) for f in shipped.findings] == [("karpenter-ami-latest", p) for p in expected]


def test_shipped_stacks_run_one_manager_per_family(shipped: planning.Plan) -> None:
    assert scope.overlaps(shipped) == []
    for pool in shipped.pools.values():
        running = scope.running_on(shipped, pool)
        for family, res in pool.managers.items():
            mine = {r.manager for r in running if r.family == family}
            assert mine == ({res.manager} if res.manager != "none" else set()), (pool.name, family)


def test_toolkit_labels_everywhere_and_eks_labels_in_auto_mode_only() -> None:
    auto = stacks.plan("auto-mode", pools={"p": {"instanceTypes": ["p5.48xlarge"]}})
    mng = stacks.plan("managed-node-groups", pools={"p": {"instanceTypes": ["p5.48xlarge"], **STATIC}})
    expected_toolkit = {"eks-devices.io/pool": "p", "eks-devices.io/device-manager-nvidia": "dra",
                        "eks-devices.io/device-manager-efa": "dra"}
    assert auto.pools["p"].labels == {**expected_toolkit, "eks.amazonaws.com/device-manager-nvidia": "dra",
                                      "eks.amazonaws.com/device-manager-efa": "dra"}
    assert mng.pools["p"].labels == expected_toolkit


def test_families_without_devices_get_no_label() -> None:
    p = stacks.plan(pools={"p": {"instanceTypes": ["g6.xlarge"]}})
    assert "eks-devices.io/device-manager-efa" not in p.pools["p"].labels
    assert "eks-devices.io/device-manager-neuron" not in p.pools["p"].labels


def test_default_taints_and_user_taints() -> None:
    p = stacks.plan(pools={
        "gpu": {"instanceTypes": ["g6.xlarge"]},
        "trn": {"instanceTypes": ["trn1.32xlarge"], **STATIC},
        "own": {"instanceTypes": ["g6.xlarge"], "taints": [{"key": "nvidia.com/gpu", "effect": "NoExecute"}]},
    })
    assert p.pools["gpu"].taints == ({"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},)
    assert p.pools["trn"].taints == ({"key": "aws.amazon.com/neuron", "value": "true", "effect": "NoSchedule"},)
    assert p.pools["own"].taints == ({"key": "nvidia.com/gpu", "effect": "NoExecute"},)


def test_one_release_per_family_and_manager_scoped_by_label() -> None:
    p = stacks.plan(pools={
        "a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}},
        "b": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"}},
        "c": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}},
    })
    assert set(p.releases) == {"nvidia-dra-driver", "nvidia-device-plugin"}
    dra = p.releases["nvidia-dra-driver"]
    assert dra.pools == ("a", "b")
    assert dra.values["kubeletPlugin"]["nodeSelector"] == {"eks-devices.io/device-manager-nvidia": "dra"}
    assert dra.values["gpuResourcesEnabledOverride"] is True
    assert p.releases["nvidia-device-plugin"].values["nodeSelector"] == {
        "eks-devices.io/device-manager-nvidia": "device-plugin"}
    assert p.pools["a"].releases == {"nvidia": "nvidia-dra-driver"}


def test_neuron_runs_as_two_releases_when_pools_use_both_modes() -> None:
    p = stacks.plan("managed-node-groups", pools={
        "d": {"instanceTypes": ["trn1.32xlarge"], **STATIC, "devices": {"neuron": "dra"}},
        "q": {"instanceTypes": ["inf2.xlarge"], **STATIC, "devices": {"neuron": "device-plugin"}},
    })
    dra, plugin = p.releases["neuron-dra-driver"], p.releases["neuron-device-plugin"]
    assert (dra.values["draDriver"]["enabled"], dra.values["devicePlugin"]["enabled"]) == (True, False)
    assert (plugin.values["draDriver"]["enabled"], plugin.values["devicePlugin"]["enabled"]) == (False, True)
    assert dra.key != plugin.key and dra.namespace == plugin.namespace == "kube-system"
    assert not scope.overlaps(p)


def test_inferentia_stays_on_the_neuron_plugin() -> None:
    """The Neuron chart keeps its DRA driver off `inf*` types: `auto` picks the plugin for Inferentia
    (with the reason), and an explicit `dra` on Inferentia is an error, since no driver would run."""
    p = stacks.plan("managed-node-groups", pools={
        "inf": {"instanceTypes": ["inf2.8xlarge"], **STATIC},
        "trn": {"instanceTypes": ["trn1.32xlarge"], **STATIC},
    })
    assert p.pools["inf"].manager("neuron") == "device-plugin"
    assert "serves Trainium only (the chart keeps it off inf2.8xlarge)" in p.pools["inf"].managers["neuron"].reason
    assert p.pools["trn"].manager("neuron") == "dra"
    forced = stacks.plan("managed-node-groups", pools={
        "inf": {"instanceTypes": ["inf2.8xlarge"], **STATIC, "devices": {"neuron": "dra"}}})
    [gap] = scope.unserved(forced)
    assert (gap.pool, gap.family, gap.manager, gap.instance_type) == ("inf", "neuron", "dra", "inf2.8xlarge")
    assert any(f.slug == "device-software-unserved" and f.severity == "error" for f in forced.findings)


def test_auto_mode_installs_nothing_and_creates_upstream_classes() -> None:
    p = stacks.plan("auto-mode", pools={"p": {"instanceTypes": ["p5.48xlarge"]}})
    assert p.releases == {}
    assert {(c.name, c.owner) for c in p.device_classes} == {
        ("gpu.nvidia.com", "toolkit"), ("efa.networking.k8s.aws", "toolkit")}
    assert p.pools["p"].releases == {"nvidia": "auto-mode", "efa": "auto-mode"}


def test_self_managed_classes_belong_to_charts() -> None:
    p = stacks.plan(pools={"p": {"instanceTypes": ["p5.48xlarge"], **STATIC, "computeDomains": True}})
    owners = {c.name: c.owner for c in p.device_classes}
    assert owners["gpu.nvidia.com"] == "nvidia-dra-driver"
    assert owners["efa.networking.k8s.aws"] == "aws-dranet"
    assert "compute-domain-default-channel.nvidia.com" in owners
    assert not any(c.created_by_toolkit for c in p.device_classes)


@pytest.mark.parametrize(("pools", "settings"), [
    ({"p": {"instanceTypes": ["p5.48xlarge"]}}, {"enableDRA": True}),
    ({"p": {"instanceTypes": ["p5.48xlarge"], "devices": {"efa": "device-plugin"}}},
     {"awsFeatureGates": {"draNVIDIAGPU": True}}),
    ({"p": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "device-plugin"}}},
     {"awsFeatureGates": {"draEFA": True}}),
    ({"p": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "device-plugin", "efa": "device-plugin"}}}, {}),
    # static pools never need Karpenter's DRA gates
    ({"p": {"instanceTypes": ["p5.48xlarge"], **STATIC}}, {}),
])
def test_karpenter_dra_settings_follow_dynamic_pools(pools: dict, settings: dict) -> None:
    p = stacks.plan(pools=pools)
    assert p.karpenter is not None
    assert p.karpenter.dra_settings == settings
    static = any(v.get("provisioning") == "static" for v in pools.values())
    assert p.karpenter.static_capacity is static
    expected = {**settings, **({"featureGates": {"staticCapacity": True}} if static else {})}
    assert p.karpenter.values == {"settings": expected}


def test_user_overrides_merge_last() -> None:
    p = stacks.plan(pools={"p": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}},
                        helmValues={"nvidia-device-plugin": {"priorityClassName": "system-node-critical"}},
                        chartVersions={"nvidia-device-plugin": "0.19.3"})
    release = p.releases["nvidia-device-plugin"]
    assert release.values["priorityClassName"] == "system-node-critical"
    assert release.values["nodeSelector"] == release.toolkit_values["nodeSelector"]
    assert release.version == "0.19.3"


def test_time_slicing_paths() -> None:
    p = stacks.plan(pools={
        "plugin": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"},
                   "gpuSharing": {"strategy": "time-slicing", "replicas": 4}},
        "dra": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"},
                "gpuSharing": {"strategy": "time-slicing", "replicas": 2}},
    })
    assert p.pools["plugin"].labels["nvidia.com/device-plugin.config"] == "time-slicing-4"
    assert "replicas: 4" in p.releases["nvidia-device-plugin"].values["config"]["map"]["time-slicing-4"]
    assert p.pools["dra"].node_class_annotations == {"karpenter.k8s.aws/nvidia-consumable-capacity": "2"}
    dra_values = p.releases["nvidia-dra-driver"].values
    assert dra_values["featureGates"] == {"ConsumableShares": True}
    assert dra_values["consumableShares"] == 2


def test_static_karpenter_time_slicing_uses_the_driver_gpu_config() -> None:
    """Static Karpenter pools never go through Karpenter's claim simulation: auto picks DRA on 1.35,
    and they time-slice through the driver's GpuConfig (TimeSlicingSettings), not consumable capacity."""
    p = stacks.plan("karpenter", "1.35", pools={
        "sliced": {"instanceTypes": ["g6.xlarge"], **STATIC, "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}})
    assert p.pools["sliced"].manager("nvidia") == "dra"
    assert p.pools["sliced"].node_class_annotations == {}
    values = p.releases["nvidia-dra-driver"].values
    assert values["featureGates"] == {"TimeSlicingSettings": True} and "consumableShares" not in values
    assert not p.errors and not stacks.findings(p, "karpenter-time-slicing")


def test_bottlerocket_nvidia_dra_disables_bundled_plugin() -> None:
    p = stacks.plan("managed-node-groups", pools={
        "dra": {"instanceTypes": ["g6.xlarge"], **STATIC, "ami": "bottlerocket"},
        "plugin": {"instanceTypes": ["g6.xlarge"], **STATIC, "ami": "bottlerocket", "devices": {"nvidia": "device-plugin"}},
    })
    assert p.pools["dra"].bottlerocket_settings == {"kubelet-device-plugins": {"nvidia": {"enabled": False}}}
    assert p.pools["dra"].labels["nvidia.com/gpu.present"] == "true"
    assert p.pools["plugin"].bottlerocket_settings == {}
    # the DRA pool runs the DRA driver alone: its bundled plugin is off
    running = {(r.family, r.manager, r.source) for r in scope.running_on(p, p.pools["dra"])}
    assert running == {("nvidia", "dra", "nvidia-dra-driver")}
    # the plugin pool is served by Bottlerocket's bundled plugin alone: no chart plugin beside it, no DRA
    running = {(r.family, r.manager, r.source) for r in scope.running_on(p, p.pools["plugin"])}
    assert running == {("nvidia", "device-plugin", "bottlerocket")}
    assert "nvidia-device-plugin" not in p.releases


@pytest.mark.parametrize(("itype", "efa_interfaces"), [
    ("p5.48xlarge", 32), ("p5en.48xlarge", 16), ("p4d.24xlarge", 4), ("trn1.32xlarge", 8),
])
def test_mng_efa_layout(itype: str, efa_interfaces: int) -> None:
    p = stacks.plan("managed-node-groups", pools={"p": {"instanceTypes": [itype], **STATIC}})
    layout = p.pools["p"].network_interfaces
    assert layout is not None
    assert layout[0] == {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    assert sum(1 for n in layout if n["interfaceType"] == "efa-only") == efa_interfaces
    assert len({(n["networkCardIndex"], n["deviceIndex"]) for n in layout}) == len(layout)


def test_mng_efa_layout_skips_cards_without_efa() -> None:
    """p6-b300.48xlarge: 17 cards, card 0 ENA-only, EFA on cards 1-16 (EC2 DescribeInstanceTypes)."""
    p = stacks.plan("managed-node-groups", pools={"p": {"instanceTypes": ["p6-b300.48xlarge"], **STATIC}})
    layout = p.pools["p"].network_interfaces
    assert layout is not None
    efa_cards = [n["networkCardIndex"] for n in layout if n["interfaceType"] == "efa-only"]
    assert efa_cards == list(range(1, 17))
    assert all(n["deviceIndex"] == 0 for n in layout)


def test_identity_changes_with_any_manager() -> None:
    a = stacks.plan(pools={"p": {"instanceTypes": ["p5.48xlarge"]}}).pools["p"].identity
    b = stacks.plan(pools={"p": {"instanceTypes": ["p5.48xlarge"], "devices": {"efa": "device-plugin"}}}).pools["p"].identity
    assert a != b
    assert a == "nvidia=dra,efa=dra,neuron=none"


def test_a_null_override_of_a_read_mapping_deletes_it_rather_than_crashing() -> None:
    mig = {"instanceTypes": ["p5.48xlarge"], **STATIC, "devices": {"nvidia": "dra"},
           "gpuSharing": {"strategy": "mig", "profile": "1g.10gb"}}
    p = stacks.plan("managed-node-groups", pools={"m": mig}, helmValues={"nvidia-dra-driver": {"featureGates": None}})
    assert "mig-partitions" in stacks.slugs(p, "warning")
