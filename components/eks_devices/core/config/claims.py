"""The `eks-devices:claims` stack key: named device claims the platform hands to workloads.

Each entry names the node pool(s) meant to serve it, whether it is a ResourceClaimTemplate (one
claim per Pod, the default), a shared ResourceClaim, or a plain extended-resource request, and the
devices it asks for — as a short shape (`gpus`, `mig`, a family's count, `alignWith`, ...) or as
raw `resource.k8s.io/v1` requests. The models here only check form; `_problems` checks what needs
several fields (the spec module reports both with config paths), and the fit check
(`eks_devices.core.derive.fit`) decides whether the pools can allocate it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import Field, create_model, model_validator

from eks_devices.core import names
from eks_devices.core.config.base import Model, empty_list
from eks_devices.core.config.errors import worded
from eks_devices.core.config.keys import snake_case
from eks_devices.core.families import DESCRIPTORS, EFA, NEURON, NVIDIA, DeviceFamily
from eks_devices.core.vocabulary import EfaAlignment, PluginError

DNS_LABEL = worded(rf"^{names.DNS_LABEL_63}$", "a Kubernetes name (DNS label): up to 63 lower-case letters, "
                   "digits and '-', starting and ending with a letter or digit")
# and at most 253 characters
DNS_SUBDOMAIN = re.compile(worded(rf"^{names.DNS_SUBDOMAIN}$", "a Kubernetes object name (DNS subdomain): lower-case "
                                  "letters, digits, '-' and '.', starting and ending with a letter or digit"))
# `opaque.driver`; at most 63 characters
DRIVER_NAME = worded(rf"^{names.DRIVER_NAME}$", "a DRA driver name, a DNS subdomain such as gpu.nvidia.com")
QUALIFIED_NAME = re.compile(rf"^{names.ATTRIBUTE_NAME}$")  # `matchAttribute`, `distinctAttribute`
# The API server's limit on one opaque config's `parameters`, as serialized JSON.
OPAQUE_PARAMETERS_MAX_BYTES = 10 * 1024
# NVML's MIG profile names: `<slices>g.<memory>gb`, `+me` for the instance that owns the media engines
MIG_PROFILE = worded(r"^[0-9]+g\.[0-9]+gb(\+me)?$", "a MIG profile such as 1g.10gb or 1g.10gb+me")
# Extended resources a workload may request instead of a claim, and their device family.
EXTENDED_RESOURCES = {d.extended_resource: d.name for d in DESCRIPTORS}  # what each family's device plugin advertises
NEURON_GROUP_SIZES = (1, 4, 8, 16)


class Gpus(Model):
    count: int = Field(default=1, ge=1, le=16)
    model: str | None = Field(default=None, pattern=worded(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,40}$", "a GPU model word "
                                 "such as H100: up to 41 letters, digits, spaces and ._-"))
    min_memory_gib: int | None = Field(default=None, ge=1, le=4096, alias="minMemoryGiB")


class _CountOrAll(Model):
    count: int | None = Field(default=None, ge=1)
    all_: bool = Field(default=False, alias="all")

    @model_validator(mode="after")
    def _one(self) -> _CountOrAll:
        if (self.count is None) == (not self.all_):
            raise ValueError("either count: N or all: true")
        return self


def _counted_shape(family: DeviceFamily) -> type[_CountOrAll]:
    """The short shape of a family whose claims count its devices (`<short_key>: {count: N} | {all: true}`)."""
    return create_model(  # type: ignore[call-overload,no-any-return]
        family.short_key.capitalize(), __base__=_CountOrAll, __module__=__name__,
        __doc__=f"{family.title} devices: a count, or every {family.title} device on the node (`all: true`).",
        count=(int | None, Field(default=None, ge=1, le=family.claim_count_max)))


COUNTED: tuple[DeviceFamily, ...] = tuple(d for d in DESCRIPTORS if d.claim_count_max)
"""The families whose claim short shape is a count (their descriptors' `claim_count_max`)."""
COUNTED_SHAPES = {d.name: _counted_shape(d) for d in COUNTED}


class Mig(Model):
    profile: str = Field(pattern=MIG_PROFILE)
    count: int = Field(default=1, ge=1, le=7)


class TimeSlicing(Model):
    interval: Literal["Default", "Short", "Medium", "Long"] = "Default"


class ComputeDomainChannel(Model):
    allocation_mode: Literal["Single", "All"] = "Single"


class CelSelector(Model):
    expression: str = Field(min_length=1, max_length=10 * 1024)


class DeviceSelector(Model):
    cel: CelSelector


class ExactDeviceRequest(Model):
    device_class_name: str = Field(pattern=DNS_SUBDOMAIN.pattern)
    selectors: list[DeviceSelector] = Field(default_factory=empty_list, max_length=32)
    allocation_mode: Literal["ExactCount", "All"] = "ExactCount"
    count: int | None = Field(default=None, ge=1)


class DeviceSubRequest(ExactDeviceRequest):
    name: str = Field(pattern=DNS_LABEL)


class DeviceRequest(Model):
    name: str = Field(pattern=DNS_LABEL)
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] | None = Field(default=None, min_length=1, max_length=8)


