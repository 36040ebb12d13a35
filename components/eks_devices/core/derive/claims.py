"""Workload-side claims: ResourceClaimTemplate / ResourceClaim builders as plain dicts.

Every builder returns a `BuiltClaim`: the Kubernetes object (`resource.k8s.io/v1`, or the NVIDIA
`ComputeDomain` whose controller creates the channel template), the `devices` part the scheduler
allocates (what the fit check evaluates), the device families claimed, and the nodeSelector that
keeps a Pod on pools whose manager is DRA for those families — the toolkit's own
`eks-devices.io/device-manager-<family>` label, valid in every mode. Shapes follow the EKS User Guide's DRA examples:
the aligned GPU+EFA template matches on `resource.kubernetes.io/pcieRoot`, the aligned Neuron+EFA
template on `resource.aws.com/devicegroup<N>_id`, time-slicing uses the opaque `GpuConfig`, Logical
NeuronCore the opaque `NeuronConfig`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from eks_devices.core.config.claims import COUNTED, EXTENDED_RESOURCES, Claim
from eks_devices.core.config.stack import FAMILIES, Family
from eks_devices.core.families import DESCRIPTORS, EFA, NEURON, NVIDIA
from eks_devices.core.knowledge.device_classes import (
    CHANNEL_CLASS,
    CLASS_DRIVERS,
    EFA_CLASS,
    GPU_CLASS,
    MIG_CLASS,
    NEURON_CLASS,
    RESOURCE_API_V1,
)
from eks_devices.core.knowledge.devices import PCIE_ROOT, device_group
from eks_devices.core.knowledge.kube_storage import DEVICE_CLAIM, without_empty
from eks_devices.core.model import BuiltClaim
from eks_devices.core.names import MANAGED_BY, manager_label

GPU_DRIVER, NEURON_DRIVER = NVIDIA.dra_driver, NEURON.dra_driver
GPU_CONFIG_API, NEURON_CONFIG_API = (d.opaque_configs[d.dra_driver][0] for d in (NVIDIA, NEURON))
# DRA driver → device family, for claims naming classes by their driver.
DRIVER_FAMILIES: dict[str, Family] = {driver: d.name for d in DESCRIPTORS for driver in d.drivers}


# --- requests, constraints, config ------------------------------------------------------------

def exact(name: str, device_class: str, count: int | str = 1, selectors: Iterable[str] = ()) -> dict[str, Any]:
    """A request for `count` devices of a class (or every matching device with count="all")."""
    body: dict[str, Any] = {"deviceClassName": device_class}
    if count == "all":
        body["allocationMode"] = "All"
    else:
        body.update({"allocationMode": "ExactCount", "count": int(count)})
    exprs = list(selectors)
    if exprs:
        body["selectors"] = [{"cel": {"expression": e}} for e in exprs]
    return {"name": name, "exactly": body}


def first_available(name: str, alternatives: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A request satisfied by the first alternative that fits (`exact()` dicts, tried in order)."""
    subs = [{"name": alt["name"], **alt["exactly"]} for alt in alternatives]
    return {"name": name, "firstAvailable": subs}


def match(attribute: str, requests: Sequence[str] = ()) -> dict[str, Any]:
    """Devices of `requests` (all requests when empty) must share `attribute`."""
    return {"requests": list(requests), "matchAttribute": attribute}


def opaque(driver: str, parameters: dict[str, Any], requests: Sequence[str] = ()) -> dict[str, Any]:
    return {"requests": list(requests), "opaque": {"driver": driver, "parameters": parameters}}


def gpu_selectors(model: str | None = None, min_memory_gib: int | None = None) -> list[str]:
    """CEL for a GPU model and a minimum memory. The model is a whole word of the driver's
    `productName` (words split at spaces and hyphens, any case): `L4` selects "NVIDIA L4" but not
    "NVIDIA L40S", `H20` not "NVIDIA H200", `A100` selects "NVIDIA A100-SXM4-40GB"."""
    out = []
    if model:
        word = model.replace(".", "[.]")  # the config allows letters, digits, ' ', '.', '_' and '-'
        out.append(f"device.attributes['{GPU_DRIVER}'].productName.matches('(?i)(^|[ -]){word}([ -]|$)')")
    if min_memory_gib:
        out.append(f"device.capacity['{GPU_DRIVER}'].memory.compareTo(quantity('{min_memory_gib}Gi')) >= 0")
    return out


def time_slicing_config(requests: Sequence[str], interval: str = "Default") -> dict[str, Any]:
    return opaque(GPU_DRIVER, {"apiVersion": GPU_CONFIG_API, "kind": "GpuConfig", "sharing": {
        "strategy": "TimeSlicing", "timeSlicingConfig": {"interval": interval}}}, requests)


