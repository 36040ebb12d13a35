"""Minimal JSON schemas for the node-pool CRDs the toolkit writes, and a structural check.

`kubernetes-validate` knows built-in kinds only; these schemas cover the fields of Karpenter's
`NodePool` and `EC2NodeClass` and Auto Mode's `NodeClass` that the toolkit sets or that the API
requires, with the constraints the CRDs enforce on them (required fields, enums, patterns, and the
static-NodePool and interface-layout rules). They are not the full CRDs: a field they do not list
is not checked. `validate` imports jsonschema lazily (it ships with kubernetes-validate), so the
schemas themselves stay importable anywhere.
"""

from __future__ import annotations

from typing import Any

from eks_devices.core import names
from eks_devices.core.knowledge.charts.nvidia_dra_driver import COMPUTE_DOMAIN_API
from eks_devices.core.names import (
    AUTO_MODE_NODE_CLASS_API,
    HOSTNAME_LABEL,
    KARPENTER_CAPACITY_TYPE_LABEL,
    KARPENTER_NODE_CLASS_API,
    KARPENTER_NODEPOOL_LABEL,
    NODE_POOL_API,
)
from eks_devices.core.vocabulary import EFA_ONLY, INTERFACE, TAINT_EFFECTS

DNS_SUBDOMAIN = rf"^{names.DNS_SUBDOMAIN}$"
QUALIFIED_NAME = rf"^{names.LABEL_KEY}$"
LABEL_VALUE = rf"^({names.QUALIFIED_NAME})?$"
QUANTITY = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
DURATION = r"^(([0-9]+(s|m|h))+|Never)$"
VOLUME_SIZE = r"^[1-9][0-9]*(Gi|G|Ti|T)$"
RESTRICTED_NODE_LABELS = [KARPENTER_NODEPOOL_LABEL, HOSTNAME_LABEL]  # Karpenter sets these itself
# A key whose domain (the part before the first '/', or the whole key) ends in karpenter.sh: Karpenter
# keeps that domain, so NodePool template labels and requirement keys may use only its capacity type.
KARPENTER_SH_DOMAIN = r"^[^/]*karpenter\.sh(/|$)"
# The same for karpenter.k8s.aws. Karpenter lets templates carry its own instance labels there; the
# toolkit never sets one (Karpenter derives them), so any is refused on template labels.
KARPENTER_AWS_DOMAIN = r"^[^/]*karpenter\.k8s\.aws(/|$)"


def _string(pattern: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "minLength": 1, **extra}
    if pattern:
        out["pattern"] = pattern
    return out


def _terms(*keys: str, id_pattern: str | None = None) -> dict[str, Any]:
    """A selector-term list: at least one term, each naming at least one of `keys`, `id` alone."""
    props: dict[str, Any] = {k: _string() for k in keys}
    if "tags" in keys:
        props["tags"] = {"type": "object", "minProperties": 1,
                         "additionalProperties": _string(), "propertyNames": {"minLength": 1}}
    if id_pattern:
        props["id"] = _string(id_pattern)
    return {"type": "array", "minItems": 1, "maxItems": 30, "items": {
        "type": "object", "properties": props, "additionalProperties": False, "minProperties": 1,
        "if": {"required": ["id"]}, "then": {"maxProperties": 1}}}


def _metadata(forbidden_names: tuple[str, ...] = ()) -> dict[str, Any]:
    name: dict[str, Any] = _string(DNS_SUBDOMAIN, maxLength=253)
    if forbidden_names:
        name["not"] = {"enum": list(forbidden_names)}
    return {"type": "object", "required": ["name"], "properties": {
        "name": name,
        "labels": {"type": "object", "propertyNames": {"pattern": QUALIFIED_NAME, "maxLength": 316},
                   "additionalProperties": {"type": "string", "pattern": LABEL_VALUE, "maxLength": 63}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    }}


def _object(api_version: str, kind: str, spec: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": ["apiVersion", "kind", "metadata", "spec"], "properties": {
        "apiVersion": {"const": api_version}, "kind": {"const": kind}, "metadata": metadata, "spec": spec}}


