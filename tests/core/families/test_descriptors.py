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