class DeviceConstraint(Model):
    requests: list[str] = Field(default_factory=empty_list)
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class OpaqueConfig(Model):
    driver: str = Field(pattern=DRIVER_NAME, max_length=63)
    parameters: dict[str, Any]


class DeviceClaimConfig(Model):
    requests: list[str] = Field(default_factory=empty_list)
    opaque: OpaqueConfig


class _ClaimDevices(Model):
    """What a claim is and where it fits, and the devices of the short shape that come before the counted ones."""

    pools: list[str] = Field(min_length=1)
    kind: Literal["template", "claim", "extended-resource"] = "template"
    namespace: str = Field(default="default", pattern=DNS_LABEL)
    create_namespace: bool = True  # the toolkit creates a namespace other than Kubernetes' own; false: it exists
    gpus: Gpus | None = None
    mig: Mig | None = None
    time_slicing: TimeSlicing | None = None


_Counted = create_model(  # one optional key per counted family, named by its descriptor's short key
    "_Counted", __base__=_ClaimDevices, __module__=__name__,
    **{snake_case(d.short_key): (COUNTED_SHAPES[d.name] | None, None) for d in COUNTED})  # type: ignore[call-overload]


class Claim(_Counted):  # type: ignore[misc,valid-type]
    """One named claim: where it should fit, what object it is, and the devices it asks for."""

    logical_neuron_core: Literal[1, 2] | None = None
    align_with: EfaAlignment = "none"
    compute_domain_channel: ComputeDomainChannel | None = None
    requests: list[DeviceRequest] | None = Field(default=None, min_length=1, max_length=32)
    constraints: list[DeviceConstraint] = Field(default_factory=empty_list, max_length=32)
    config: list[DeviceClaimConfig] = Field(default_factory=empty_list, max_length=32)
    extended_resources: dict[str, int] = Field(default_factory=dict)

    def shape(self, family: DeviceFamily) -> Any:
        """The short shape's entry for a family (`gpus`, a count), or None when the claim does not ask for it."""
        return getattr(self, snake_case(family.short_key), None)

    def count(self, family: DeviceFamily) -> int | str | None:
        """How many devices of a counted family the short shape asks for: a number, "all", or None."""
        shape = self.shape(family)
        if shape is None:
            return None
        return "all" if shape.all_ else int(shape.count or 1)

    @property
    def shorthand(self) -> tuple[str, ...]:
        """The short-shape keys this claim uses, in config spelling."""
        keys = {"gpus": self.gpus, "mig": self.mig, "timeSlicing": self.time_slicing,
                **{d.short_key: self.shape(d) for d in COUNTED},
                "logicalNeuronCore": self.logical_neuron_core, "computeDomainChannel": self.compute_domain_channel}
        out = tuple(k for k, v in keys.items() if v is not None)
        return out + (("alignWith",) if self.align_with != "none" else ())


_CLAIM_KEYS = {*_ClaimDevices.model_fields, *Claim.__annotations__}  # the keys every claim has
_TAKEN = sorted(d.short_key for d in COUNTED if snake_case(d.short_key) in _CLAIM_KEYS)
if _TAKEN:  # an added family's short key would replace a key every claim has
    raise PluginError(f"claims short keys: given {', '.join(_TAKEN)}; accepted: a short key no claim key has "
                      f"({', '.join(sorted(_CLAIM_KEYS))} are taken)")

Problem = tuple[str, str, str]  # (config path, what was given, what is accepted)

# The opaque config each known driver decodes: its apiVersion and kinds (each family's descriptor).
DRIVER_CONFIG_KINDS = {driver: kinds for d in DESCRIPTORS for driver, kinds in d.opaque_configs.items()}
TIME_SLICE_INTERVALS = ("Default", "Short", "Medium", "Long")
DEVICE_KEYS = ("gpus", "mig", *(d.short_key for d in COUNTED))  # the short-shape keys that ask for devices