# karpenter-provider-aws v1.14.1 `pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml` ~571-605 (the Auto
# Mode NodeClass takes the same list under advancedNetworking); its two CEL rules are `_layout_problems`.
_NETWORK_INTERFACES = {
    "type": "array", "minItems": 1, "maxItems": 150,
    "items": {"type": "object", "required": ["networkCardIndex", "deviceIndex", "interfaceType"],
              "additionalProperties": False, "properties": {
                  "networkCardIndex": {"type": "integer", "minimum": 0},
                  "deviceIndex": {"type": "integer", "minimum": 0},
                  "interfaceType": {"enum": [INTERFACE, EFA_ONLY]}}},
    "contains": {"properties": {"networkCardIndex": {"const": 0}, "deviceIndex": {"const": 0},
                                "interfaceType": {"const": "interface"}}},
}
_TAGS = {"type": "object", "additionalProperties": {"type": "string"}, "propertyNames": {
    "minLength": 1,
    "not": {"anyOf": [{"pattern": "^kubernetes\\.io/cluster/"}, {"pattern": "^karpenter\\.sh/"},
                      {"enum": ["eks:eks-cluster-name", "karpenter.k8s.aws/ec2nodeclass",
                                "eks.amazonaws.com/nodeclass"]}]}}}
_RESERVATIONS = _terms("tags", "ownerID", id_pattern=r"^cr-[0-9a-z]+$")
_TAINT = {"type": "object", "required": ["key", "effect"], "properties": {
    # a value, when present, is not empty: Karpenter's pattern needs at least one character
    "key": _string(QUALIFIED_NAME), "value": {"type": "string", "pattern": QUALIFIED_NAME, "maxLength": 63},
    "effect": {"enum": list(TAINT_EFFECTS)}}}
_IN_KARPENTER_SH = {"pattern": KARPENTER_SH_DOMAIN, "not": {"const": KARPENTER_CAPACITY_TYPE_LABEL}}
_REQUIREMENT = {
    "type": "object", "required": ["key", "operator"], "properties": {
        "key": {**_string(QUALIFIED_NAME, maxLength=316),
                "not": {"anyOf": [{"enum": RESTRICTED_NODE_LABELS}, _IN_KARPENTER_SH]}},
        "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"]},
        "values": {"type": "array", "items": {"type": "string", "pattern": LABEL_VALUE, "maxLength": 63}}},
    "if": {"properties": {"operator": {"const": "In"}}},
    "then": {"required": ["values"], "properties": {"values": {"minItems": 1}}},
}

# karpenter v1.15.0 `pkg/apis/crds/karpenter.sh_nodepools.yaml`: spec takes these five fields and no other
# (the e2e tier holds every property named here against the CRD the Go module embeds).
NODE_POOL = _object(NODE_POOL_API, "NodePool", metadata=_metadata(), spec={
    "type": "object", "required": ["template"], "additionalProperties": False, "properties": {
        "template": {"type": "object", "required": ["spec"], "properties": {
            "metadata": {"type": "object", "properties": {"labels": {
                "type": "object", "maxProperties": 100,
                "propertyNames": {"pattern": QUALIFIED_NAME, "not": {"anyOf": [
                    {"enum": RESTRICTED_NODE_LABELS}, _IN_KARPENTER_SH, {"pattern": KARPENTER_AWS_DOMAIN}]}},
                "additionalProperties": {"type": "string", "pattern": LABEL_VALUE, "maxLength": 63}}}},
            "spec": {"type": "object", "required": ["nodeClassRef", "requirements"], "properties": {
                "nodeClassRef": {"type": "object", "required": ["group", "kind", "name"], "properties": {
                    "group": _string(r"^[^/]*$"), "kind": _string(), "name": _string()}},
                "requirements": {"type": "array", "maxItems": 100, "items": _REQUIREMENT},
                "taints": {"type": "array", "items": _TAINT},
                "startupTaints": {"type": "array", "items": _TAINT},
                "expireAfter": _string(DURATION)}}}},
        "replicas": {"type": "integer", "minimum": 0},
        "weight": {"type": "integer", "minimum": 1, "maximum": 100},
        "limits": {"type": "object", "additionalProperties": {
            "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": QUANTITY}]}},
        "disruption": {"type": "object", "required": ["consolidateAfter"], "properties": {
            "consolidateAfter": _string(DURATION),
            "consolidationPolicy": {"enum": ["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"]}}}},
    # Static NodePools (replicas set) may limit only `nodes` and take no weight.
    "if": {"required": ["replicas"]},
    "then": {"not": {"required": ["weight"]},
             "properties": {"limits": {"propertyNames": {"enum": ["nodes"]}}}},
})

