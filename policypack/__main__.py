"""eks-devices as a CrossGuard policy pack, for any Pulumi program on EKS.

`pulumi preview --policy-pack policypack` runs these stack policies on every resource of the
program — built with eks-devices or not: Karpenter and Auto Mode NodePools, EKS and pulumi-eks node
groups with their launch templates, Helm releases and charts of the known device charts, raw
DaemonSets by image, Karpenter's release, ResourceClaims. Each policy is a rule of the eks-devices
core's registry that can be read from resources (`@on_resources` beside the rule's plan check), with
the rule's slug as its name; a rule whose violations are errors is mandatory, a warning advisory,
unless the policy pack config says otherwise
(`pulumi preview --policy-pack policypack --policy-pack-config config.json`, e.g.
`{"efa-not-shareable": "advisory"}`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    import eks_devices  # noqa: F401  (installed from requirements.txt)
except ImportError:  # run from a checkout without installing: the package's source is beside the pack
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "components"))

import pulumi
from pulumi_policy import (
    EnforcementLevel,
    PolicyPack,
    PolicyResource,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import (
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
)

from eks_devices.core.derive.resources import Resource
from eks_devices.core.rules import RULES, check_resources, resource_rules

PACK = "eks-devices"
_UNKNOWN = {UNKNOWN_ARCHIVE_VALUE, UNKNOWN_ARRAY_VALUE, UNKNOWN_ASSET_VALUE, UNKNOWN_BOOLEAN_VALUE,
            UNKNOWN_NUMBER_VALUE, UNKNOWN_OBJECT_VALUE, UNKNOWN_STRING_VALUE}


def _plain(value: Any) -> Any:
    """Plain data from the analyzer's proxies; a value unknown during preview becomes None; an asset
    becomes `{"path": …}` or `{"text": …}` (the core reads a Helm release's valueYamlFiles from them)."""
    if isinstance(value, pulumi.FileAsset):
        return {"path": value.path}
    if isinstance(value, pulumi.StringAsset):
        return {"text": value.text}
    if isinstance(value, Mapping):
        return {str(k): _item(value, k) for k in value}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_item(value, i) for i in range(len(value))]
    return None if isinstance(value, str) and value in _UNKNOWN else value


def _item(container: Any, key: Any) -> Any:
    try:
        return _plain(container[key])
    except UnknownValueError:
        return None


def resources(args: StackValidationArgs) -> list[Resource]:
    """The stack's resources as the core reads them."""
    def one(r: PolicyResource) -> Resource:
        return Resource(r.resource_type, r.name, r.urn, _plain(r.props), r.parent.urn if r.parent else "",
                        {k: tuple(d.urn for d in deps) for k, deps in r.property_dependencies.items()})
    return [one(r) for r in args.resources]


def _policy(slug: str) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        for violation in check_resources(resources(args), [slug]):
            report_violation(violation.message, violation.urn)
    level = EnforcementLevel.MANDATORY if RULES[slug].severity == "error" else EnforcementLevel.ADVISORY
    return StackValidationPolicy(name=slug, description=RULES[slug].summary.replace("`", ""), validate=validate,
                                 enforcement_level=level)


PolicyPack(name=PACK, enforcement_level=EnforcementLevel.MANDATORY,
           policies=[_policy(r.slug) for r in resource_rules()])