def neuron_config(requests: Sequence[str], logical_neuron_core: int) -> dict[str, Any]:
    return opaque(NEURON_DRIVER, {"apiVersion": NEURON_CONFIG_API, "kind": "NeuronConfig",
                                  "logicalNeuronCore": logical_neuron_core}, requests)


def families_of(devices: Mapping[str, Any], class_drivers: Mapping[str, str] | None = None) -> tuple[Family, ...]:
    """The device families a claim's requests draw on, from their DeviceClasses' drivers."""
    drivers = {**CLASS_DRIVERS, **(class_drivers or {})}
    found: set[Family] = set()
    for request in devices.get("requests", []):
        alternatives = [request["exactly"]] if "exactly" in request else request.get("firstAvailable", [])
        for alt in alternatives:
            family = DRIVER_FAMILIES.get(drivers.get(alt["deviceClassName"], ""))
            if family:
                found.add(family)
    return tuple(f for f in FAMILIES if f in found)


def node_selector(families: Iterable[Family]) -> dict[str, str]:
    """Keeps a Pod on nodes whose manager is DRA for every family it claims."""
    return {manager_label(f): "dra" for f in FAMILIES if f in set(families)}


# --- objects ----------------------------------------------------------------------------------

def build(name: str, requests: Sequence[dict[str, Any]], constraints: Sequence[dict[str, Any]] = (),
          config: Sequence[dict[str, Any]] = (), *, shared: bool = False, namespace: str = "default",
          class_drivers: Mapping[str, str] | None = None) -> BuiltClaim:
    """A ResourceClaimTemplate (or, `shared`, a ResourceClaim) from raw requests."""
    devices: dict[str, Any] = {"requests": [dict(r) for r in requests]}
    if constraints:
        devices["constraints"] = [dict(c) for c in constraints]
    if config:
        devices["config"] = [dict(c) for c in config]
    # no empty list the API server would store as absent: sent, it would replace the claim on every `pulumi up`
    devices = without_empty(devices, DEVICE_CLAIM)
    metadata = {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)}
    if shared:
        manifest = {"apiVersion": RESOURCE_API_V1, "kind": "ResourceClaim", "metadata": metadata,
                    "spec": {"devices": devices}}
    else:
        manifest = {"apiVersion": RESOURCE_API_V1, "kind": "ResourceClaimTemplate", "metadata": metadata,
                    "spec": {"spec": {"devices": devices}}}
    families = families_of(devices, class_drivers)
    return BuiltClaim(name, namespace, manifest, devices, families, node_selector(families))


def gpu_claim(name: str, count: int = 1, *, model: str | None = None, min_memory_gib: int | None = None,
              time_slicing: str | None = None, shared: bool = False, namespace: str = "default") -> BuiltClaim:
    """`count` whole GPUs, optionally of a model and a minimum memory, optionally time-sliced."""
    config = [time_slicing_config(["gpu"], time_slicing)] if time_slicing else []
    return build(name, [exact("gpu", GPU_CLASS, count, gpu_selectors(model, min_memory_gib))], (), config,
                 shared=shared, namespace=namespace)


def time_sliced_gpu_claim(name: str, interval: str = "Default", *, namespace: str = "default") -> BuiltClaim:
    """A shared ResourceClaim on one GPU that its Pods time-slice (driver gate TimeSlicingSettings)."""
    return gpu_claim(name, 1, time_slicing=interval, shared=True, namespace=namespace)


def mig_claim(name: str, profile: str, count: int = 1, *, shared: bool = False,
              namespace: str = "default") -> BuiltClaim:
    """MIG devices of one profile, all from the same parent GPU (EKS User Guide MIG example)."""
    selector = f"device.attributes['{GPU_DRIVER}'].profile == '{profile}'"
    return build(name, [exact("mig", MIG_CLASS, count, [selector])], [match(f"{GPU_DRIVER}/parentUUID")],
                 shared=shared, namespace=namespace)


def efa_claim(name: str, count: int | str = 1, *, namespace: str = "default") -> BuiltClaim:
    """EFA devices (never shared: one Pod per EFA, so always a template)."""
    return build(name, [exact(EFA.short_key, EFA_CLASS, count)], namespace=namespace)


