"""The component provider: Pulumi's `ComponentProvider` (pulumi 3.272,
`pulumi/provider/experimental/component.py`) hosting `Platform`, with two changes.

- Arguments are checked and planned before the component is constructed (`arguments.plan_inputs`):
  an `InputPropertiesError` raised there reaches the engine as INVALID_ARGUMENT with one property
  error per problem; raised inside the constructor it would be wrapped as a generic failure.
- The schema's outputs are the hosted class's own annotations: it inherits the Python `Platform`'s
  children (`network`, `cluster`, …), which are Python attributes, not outputs.

`main()` serves it the way `component_provider_host` does (`pulumi/provider/experimental/host.py`):
the language host runs `python <plugin dir> <engine address>`, and the provider prints its port.
"""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

import pulumi
from pulumi.provider import ConstructResult
from pulumi.provider import main as serve
from pulumi.provider.experimental.analyzer import Analyzer, PropertyDefinition
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.provider import Provider
from pulumi.provider.server import ComponentInitError

from eks_devices import __version__
from eks_devices.core.config.keys import camel_case
from eks_devices.core.config.schema import GENERATED_NOTE
from eks_devices.core.names import TYPE_PACKAGE
from eks_devices.package.arguments import plan_inputs
from eks_devices.package.cluster_devices import ClusterDevices, component_args
from eks_devices.package.component import Platform
from eks_devices.platform import plan_config

SECRET_OUTPUTS = ("kubeconfig",)


class OwnOutputsAnalyzer(Analyzer):
    """The analyzer, reading a component's outputs from the annotations its own class declares."""

    def analyze_type(self, typ: type, *, is_component_output: bool) -> tuple[dict[str, PropertyDefinition],
                                                                              dict[str, str]]:
        if not (inspect.isclass(typ) and issubclass(typ, pulumi.ComponentResource)):
            return super().analyze_type(typ, is_component_output=is_component_output)
        own = {k: v for k, v in inspect.get_annotations(typ).items() if not k.startswith("_")}
        properties = {camel_case(k): self.analyze_property(v, typ, k, can_be_plain=False, is_component_output=True)
                      for k, v in own.items()}
        return properties, {camel_case(k): k for k in own}


HOSTED: tuple[type[pulumi.ComponentResource], ...] = (Platform, ClusterDevices)


class PlatformProvider(ComponentProvider):
    """Serves `eks-devices:index:Platform` and `eks-devices:index:ClusterDevices` to programs in any
    Pulumi language."""

    def __init__(self, version: str = __version__) -> None:
        self._name = TYPE_PACKAGE
        self.analyzer = OwnOutputsAnalyzer(TYPE_PACKAGE)
        result = self.analyzer.analyze(list(HOSTED))
        self._components = {c.__name__: c for c in HOSTED}
        self._component_defs = result["component_definitions"]
        self._type_defs = result["type_definitions"]
        self._external_enum_types = result["external_enum_types"]
        self._dependencies = sorted(result["dependencies"], key=lambda d: f"{d.name}{d.version}")
        Provider.__init__(self, version, json.dumps(package_schema(self, version)))

    def construct(self, name: str, resource_type: str, inputs: pulumi.Inputs,
                  options: pulumi.ResourceOptions | None = None) -> ConstructResult:
        self.validate_resource_type(self._name, resource_type)
        component = resource_type.rsplit(":", maxsplit=1)[-1]
        if component not in self._components:
            raise ValueError(f"unknown component {resource_type}; this package has {', '.join(self._components)}")
        # planned first: an InputPropertiesError → INVALID_ARGUMENT, nothing registered
        args = component_args(inputs) if component == ClusterDevices.__name__ else None
        plan = plan_inputs(inputs) if args is None else plan_config(component, args.config())
        for finding in plan.findings:  # only warnings remain: error findings refused the arguments
            pulumi.log.warn(f"{finding.slug} at {finding.path}: {finding.message} (fix: {finding.fix})")
        try:
            instance: pulumi.ComponentResource = (Platform.from_plan(name, plan, options) if args is None
                                                  else ClusterDevices.from_plan(name, plan, args, options))
        except Exception as exc:
            raise ComponentInitError(exc) from exc
        return ConstructResult(instance.urn, self.get_state(instance, self._component_defs[component]))


def package_schema(provider: PlatformProvider, version: str) -> dict[str, Any]:
    """The package schema the analyzer infers, with the secret outputs marked secret and no nulls (the
    SDK writes `"description": null` for enum members without a docstring, which Pulumi's
    metaschema refuses: a description is a string)."""
    spec = without_nulls(generate_schema(TYPE_PACKAGE, version, None, provider._component_defs,
                                         provider._type_defs, provider._dependencies).to_json())
    spec["description"] = ("EKS clusters for accelerated workloads: per node pool and device family, a DRA "
                           "driver or a device plugin, never both on one node.")
    spec["license"] = "Apache-2.0"
    spec["attribution"] = GENERATED_NOTE  # JSON has no comments: the schema's free-text provenance field
    for component in HOSTED:
        resource = spec["resources"][f"{TYPE_PACKAGE}:index:{component.__name__}"]
        resource["description"] = inspect.cleandoc(component.__doc__ or "")
        for key in set(SECRET_OUTPUTS) & set(resource["properties"]):
            resource["properties"][key]["secret"] = True
    return spec


def without_nulls(value: Any) -> Any:
    """`value` without null entries in its objects, and a provider referenced as `#/provider`: the SDK
    writes `#/resources/pulumi:providers:<package>`, which Pulumi's schema binder accepts with a
    deprecation warning (pulumi/pulumi `pkg/codegen/schema/bind.go`, issue #20029)."""
    if isinstance(value, dict):
        return {k: provider_ref(v) if k == "$ref" else without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def provider_ref(ref: Any) -> Any:
    """`/kubernetes/v4.34.2/schema.json#/resources/pulumi:providers:kubernetes` → `…#/provider`."""
    head, sep, token = str(ref).partition("#/resources/pulumi:providers:")
    return f"{head}#/provider" if sep and "/" not in token else ref


def schema_text(version: str = __version__) -> str:
    """The schema as committed in `components/schema.json`: sorted keys, two-space indent."""
    return json.dumps(json.loads(PlatformProvider(version).schema or "{}"), indent=2, sort_keys=True) + "\n"


def main() -> None:
    """Serve the provider: `python <components dir> <engine address> [flags]`."""
    serve(PlatformProvider(), sys.argv[1:])
