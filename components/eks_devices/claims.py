"""`ClaimTemplates`: the stack's declared claims as Kubernetes objects.

Reads the Plan's claims (already built and fit-checked by the pure core) and creates each one with
pulumi-kubernetes: a typed `resource.k8s.io/v1` ResourceClaimTemplate or ResourceClaim, or, for a
ComputeDomain channel, the NVIDIA DRA driver's ComputeDomain whose controller creates the
channel template. Entries of kind `extended-resource` create nothing (Pods request the resource).
The namespaces must exist; claims depend on `depends_on` (the device software that creates the
DeviceClasses and CRDs) so they are applied after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from eks_devices.core.knowledge.charts import CRD_CHARTS
from eks_devices.core.model import BuiltClaim, Plan
from eks_devices.core.names import CLAIM_TEMPLATES_TYPE
from eks_devices.inputs import check_plan, name_problems, provider_problems


@dataclass(frozen=True)
class ClaimTemplatesArgs:
    """What the claims take: the `plan` (its declared claims), the cluster's Kubernetes provider,
    what every object waits for (`depends_on`), and what each waits for by name: the namespaces
    created for them, the DeviceClasses the toolkit creates (a claim waits for the class it names;
    a chart's class need not exist first) and the releases by chart key (a custom resource waits for
    the release that installs its CRD)."""

    plan: Plan
    k8s_provider: pulumi.ProviderResource
    depends_on: Sequence[pulumi.Resource] = ()
    namespaces: Mapping[str, pulumi.Resource] = field(default_factory=dict)
    device_classes: Mapping[str, pulumi.Resource] = field(default_factory=dict)
    releases: Mapping[str, pulumi.Resource] = field(default_factory=dict)


class ClaimTemplates(pulumi.ComponentResource):
    """One Kubernetes object per declared claim, parented here and applied through `k8s_provider`."""

    pulumi_type = CLAIM_TEMPLATES_TYPE  # the type token; Pulumi's component analyzer reads it from the class

    objects: dict[str, pulumi.CustomResource]

    def __init__(self, name: str, args: ClaimTemplatesArgs, opts: pulumi.ResourceOptions | None = None):
        plan = args.plan
        check_plan("ClaimTemplates", plan, [*name_problems(name), *provider_problems(args.k8s_provider, required=True)])
        super().__init__(CLAIM_TEMPLATES_TYPE, name, None, opts)
        self.objects = {}
        summary: dict[str, Any] = {}
        for claim in plan.claims:
            built = claim.built
            if built is None:
                continue
            manifest = built.manifest
            resource_name = f"{name}-{claim.name}"
            child = pulumi.ResourceOptions(parent=self, provider=args.k8s_provider,
                                           depends_on=[*args.depends_on, *_waits_for(built, args)])
            # a claim's, a template's and a ComputeDomain's spec is immutable (the ComputeDomain CRD's
            # `self == oldSelf`, cited in core/knowledge/replacement.py): a change
            # replaces the object, the old one first (its name is fixed); Pods keep the claims already made
            immutable = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
                replace_on_changes=["spec"], delete_before_replace=True))
            if built.kind == "ResourceClaimTemplate":
                obj: pulumi.CustomResource = k8s.resource.v1.ResourceClaimTemplate(
                    resource_name, metadata=manifest["metadata"], spec=manifest["spec"], opts=immutable)
            elif built.kind == "ResourceClaim":
                obj = k8s.resource.v1.ResourceClaim(
                    resource_name, metadata=manifest["metadata"], spec=manifest["spec"], opts=immutable)
            else:
                obj = k8s.apiextensions.CustomResource(
                    resource_name, api_version=manifest["apiVersion"], kind=manifest["kind"],
                    metadata=manifest["metadata"], spec=manifest["spec"], opts=immutable)
            self.objects[claim.name] = obj
            summary[claim.name] = {"kind": built.kind, "namespace": built.namespace,
                                   "podClaim": built.pod_claim(), "nodeSelector": built.node_selector}
        self.claims = summary
        self.register_outputs({"claims": summary})


def _waits_for(built: BuiltClaim, args: ClaimTemplatesArgs) -> list[pulumi.Resource]:
    """What one claim object needs first: its namespace if created here, the toolkit's DeviceClasses
    it names, and for a custom resource the release installing its CRD."""
    manifest = built.manifest
    found = [args.namespaces.get(built.namespace), *(args.device_classes.get(n) for n in built.device_class_names)]
    chart = CRD_CHARTS.get(f"{manifest['apiVersion']}/{manifest['kind']}")
    if chart is not None:
        found.append(args.releases.get(chart))
    return [r for r in found if r is not None]