def problems(name: str, claim: Claim, pools: set[str], kubernetes: tuple[int, int] | None = None) -> list[Problem]:
    """Checks across a claim's fields; the spec module turns them into ConfigProblems. `kubernetes`, the
    cluster's minor, decides which CEL functions its API server accepts in a selector."""
    at = f"claims.{name}"
    out: list[Problem] = []
    if not DNS_SUBDOMAIN.fullmatch(name) or len(name) > 253:
        out.append((at, repr(name), "a Kubernetes object name: lower-case letters, digits, '-' and '.'"))
    known = ", ".join(sorted(pools)) or "it declares none"
    for i, pool in enumerate(claim.pools):
        if pool not in pools:
            out.append((f"{at}.pools.{i}", repr(pool), f"a node pool of this stack ({known})"))
    short = claim.shorthand
    if claim.kind == "extended-resource":
        out += _extended_problems(at, claim, short)
    elif claim.extended_resources:
        out.append((f"{at}.extendedResources", "extended resources on a DRA claim",
                    "extendedResources only with kind: extended-resource"))
    elif claim.requests is not None:
        if short:
            out.append((at, f"requests together with {', '.join(short)}",
                        "either raw requests (with constraints/config) or the short shape, not both"))
        out += _raw_problems(at, claim, kubernetes)
    else:
        if claim.constraints or claim.config:
            out.append((at, "constraints/config without requests", "constraints and config only with raw requests"))
        out += _short_problems(at, claim, short)
    return out


def _extended_problems(at: str, claim: Claim, short: tuple[str, ...]) -> list[Problem]:
    out: list[Problem] = []
    if not claim.extended_resources:
        out.append((f"{at}.extendedResources", "nothing", f"a map such as {{{next(iter(EXTENDED_RESOURCES))}: 1}}"))
    for key, count in claim.extended_resources.items():
        if key not in EXTENDED_RESOURCES:
            out.append((f"{at}.extendedResources.{key}", repr(key), ", ".join(EXTENDED_RESOURCES)))
        if count < 1:
            out.append((f"{at}.extendedResources.{key}", repr(count), "a count of 1 or more"))
    if short or claim.requests is not None:
        out.append((at, "device requests on an extended-resource entry",
                    "only extendedResources with kind: extended-resource"))
    return out


def _short_problems(at: str, claim: Claim, short: tuple[str, ...]) -> list[Problem]:
    out: list[Problem] = []
    if claim.compute_domain_channel is not None:
        if set(short) != {"computeDomainChannel"}:
            out.append((at, ", ".join(short), "computeDomainChannel on its own (the ComputeDomain makes the claim)"))
        if claim.kind != "template":
            out.append((f"{at}.kind", repr(claim.kind), "'template': the ComputeDomain creates a claim template"))
        return out
    if not set(DEVICE_KEYS) & set(short):
        out.append((at, "no devices", f"{', '.join(DEVICE_KEYS)}, computeDomainChannel, requests or extendedResources"))
    if claim.gpus and claim.mig:
        out.append((f"{at}.mig", "mig together with gpus", "either whole GPUs (gpus) or MIG devices (mig)"))
    if (claim.gpus or claim.mig) and claim.neurons:
        out.append((f"{at}.neurons", "neurons together with GPUs", "GPUs or Neuron devices in one claim, not both"))
    if claim.time_slicing and not claim.gpus:
        out.append((f"{at}.timeSlicing", "time-slicing without gpus", "timeSlicing together with gpus"))
    if claim.logical_neuron_core and not claim.neurons:
        out.append((f"{at}.logicalNeuronCore", repr(claim.logical_neuron_core), "logicalNeuronCore with neurons"))
    return out + _alignment_problems(at, claim)


def _alignment_problems(at: str, claim: Claim) -> list[Problem]:
    """`alignWith` names the family aligned with EFA: the claim asks for both, in counts that can be aligned."""
    partner = next((d for d in DESCRIPTORS if d.efa_alignment and d.efa_alignment == claim.align_with), None)
    if partner is None:
        return []
    fabric = claim.shape(EFA)
    if claim.shape(partner) is None or fabric is None:
        return [(f"{at}.alignWith", repr(claim.align_with),
                 f"alignWith: {claim.align_with} together with {partner.short_key} and {EFA.short_key}")]
    if partner is NVIDIA and fabric.count is not None:
        low, high = sorted((claim.gpus.count, fabric.count))
        if high % low:
            return [(f"{at}.{EFA.short_key}.count", repr(fabric.count),
                     f"a multiple or divisor of gpus.count ({claim.gpus.count}): aligned devices are "
                     "split evenly over PCIe roots")]
    if partner is NEURON and claim.neurons.count is not None and claim.neurons.count not in NEURON_GROUP_SIZES:
        return [(f"{at}.neurons.count", repr(claim.neurons.count),
                 "1, 4, 8 or 16 connected devices (the Neuron device groups) when aligned with EFA")]
    return []