def gpu_efa_aligned_claim(name: str, gpus: int = 1, efas: int | str = 1, *, model: str | None = None,
                          min_memory_gib: int | None = None, time_slicing: str | None = None,
                          shared: bool = False, namespace: str = "default") -> BuiltClaim:
    """GPUs and EFAs aligned on `resource.kubernetes.io/pcieRoot`.

    The devices split into `min(gpus, efas)` units, each its own request pair and constraint (`gpu-<i>` and
    the EFA short key with `-<i>`; just `gpu` and the key for one unit): 8 GPUs + 32 EFAs are 8 units of 1 GPU + 4
    EFAs, 8 GPUs + 4 EFAs are 4 units of 2 GPUs + 1 EFA. `efas="all"` is one unit: the GPUs plus
    every EFA on the node, all on one PCIe root (the EKS User Guide EFA page's `allocationMode: All` variant)."""
    selectors = gpu_selectors(model, min_memory_gib)
    units = 1 if efas == "all" else min(gpus, int(efas))
    if units > 1 and (gpus % units or int(efas) % units):
        raise ValueError(f"{gpus} GPUs and {efas} EFAs do not split evenly over PCIe roots")
    requests, constraints = [], []
    for u in range(units):
        gpu, fabric = ("gpu", EFA.short_key) if units == 1 else (f"gpu-{u}", f"{EFA.short_key}-{u}")
        requests += [exact(gpu, GPU_CLASS, gpus // units, selectors),
                     exact(fabric, EFA_CLASS, "all" if efas == "all" else int(efas) // units)]
        constraints.append(match(PCIE_ROOT, [gpu, fabric]))
    gpu_names = [r["name"] for r in requests if r["name"].startswith("gpu")]
    config = [time_slicing_config(gpu_names, time_slicing)] if time_slicing else []
    return build(name, requests, constraints, config, shared=shared, namespace=namespace)


def neuron_claim(name: str, count: int | str = 1, *, logical_neuron_core: int | None = None,
                 instance_type: str | None = None, connected: bool = False, shared: bool = False,
                 namespace: str = "default") -> BuiltClaim:
    """Neuron devices; `connected` keeps them in one device group of their count (1, 4, 8, 16);
    `logical_neuron_core` adds the opaque NeuronConfig (LNC 1 or 2)."""
    selectors = [f"device.attributes['{NEURON_DRIVER}'].instanceType == '{instance_type}'"] if instance_type else []
    constraints = [match(device_group(int(count)), ["neurons"])] if connected and count != "all" else []
    config = [neuron_config(["neurons"], logical_neuron_core)] if logical_neuron_core else []
    return build(name, [exact("neurons", NEURON_CLASS, count, selectors)], constraints, config,
                 shared=shared, namespace=namespace)


def neuron_efa_aligned_claim(name: str, neurons: int | str = 4, efas: int | str = 4, *,
                             logical_neuron_core: int | None = None, shared: bool = False,
                             namespace: str = "default") -> BuiltClaim:
    """Connected Neuron devices and EFAs in one Neuron device group: `devicegroup<N>_id` with N the Neuron
    count (16 for every device), as the EKS User Guide EFA page's template aligning Neuron devices with EFAs."""
    group = 16 if neurons == "all" else int(neurons)
    requests = [exact("neurons", NEURON_CLASS, neurons), exact(EFA.short_key, EFA_CLASS, efas)]
    config = [neuron_config(["neurons"], logical_neuron_core)] if logical_neuron_core else []
    return build(name, requests, [match(device_group(group), ["neurons", EFA.short_key])], config, shared=shared,
                 namespace=namespace)


def compute_domain_channel(name: str, allocation_mode: str = "Single", *, namespace: str = "default") -> BuiltClaim:
    """A ComputeDomain (multi-node NVLink); its controller creates the channel ResourceClaimTemplate
    named `name`, which Pods reference. `devices` is that template's channel request: one device of
    the default-channel class in either mode. `All` does not reach the scheduler; the controller puts
    it in the template's opaque `ComputeDomainChannelConfig` (with the domain's UID, known only once
    the ComputeDomain exists), and the kubelet plugin then injects every IMEX channel."""
    manifest = {"apiVersion": GPU_CONFIG_API, "kind": "ComputeDomain",
                "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)},
                "spec": {"channel": {"resourceClaimTemplate": {"name": name}, "allocationMode": allocation_mode}}}
    devices = {"requests": [exact("channel", CHANNEL_CLASS, 1)]}
    return BuiltClaim(name, namespace, manifest, devices, (NVIDIA.name,), node_selector([NVIDIA.name]))


def extended_resources(resources: Mapping[str, int]) -> dict[str, Any]:
    """A container's `resources` for device-plugin extended resources (limits; requests equal them)."""
    limits = {key: str(count) for key, count in sorted(resources.items())}
    return {"limits": limits, "requests": dict(limits)}


def extended_families(resources: Mapping[str, int]) -> tuple[Family, ...]:
    found = {EXTENDED_RESOURCES[k] for k in resources if k in EXTENDED_RESOURCES}
    return tuple(f for f in FAMILIES if f in found)  # type: ignore[misc]


# the short shape's key that asks for each class it builds (`from_config`): the family's own key, and MIG and
# ComputeDomain channels under theirs
SHORT_KEY_CLASSES = {**{d.device_class: d.short_key for d in DESCRIPTORS}, MIG_CLASS: "mig",
                     CHANNEL_CLASS: "computeDomainChannel"}


def class_keys(claim: Claim) -> dict[str, list[str]]:
    """The config keys below `claims.<name>` that name each DeviceClass of the claim, in the order given:
    `requests.0.exactly.deviceClassName` (or `requests.0.firstAvailable.1.deviceClassName`) for a claim's own
    requests, the short shape's key (`gpus`, `mig`, `efa`, `neurons`, `computeDomainChannel`) otherwise. What a
    rule about a class blames: the key the user edits."""
    out: dict[str, list[str]] = {}
    if claim.requests is not None:
        for i, request in enumerate(claim.requests):
            if request.exactly is not None:
                out.setdefault(request.exactly.device_class_name, []).append(f"requests.{i}.exactly.deviceClassName")
            for j, sub in enumerate(request.first_available or ()):
                out.setdefault(sub.device_class_name, []).append(f"requests.{i}.firstAvailable.{j}.deviceClassName")
        return out
    for key in claim.shorthand:
        for device_class, short in SHORT_KEY_CLASSES.items():
            if short == key:
                out.setdefault(device_class, []).append(key)
    return out


def selector_keys(claim: Claim) -> list[tuple[str, str]]:
    """(config key below `claims.<name>`, CEL expression) of every selector of a claim's own requests
    (`requests.0.exactly.selectors.1.cel.expression`): what a rule about an expression blames."""
    out: list[tuple[str, str]] = []
    for i, request in enumerate(claim.requests or ()):
        alternatives = [("exactly", request.exactly)] if request.exactly is not None else []
        alternatives += [(f"firstAvailable.{j}", sub) for j, sub in enumerate(request.first_available or ())]
        for where, exact in alternatives:
            out += [(f"requests.{i}.{where}.selectors.{k}.cel.expression", s.cel.expression)
                    for k, s in enumerate(exact.selectors)]
    return out


def from_config(name: str, claim: Claim, class_drivers: Mapping[str, str] | None = None) -> BuiltClaim | None:
    """The object a stack's `claims.<name>` entry declares (None for kind: extended-resource)."""
    shared, ns = claim.kind == "claim", claim.namespace
    if claim.kind == "extended-resource":
        return None
    if claim.requests is not None:
        requests = [r.model_dump(by_alias=True, exclude_none=True) for r in claim.requests]
        return build(name, requests, [c.model_dump(by_alias=True, exclude_none=True) for c in claim.constraints],
                     [c.model_dump(by_alias=True, exclude_none=True) for c in claim.config],
                     shared=shared, namespace=ns, class_drivers=class_drivers)
    if claim.compute_domain_channel is not None:
        return compute_domain_channel(name, claim.compute_domain_channel.allocation_mode, namespace=ns)
    slicing = claim.time_slicing.interval if claim.time_slicing else None
    efas, neurons = claim.count(EFA), claim.count(NEURON)
    if claim.align_with == NVIDIA.efa_alignment and claim.gpus and efas is not None:
        return gpu_efa_aligned_claim(name, claim.gpus.count, efas, model=claim.gpus.model,
                                     min_memory_gib=claim.gpus.min_memory_gib, time_slicing=slicing,
                                     shared=shared, namespace=ns)
    if claim.align_with == NEURON.efa_alignment and neurons is not None and efas is not None:
        return neuron_efa_aligned_claim(name, neurons, efas, logical_neuron_core=claim.logical_neuron_core,
                                        shared=shared, namespace=ns)
    requests: list[dict[str, Any]] = []
    config: list[dict[str, Any]] = []
    constraints: list[dict[str, Any]] = []
    if claim.gpus:
        requests.append(exact("gpu", GPU_CLASS, claim.gpus.count,
                              gpu_selectors(claim.gpus.model, claim.gpus.min_memory_gib)))
        if slicing:
            config.append(time_slicing_config(["gpu"], slicing))
    if claim.mig:
        mig = mig_claim(name, claim.mig.profile, claim.mig.count)
        requests += mig.devices["requests"]
        constraints += [{**c, "requests": ["mig"]} for c in mig.devices["constraints"]]
    if neurons is not None:
        requests.append(exact("neurons", NEURON_CLASS, neurons))
        if claim.logical_neuron_core:
            config.append(neuron_config(["neurons"], claim.logical_neuron_core))
    for family in COUNTED:  # EFA and any added family: one request named by its short key on its class
        if family is not NEURON and (count := claim.count(family)) is not None:
            requests.append(exact(family.short_key, family.device_class, count))
    return build(name, requests, constraints, config, shared=shared, namespace=ns)