# placementGroupSelector: one placement group, by name or by id (Karpenter 1.11+, Auto Mode 2026-05).
_PLACEMENT_GROUP = {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": False,
                    "properties": {"name": _string(), "id": _string(r"^pg-[0-9a-z]+$")}}

EC2_NODE_CLASS = _object(KARPENTER_NODE_CLASS_API, "EC2NodeClass", metadata=_metadata(), spec={
    "type": "object",
    "required": ["amiSelectorTerms", "subnetSelectorTerms", "securityGroupSelectorTerms"],
    "oneOf": [{"required": ["role"]}, {"required": ["instanceProfile"]}],
    # karpenter-provider-aws v1.15.0 `pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`: every spec field;
    # those the toolkit never sets are listed unchecked so that a field the CRD lacks is refused.
    "additionalProperties": False,
    "properties": {
        **{field: {} for field in ("amiFamily", "associatePublicIPAddress", "connectionTracking", "context",
                                   "cpuOptions", "detailedMonitoring", "enclaveOptions", "instanceStorePolicy",
                                   "ipPrefixCount", "kubelet")},
        "role": _string(), "instanceProfile": _string(),
        "amiSelectorTerms": {"type": "array", "minItems": 1, "maxItems": 30, "items": {
            "type": "object", "minProperties": 1, "properties": {
                "alias": _string(r"^(al2|al2023|bottlerocket|windows2019|windows2022|windows2025)@.+$",
                                 maxLength=30)}}},
        "subnetSelectorTerms": _terms("tags", id_pattern=r"^subnet-[0-9a-z]+$"),
        "securityGroupSelectorTerms": _terms("tags", "name", id_pattern=r"^sg-[0-9a-z]+$"),
        "capacityReservationSelectorTerms": _RESERVATIONS,
        "metadataOptions": {"type": "object", "properties": {
            "httpEndpoint": {"enum": ["enabled", "disabled"]},
            "httpProtocolIPv6": {"enum": ["enabled", "disabled"]},
            "httpPutResponseHopLimit": {"type": "integer", "minimum": 1, "maximum": 64},
            "httpTokens": {"enum": ["required", "optional"]}}},
        "blockDeviceMappings": {"type": "array", "maxItems": 50, "items": {
            "type": "object", "required": ["deviceName", "ebs"], "properties": {
                "deviceName": _string(), "rootVolume": {"type": "boolean"},
                "ebs": {"type": "object", "required": ["volumeSize"], "properties": {
                    "volumeSize": _string(VOLUME_SIZE),
                    "volumeType": {"enum": ["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"]},
                    "encrypted": {"type": "boolean"}, "deleteOnTermination": {"type": "boolean"}}}}}},
        "networkInterfaces": _NETWORK_INTERFACES,
        "placementGroupSelector": _PLACEMENT_GROUP,
        "userData": {"type": "string"},
        "tags": _TAGS}})