def _raw_problems(at: str, claim: Claim, kubernetes: tuple[int, int] | None) -> list[Problem]:
    from eks_devices.core.cel import CelError, compile_expression  # parses CEL only when raw requests are used

    out: list[Problem] = []
    names: set[str] = set()
    for i, request in enumerate(claim.requests or []):
        where = f"{at}.requests.{i}"
        if request.name in names:
            out.append((f"{where}.name", repr(request.name), "a request name used once"))
        names.add(request.name)
        if (request.exactly is None) == (request.first_available is None):
            out.append((where, "both or neither of exactly and firstAvailable", "exactly one of them"))
        alternatives = [("exactly", request.exactly)] if request.exactly else []
        alternatives += [(f"firstAvailable.{j}", sub) for j, sub in enumerate(request.first_available or [])]
        for path, exact in alternatives:
            if exact is None:
                continue
            if isinstance(exact, DeviceSubRequest):
                if f"{request.name}/{exact.name}" in names:
                    out.append((f"{where}.{path}.name", repr(exact.name), "a subrequest name used once in its request"))
                names.add(f"{request.name}/{exact.name}")
            if exact.allocation_mode == "All" and exact.count is not None:
                out.append((f"{where}.{path}.count", repr(exact.count), "no count with allocationMode: All"))
            for k, selector in enumerate(exact.selectors):
                try:
                    compile_expression(selector.cel.expression, kubernetes)
                except CelError as exc:
                    out.append((f"{where}.{path}.selectors.{k}.cel.expression", repr(selector.cel.expression)[:60],
                                f"a CEL expression that compiles ({exc})"))
    for kind, entries in (("constraints", claim.constraints), ("config", claim.config)):
        for i, entry in enumerate(entries):
            for j, ref in enumerate(entry.requests):
                if ref not in names:
                    out.append((f"{at}.{kind}.{i}.requests.{j}", repr(ref), "the name of a request of this claim"))
                elif ref in entry.requests[:j]:
                    out.append((f"{at}.{kind}.{i}.requests.{j}", repr(ref), "each request named once per entry"))
    for i, config in enumerate(claim.config):
        out += _driver_config_problems(f"{at}.config.{i}.opaque.parameters", config.opaque)
        size = len(json.dumps(config.opaque.parameters, separators=(",", ":")).encode())
        if size > OPAQUE_PARAMETERS_MAX_BYTES:
            out.append((f"{at}.config.{i}.opaque.parameters", f"{size} bytes of JSON",
                        f"at most {OPAQUE_PARAMETERS_MAX_BYTES} bytes (the API server's limit)"))
    for i, constraint in enumerate(claim.constraints):
        attrs = [a for a in (constraint.match_attribute, constraint.distinct_attribute) if a]
        if len(attrs) != 1:
            out.append((f"{at}.constraints.{i}", "matchAttribute and distinctAttribute" if attrs else "neither",
                        "exactly one of matchAttribute or distinctAttribute"))
        for attr in attrs:
            if not QUALIFIED_NAME.fullmatch(attr):
                out.append((f"{at}.constraints.{i}", repr(attr), "a fully qualified attribute such as "
                            "resource.kubernetes.io/pcieRoot"))
    return out


def _driver_config_problems(at: str, opaque: OpaqueConfig) -> list[Problem]:
    """An opaque config for a driver the toolkit knows: the apiVersion and kind it decodes, and the
    NVIDIA sharing strategy and time-slice interval it accepts."""
    known = DRIVER_CONFIG_KINDS.get(opaque.driver)
    if known is None:
        return []
    api_version, kinds = known
    params = opaque.parameters
    out: list[Problem] = []
    if params.get("apiVersion") != api_version:
        out.append((f"{at}.apiVersion", repr(params.get("apiVersion")),
                    f"{api_version} (what {opaque.driver} decodes)"))
    if params.get("kind") not in kinds:
        out.append((f"{at}.kind", repr(params.get("kind")), f"one of {', '.join(kinds)}"))
    sharing = params.get("sharing")
    if params.get("kind") in ("GpuConfig", "MigDeviceConfig") and isinstance(sharing, dict):
        if sharing.get("strategy") not in ("TimeSlicing", "MPS"):
            out.append((f"{at}.sharing.strategy", repr(sharing.get("strategy")), "TimeSlicing or MPS"))
        slicing = sharing.get("timeSlicingConfig")
        interval = slicing.get("interval", "Default") if isinstance(slicing, dict) else "Default"
        if interval not in TIME_SLICE_INTERVALS:
            out.append((f"{at}.sharing.timeSlicingConfig.interval", repr(interval), ", ".join(TIME_SLICE_INTERVALS)))
    if params.get("kind") == "NeuronConfig" and params.get("logicalNeuronCore", 1) not in (1, 2):
        out.append((f"{at}.logicalNeuronCore", repr(params.get("logicalNeuronCore")), "1 or 2"))
    return out
