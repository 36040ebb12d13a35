"""The device-family descriptors (`core/families/`): one per vocabulary family, and the tables the rest
of the core derives from them."""

from __future__ import annotations

from eks_devices.core.config.claims import EXTENDED_RESOURCES
from eks_devices.core.derive.karpenter_gates import GATES, dra_gates, karpenter_dra_settings
from eks_devices.core.families import DESCRIPTORS, FAMILY
from eks_devices.core.knowledge import catalog, charts, device_classes
from eks_devices.core.vocabulary import CHART_KEYS, FAMILIES


def test_one_descriptor_per_vocabulary_family_in_its_order() -> None:
    assert tuple(d.name for d in DESCRIPTORS) == FAMILIES == tuple(FAMILY)


def test_each_family_names_a_known_chart_per_manager_and_its_upstream_class() -> None:
    for d in DESCRIPTORS:
        assert set(d.releases) == {"dra", "device-plugin"}
        assert set(d.releases.values()) <= set(CHART_KEYS) and set(d.releases.values()) <= set(charts.CHARTS)
        assert {a.family for key in d.releases.values() for a in charts.CHARTS[key].agents} == {d.name}
        assert d.device_class in device_classes.UPSTREAM_DEVICE_CLASSES
        assert device_classes.CLASS_DRIVERS[d.device_class] == d.dra_driver
        assert d.dra_driver in d.device_class_cel
        assert d.sources


def test_the_tables_derived_from_the_descriptors() -> None:
    assert charts.RELEASE_FOR == {
        ("nvidia", "dra"): "nvidia-dra-driver", ("nvidia", "device-plugin"): "nvidia-device-plugin",
        ("efa", "dra"): "aws-dranet", ("efa", "device-plugin"): "aws-efa-k8s-device-plugin",
        ("neuron", "dra"): "neuron-dra-driver", ("neuron", "device-plugin"): "neuron-device-plugin"}
    assert EXTENDED_RESOURCES == {"nvidia.com/gpu": "nvidia", "vpc.amazonaws.com/efa": "efa",
                                  "aws.amazon.com/neuron": "neuron"}
    assert GATES == {"nvidia": "draNVIDIAGPU", "efa": "draEFA"}  # Karpenter v1.15 settings.awsFeatureGates
    assert device_classes.AUTO_MODE_CLASSES == ("gpu.nvidia.com", "efa.networking.k8s.aws")


def test_karpenter_settings_cover_exactly_the_dra_families() -> None:
    assert karpenter_dra_settings({"nvidia", "efa", "neuron"}) == {"enableDRA": True}
    assert karpenter_dra_settings({"nvidia"}) == {"awsFeatureGates": {"draNVIDIAGPU": True}}
    assert karpenter_dra_settings({"efa", "neuron"}) == {"awsFeatureGates": {"draEFA": True}}
    assert karpenter_dra_settings({"neuron"}) == {}
    for dra in ({"nvidia"}, {"efa"}, {"nvidia", "efa"}, set()):
        assert dra_gates(karpenter_dra_settings(dra)) == dra


def test_every_catalogued_family_member_has_the_family_devices() -> None:
    """A descriptor's family is one the catalogue can tell apart on instance types."""
    for d in DESCRIPTORS:
        assert any(t.has(d.name) for t in catalog.instance_types().values())


def test_the_devices_keys_and_claim_configs_come_from_the_descriptors() -> None:
    from eks_devices.core.config.claims import DRIVER_CONFIG_KINDS
    from eks_devices.core.config.stack import Devices
    from eks_devices.core.derive.claims import DRIVER_FAMILIES

    assert tuple(Devices.model_fields) == FAMILIES
    assert all(field.default == "auto" for field in Devices.model_fields.values())
    assert DRIVER_FAMILIES == {"gpu.nvidia.com": "nvidia", "compute-domain.nvidia.com": "nvidia",
                               "dra.net": "efa", "neuron.aws.com": "neuron"}
    assert set(DRIVER_CONFIG_KINDS) == {"gpu.nvidia.com", "compute-domain.nvidia.com", "neuron.aws.com"}
    assert {d.short_key for d in DESCRIPTORS} == {"gpus", "efa", "neurons"}
    assert {d.efa_alignment: d.name for d in DESCRIPTORS if d.efa_alignment} == {"gpu": "nvidia", "neuron": "neuron"}


def test_the_catalogue_counts_each_family_through_its_descriptor() -> None:
    for t in catalog.instance_types().values():
        assert (t.count("nvidia"), t.count("neuron"), t.count("efa")) == (
            t.gpu_count, t.neuron_count, t.max_efa_interfaces)
        assert (t.has("nvidia"), t.has("neuron"), t.has("efa")) == (t.has_nvidia, t.has_neuron, t.has_efa)


def test_a_chart_keeps_its_dra_driver_off_the_types_it_does_not_serve() -> None:
    types = ["trn2.48xlarge", "inf2.xlarge", "trn1.32xlarge", "inf1.2xlarge"]
    assert charts.kept_off("neuron", "dra", types) == (["inf1.2xlarge", "inf2.xlarge"], "Trainium")
    assert charts.kept_off("neuron", "device-plugin", types) == ([], "")
    assert charts.kept_off("nvidia", "dra", ["p5.48xlarge"]) == ([], "")


def test_family_node_settings_follow_the_pool() -> None:
    from eks_devices.core.families.base import NodeFacts

    nvidia, neuron = FAMILY["nvidia"], FAMILY["neuron"]
    assert nvidia.node_labels and nvidia.bottlerocket_settings and neuron.bottlerocket_settings
    dra = NodeFacts("dra", "karpenter", "bottlerocket", "none", None, True)
    sliced = NodeFacts("device-plugin", "managed-node-groups", "al2023", "time-slicing", 4, True)
    assert nvidia.node_labels(dra) == {"nvidia.com/gpu.present": "true"}
    assert nvidia.node_labels(NodeFacts("dra", "auto-mode", "bottlerocket", "none", None, True)) == {}
    assert nvidia.node_labels(sliced) == {"nvidia.com/device-plugin.config": "time-slicing-4"}
    assert nvidia.bottlerocket_settings(dra) == {"kubelet-device-plugins": {"nvidia": {"enabled": False}}}
    assert nvidia.bottlerocket_settings(sliced)["kubelet-device-plugins"]["nvidia"]["time-slicing"]["replicas"] == 4
    assert neuron.bottlerocket_settings(dra) == {"kubernetes": {"device-ownership-from-security-context": True}}
    assert neuron.bottlerocket_settings(NodeFacts("none", "karpenter", "bottlerocket", "none", None, False)) == {}