AUTO_MODE_NODE_CLASS = _object(AUTO_MODE_NODE_CLASS_API, "NodeClass", metadata=_metadata(("default",)), spec={
    "type": "object", "required": ["role", "subnetSelectorTerms", "securityGroupSelectorTerms"],
    "properties": {
        "role": _string(),
        "subnetSelectorTerms": _terms("tags", id_pattern=r"^subnet-[0-9a-z]+$"),
        "securityGroupSelectorTerms": _terms("tags", "name", id_pattern=r"^sg-[0-9a-z]+$"),
        "capacityReservationSelectorTerms": _terms("tags", "owner", id_pattern=r"^cr-[0-9a-z]+$"),
        "placementGroupSelector": _PLACEMENT_GROUP,
        "ephemeralStorage": {"type": "object", "required": ["size"], "properties": {
            "size": _string(VOLUME_SIZE),
            "iops": {"type": "integer", "minimum": 3000, "maximum": 16000},
            "throughput": {"type": "integer", "minimum": 125, "maximum": 1000}}},
        "advancedNetworking": {"type": "object", "properties": {
            "associatePublicIPAddress": {"type": "boolean"}, "networkInterfaces": _NETWORK_INTERFACES}},
        "tags": _TAGS}})

# NVIDIA ComputeDomain (the CRD of the NVIDIA DRA driver's chart at v0.4.1): the channel's claim template is
# required.
COMPUTE_DOMAIN = _object(COMPUTE_DOMAIN_API, "ComputeDomain", {
    "type": "object", "required": ["channel"], "properties": {
        "numNodes": {"type": "integer", "minimum": 0},
        "channel": {"type": "object", "required": ["resourceClaimTemplate"], "properties": {
            "resourceClaimTemplate": {"type": "object", "required": ["name"],
                                      "properties": {"name": _string(DNS_SUBDOMAIN)}},
            "allocationMode": {"enum": ["Single", "All"]}}}}}, _metadata())

SCHEMAS: dict[tuple[str, str], dict[str, Any]] = {
    (COMPUTE_DOMAIN_API, "ComputeDomain"): COMPUTE_DOMAIN,
    (NODE_POOL_API, "NodePool"): NODE_POOL,
    (KARPENTER_NODE_CLASS_API, "EC2NodeClass"): EC2_NODE_CLASS,
    (AUTO_MODE_NODE_CLASS_API, "NodeClass"): AUTO_MODE_NODE_CLASS,
}


def validate(obj: dict[str, Any]) -> list[str]:
    """Every structural problem of one object, as `path: message` lines (empty when it passes)."""
    import jsonschema  # a test/render-time dependency, kept off the module's import path

    key = (obj.get("apiVersion"), obj.get("kind"))
    schema = SCHEMAS.get(key)  # type: ignore[arg-type]
    if schema is None:
        return [f"no schema for apiVersion {key[0]!r} kind {key[1]!r}"]
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in error.absolute_path) or "(object)"
        problems.append(f"{where}: {error.message}")
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    for where, layout in (("spec.networkInterfaces", spec.get("networkInterfaces")),
                          ("spec.advancedNetworking.networkInterfaces",
                           (spec.get("advancedNetworking") or {}).get("networkInterfaces"))):
        if isinstance(layout, list):
            problems += [f"{where}: {p}" for p in _layout_problems(layout)]
    return problems


def _layout_problems(layout: list[Any]) -> list[str]:
    """The interface list's CEL rule: no card/device pair twice, at most one EFA-only interface per card."""
    slots: dict[tuple[Any, Any], int] = {}
    efa_only: dict[Any, int] = {}
    for nic in layout:
        if isinstance(nic, dict):
            slot = (nic.get("networkCardIndex"), nic.get("deviceIndex"))
            slots[slot] = slots.get(slot, 0) + 1
            if nic.get("interfaceType") == EFA_ONLY:
                efa_only[slot[0]] = efa_only.get(slot[0], 0) + 1
    return ([f"card {c} device {d} appears {n} times" for (c, d), n in slots.items() if n > 1]
            + [f"card {c} has {n} {EFA_ONLY} interfaces (at most one)" for c, n in efa_only.items() if n > 1])
