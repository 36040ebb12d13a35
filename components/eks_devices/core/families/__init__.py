"""One descriptor per device family (`base.DeviceFamily`): every family-specific fact, with its sources.

`FAMILY[name]` is the descriptor for a family word of the vocabulary; code that needs a fact of a
family asks it here instead of naming the family.
"""

from __future__ import annotations

from eks_devices.core.families.base import DeviceFamily
from eks_devices.core.families.efa import EFA
from eks_devices.core.families.neuron import NEURON
from eks_devices.core.families.nvidia import NVIDIA
from eks_devices.core.vocabulary import FAMILIES, Family

FAMILY: dict[Family, DeviceFamily] = {d.name: d for d in (NVIDIA, EFA, NEURON)}
DESCRIPTORS: tuple[DeviceFamily, ...] = tuple(FAMILY[f] for f in FAMILIES)  # in the vocabulary's order

__all__ = ["DESCRIPTORS", "EFA", "FAMILY", "NEURON", "NVIDIA", "DeviceFamily"]
