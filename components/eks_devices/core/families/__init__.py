"""One descriptor per device family (`base.DeviceFamily`): every family-specific fact, with its sources.

`FAMILY[name]` is the descriptor for a family word of the vocabulary; code that needs a fact of a
family asks it here instead of naming the family. Families other distributions add (`vocabulary.FAMILY_PLUGINS`)
are loaded here, after the built-in ones.
"""

from __future__ import annotations

import importlib
import re

from eks_devices.core.families.base import DeviceFamily
from eks_devices.core.families.efa import EFA
from eks_devices.core.families.neuron import NEURON
from eks_devices.core.families.nvidia import NVIDIA
from eks_devices.core.vocabulary import FAMILIES, FAMILY_PLUGINS, Family, PluginError, plugin_modules


def _plugin(name: str) -> DeviceFamily:
    """The descriptor of an added family's module, refused with the reason when it is not one."""
    descriptor = getattr(importlib.import_module(f"{FAMILY_PLUGINS}.{name}"), "DESCRIPTOR", None)
    if not isinstance(descriptor, DeviceFamily) or descriptor.name != name or name in (NVIDIA.name, EFA.name,
                                                                                         NEURON.name):
        raise PluginError(f"{FAMILY_PLUGINS}.{name}: given {descriptor!r:.80}; accepted: a module whose DESCRIPTOR "
                          f"is a DeviceFamily named {name!r}, a family the toolkit does not ship")
    return descriptor


SHORT_KEY = re.compile(r"[a-z][a-zA-Z0-9]*")  # a claim short key: a camelCase config word


def _keyed(plugins: tuple[DeviceFamily, ...]) -> tuple[DeviceFamily, ...]:
    """Added families, refused unless each claim short key is a camelCase word of its own (claims are keyed by it)."""
    taken = [NVIDIA.short_key, EFA.short_key, NEURON.short_key]
    for d in plugins:
        if not SHORT_KEY.fullmatch(d.short_key) or d.short_key in taken:
            raise PluginError(f"{FAMILY_PLUGINS}.{d.name}: given short_key {d.short_key!r}; accepted: a camelCase word "
                              f"that no other family's short_key is ({', '.join(taken)} are taken)")
        taken.append(d.short_key)
    return plugins


PLUGINS: tuple[DeviceFamily, ...] = _keyed(tuple(_plugin(name) for name in plugin_modules(FAMILY_PLUGINS)))
FAMILY: dict[Family, DeviceFamily] = {d.name: d for d in (NVIDIA, EFA, NEURON, *PLUGINS)}
DESCRIPTORS: tuple[DeviceFamily, ...] = tuple(FAMILY[f] for f in FAMILIES)  # in the vocabulary's order

__all__ = ["DESCRIPTORS", "EFA", "FAMILY", "NEURON", "NVIDIA", "DeviceFamily"]
