"""DeviceClasses and the other objects the device software renders: created only where the toolkit
owns them, valid against the Kubernetes 1.34-1.37 schemas, and every CEL selector compiled and
evaluated with cel-python against device attributes as the drivers publish them (NVIDIA DRA
driver v0.4.1, kubernetes-sigs/dranet, aws-neuron-sdk `deploy/eks/dra.rst`): each class selects exactly its own kind of device."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from eks_devices.core import cel
from eks_devices.core import planner as plan
from eks_devices.core.config.stack import ConfigError, parse
from eks_devices.core.knowledge import catalog, device_classes
from eks_devices.core.manifests import software as device_manifests
from eks_devices.core.model import DeviceClassPlan
from support import stacks

KUBERNETES = ("1.34", "1.35", "1.36", "1.37")
H100 = "NVIDIA H100 80GB HBM3"


def config(mode: str, pools: dict[str, Any], version: str = "1.36", **extra: Any) -> dict[str, Any]:
    return stacks.config(mode, version, pools, name="t", **extra)


BIG = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
EXTRA_CLASSES = {
    "h100.gpu.eks-devices.io": {"base": "gpu.nvidia.com", "productName": H100},
    "big.gpu.eks-devices.io": {"base": "gpu.nvidia.com", "expression": BIG},
    "rdma.efa.eks-devices.io": {"base": "efa.networking.k8s.aws", "expression": "device.attributes['dra.net'].rdma"},
}
EVERYTHING = config("managed-node-groups", {
    "p5": {"replicas": 1, "instanceTypes": ["p5.48xlarge"], "computeDomains": True, "efa": {"alignWith": "gpu"},
           "gpuSharing": {"strategy": "shared-claim", "claimName": "team-gpu", "claimNamespace": "ml"}},
    "trn": {"replicas": 1, "instanceTypes": ["trn2.48xlarge"], "efa": {"alignWith": "neuron"}},
}, deviceClasses=EXTRA_CLASSES)
AUTO_NVIDIA_ONLY = config("auto-mode", {"gpu": {"instanceTypes": ["g6.xlarge"]}})
AUTO_NO_CLASSES = config("auto-mode", {"gpu": {"instanceTypes": ["g6.xlarge"]}},
                         cluster={"autoMode": {"createDeviceClasses": False}})
AUTO_EXTRA = config("auto-mode", {"gpu": {"instanceTypes": ["p5.48xlarge"], "provisioning": "static", "replicas": 1}},
                    deviceClasses={"h100.gpu.eks-devices.io": EXTRA_CLASSES["h100.gpu.eks-devices.io"]})


def plans() -> dict[str, plan.Plan]:
    out = {f"stack-{s}": stacks.shipped_plan(s) for s in stacks.SHIPPED}
    for name, cfg in {"everything": EVERYTHING, "auto-nvidia-only": AUTO_NVIDIA_ONLY,
                      "auto-no-classes": AUTO_NO_CLASSES, "auto-extra": AUTO_EXTRA}.items():
        out[name] = plan.build(parse(cfg))
    return out


PLANS = plans()


# --- ownership --------------------------------------------------------------------------------

def toolkit_names(p: plan.Plan) -> set[str]:
    return {m["metadata"]["name"] for m in device_manifests.toolkit_device_classes(p)}


@pytest.mark.parametrize("name", sorted(PLANS))
def test_the_toolkit_never_creates_a_chart_owned_class(name: str) -> None:
    p = PLANS[name]
    chart_owned = {c.name for c in p.device_classes if not c.created_by_toolkit}
    assert not toolkit_names(p) & chart_owned
    assert len({c.name for c in p.device_classes}) == len(p.device_classes)  # one owner per name
    if p.mode != "auto-mode":
        assert toolkit_names(p) == set(p.spec.device_classes)  # only the extra, differently named ones


def test_auto_mode_classes_follow_the_dra_families() -> None:
    assert toolkit_names(PLANS["stack-dev"]) == {"gpu.nvidia.com", "efa.networking.k8s.aws"}
    assert toolkit_names(PLANS["auto-nvidia-only"]) == {"gpu.nvidia.com"}
    assert toolkit_names(PLANS["auto-extra"]) == {"gpu.nvidia.com", "efa.networking.k8s.aws",
                                                  "h100.gpu.eks-devices.io"}
    assert toolkit_names(PLANS["auto-no-classes"]) == set()
    assert "device-classes-present" in {f.slug for f in PLANS["auto-no-classes"].errors}


def test_chart_owned_classes_follow_the_chart_values() -> None:
    owners = {c.name: c.owner for c in PLANS["everything"].device_classes}
    assert owners == {
        "gpu.nvidia.com": "nvidia-dra-driver", "mig.nvidia.com": "nvidia-dra-driver",
        "vfio.gpu.nvidia.com": "nvidia-dra-driver", "compute-domain-daemon.nvidia.com": "nvidia-dra-driver",
        "compute-domain-default-channel.nvidia.com": "nvidia-dra-driver",
        "efa.networking.k8s.aws": "aws-dranet", "neuron.aws.com": "neuron-dra-driver",
        **dict.fromkeys(EXTRA_CLASSES, "toolkit"),
    }
    gpu = next(c for c in PLANS["everything"].device_classes if c.name == "gpu.nvidia.com")
    assert gpu.extended_resource_name == "nvidia.com/gpu"  # resourceApiVersion v1 renders it


@pytest.mark.parametrize(("classes", "problem"), [
    ({"gpu.nvidia.com": {"base": "gpu.nvidia.com", "productName": H100}}, "deviceClasses.gpu.nvidia.com"),
    ({"Bad_Name": {"base": "gpu.nvidia.com", "productName": H100}}, "deviceClasses.Bad_Name"),
    ({"x.example.com": {"base": "efa.networking.k8s.aws", "productName": H100}}, "deviceClasses.x.example.com"),
    ({"x.example.com": {"base": "gpu.nvidia.com"}}, "deviceClasses.x.example.com"),
    ({"x.example.com": {"base": "gpu.nvidia.com", "expression": "device.driver =="}},
     "deviceClasses.x.example.com.expression"),
    ({"x.example.com": {"base": "tpu.google.com", "expression": "true"}}, "deviceClasses.x.example.com.base"),
])
def test_extra_class_config_errors(classes: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(config("karpenter", {}, deviceClasses=classes))
    assert problem in [p.path for p in err.value.problems]


# --- schemas ----------------------------------------------------------------------------------

def rendered() -> list[tuple[str, dict[str, Any]]]:
    """Every object the device software creates, plus every class as the charts render it."""
    out = []
    for name, p in sorted(PLANS.items()):
        out += [(name, m) for m in device_manifests.manifests(p)]
        out += [(name, device_manifests.device_class(c)) for c in p.device_classes if not c.created_by_toolkit]
    return out


OBJECTS = rendered()


def test_every_kind_is_rendered_somewhere() -> None:
    assert {m["kind"] for _, m in OBJECTS} == {"Namespace", "DeviceClass", "ResourceClaim"}


@pytest.mark.parametrize("version", KUBERNETES)
def test_objects_validate_against_the_kubernetes_schema(version: str) -> None:
    for name, manifest in OBJECTS:
        try:
            kubernetes_validate.validate(manifest, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{name}: {manifest['kind']} {manifest['metadata']['name']} on {version}: {exc.message}")


def test_the_schema_check_rejects_a_broken_object() -> None:
    broken = device_manifests.device_class(PLANS["stack-dev"].device_classes[0])
    broken["spec"]["selectors"] = [{"cel": {"expresion": "true"}}]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.36", strict=True)


# --- CEL against published device attributes ----------------------------------------------------

ARCH = {"NVIDIA A100": ("Ampere", "8.0.0"), "NVIDIA H100": ("Hopper", "9.0.0"), "NVIDIA H200": ("Hopper", "9.0.0"),
        "NVIDIA B200": ("Blackwell", "10.0.0"), "NVIDIA B300": ("Blackwell", "10.3.0")}


def gpu_device(itype: catalog.InstanceType, kind: str = "gpu") -> cel.Device:
    model = itype.gpu_model or ""
    arch, cc = ARCH.get(model, ("Ada Lovelace", "8.9.0"))
    product = H100 if model == "NVIDIA H100" else f"{model} {round((itype.gpu_memory_mib or 0) / 1024)}GB"
    attributes: dict[str, Any] = {
        "type": kind, "uuid": "GPU-0f4c", "productName": product, "brand": "Nvidia", "architecture": arch,
        "cudaComputeCapability": cc, "driverVersion": "580.95.5", "cudaDriverVersion": "13.0.0",
        "resource.kubernetes.io/pciBusID": "0000:53:00.0", "resource.kubernetes.io/pcieRoot": "pci0000:50"}
    if kind == "mig":
        attributes.update({"parentUUID": "GPU-0f4c", "profile": "1g.10gb"})
    memory = itype.gpu_memory_mib or 189_471  # GB200: memory not in DescribeInstanceTypes (moto 5.2.5 data)
    return cel.device("gpu.nvidia.com", attributes, {"memory": f"{memory}Mi"})


def devices() -> list[tuple[str, str, cel.Device]]:
    """(kind, instance type, device) for every catalogued instance type's devices."""
    out: list[tuple[str, str, cel.Device]] = []
    for itype in catalog.instance_types().values():
        if itype.has_nvidia:
            out.append(("gpu", itype.name, gpu_device(itype)))
            if itype.mig_capable:
                out.append(("mig", itype.name, gpu_device(itype, "mig")))
        if itype.has_efa:
            groups = {f"resource.aws.com/devicegroup{n}_id": 0 for n in (1, 4, 8, 16)} if itype.has_neuron else {}
            out.append(("efa", itype.name, cel.device("dra.net", {
                "pciDevice": "Elastic Fabric Adapter (EFA)", "pciVendor": "Amazon.com, Inc.", "pciSubsystem": "0x0000",
                "pciAddress": "0000:a0:00.0", "rdma": True, "rdmaDevice": "rdmap160s0", "numaNode": 0,
                "resource.kubernetes.io/pcieRoot": "pci0000:a0", **groups})))
        if itype.has_neuron:
            out.append(("neuron", itype.name, cel.device("neuron.aws.com", {
                "instanceType": itype.name, "resourceType": "neuron_device", "topology4_id": 0, "topology8_id": 0,
                **{f"resource.aws.com/devicegroup{n}_id": 0 for n in (1, 4, 8, 16)}})))
    ena = cel.device("dra.net", {"pciDevice": "Elastic Network Adapter (ENA)", "rdma": False, "numaNode": 0})
    vfio = cel.device("gpu.nvidia.com", {"type": "vfio", "productName": H100})
    daemon = cel.device("compute-domain.nvidia.com", {"type": "daemon", "id": 0})
    channel = cel.device("compute-domain.nvidia.com", {"type": "channel", "id": 0})
    other_channel = cel.device("compute-domain.nvidia.com", {"type": "channel", "id": 1})
    return [*out, ("ena", "-", ena), ("vfio", "-", vfio), ("cd-daemon", "-", daemon),
            ("cd-channel", "-", channel), ("cd-other-channel", "-", other_channel)]


DEVICES = devices()
KIND_OF_CLASS = {"gpu.nvidia.com": "gpu", "mig.nvidia.com": "mig", "vfio.gpu.nvidia.com": "vfio",
                 "compute-domain-daemon.nvidia.com": "cd-daemon",
                 "compute-domain-default-channel.nvidia.com": "cd-channel",
                 "efa.networking.k8s.aws": "efa", "neuron.aws.com": "neuron"}


def expected(class_name: str, kind: str, dev: cel.Device) -> bool:
    """What a class should select, stated independently of its CEL."""
    if class_name in KIND_OF_CLASS:
        return KIND_OF_CLASS[class_name] == kind
    if class_name == "h100.gpu.eks-devices.io":
        return kind == "gpu" and dev["attributes"]["gpu.nvidia.com"]["productName"] == H100
    if class_name == "big.gpu.eks-devices.io":
        return kind == "gpu" and cel.Quantity(dev["capacity"]["gpu.nvidia.com"]["memory"]) >= cel.Quantity("80Gi")
    if class_name == "rdma.efa.eks-devices.io":
        return kind == "efa"
    raise AssertionError(class_name)


CLASSES = sorted({(c.name, c.expression) for p in PLANS.values() for c in p.device_classes})


def test_every_class_name_has_one_expression() -> None:
    assert len({name for name, _ in CLASSES}) == len(CLASSES)
    assert {name for name, _ in CLASSES} == set(KIND_OF_CLASS) | set(EXTRA_CLASSES)


@pytest.mark.parametrize(("name", "expression"), CLASSES, ids=[n for n, _ in CLASSES])
def test_class_selects_exactly_its_devices(name: str, expression: str) -> None:
    cel.compile_expression(expression)
    manifest = device_manifests.device_class(DeviceClassPlan(name, "-", expression, "toolkit"))
    selector = manifest["spec"]["selectors"]
    matched = set()
    for kind, itype, dev in DEVICES:
        got = cel.selects(selector, dev)
        assert got == expected(name, kind, dev), (name, kind, itype)
        if got:
            matched.add(itype)
    assert matched, f"{name} selects no catalogued device"


def test_gpu_class_matches_gpus_not_efa_and_the_reverse() -> None:
    gpu = cel.device("gpu.nvidia.com", {"type": "gpu"})
    efa = cel.device("dra.net", {"pciDevice": "Elastic Fabric Adapter (EFA)"})
    neuron = cel.device("neuron.aws.com", {"instanceType": "trn2.48xlarge"})
    assert [cel.evaluate(device_classes.GPU_CEL, d) for d in (gpu, efa, neuron)] == [True, False, False]
    assert [cel.evaluate(device_classes.EFA_CEL, d) for d in (gpu, efa, neuron)] == [False, True, False]
    assert [cel.evaluate(device_classes.NEURON_CEL, d) for d in (gpu, efa, neuron)] == [False, False, True]


# --- the CEL helper itself ---------------------------------------------------------------------

def test_compile_errors_are_clear() -> None:
    with pytest.raises(cel.CelError) as err:
        cel.compile_expression("device.driver ==")
    assert "syntax error" in str(err.value) and "device.driver ==" in str(err.value)
    with pytest.raises(cel.CelError, match="at most 10Ki"):
        cel.compile_expression("true && " * 2000 + "true")
    with pytest.raises(cel.CelError, match="empty"):
        cel.compile_expression("  ")


def test_evaluation_errors_are_errors_not_mismatches() -> None:
    gpu = cel.device("gpu.nvidia.com", {"type": "gpu"})
    with pytest.raises(cel.CelError, match="no such member"):
        cel.evaluate("device.attributes['gpu.nvidia.com'].productName == 'x'", gpu)  # unguarded, missing
    with pytest.raises(cel.CelError, match="must return a bool"):
        cel.evaluate("device.driver", gpu)
    assert cel.evaluate("has(device.attributes['other.example.com'].x)", gpu) is False  # unknown domain: empty


def test_quantity_and_semver() -> None:
    dev = cel.device("gpu.nvidia.com", {"driverVersion": {"version": "580.95.5"}}, {"memory": "81920Mi"})
    assert cel.evaluate("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) == 0", dev)
    assert cel.evaluate("device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity('100G'))", dev)
    assert cel.evaluate("device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('575.1.0'))", dev)
    assert not cel.evaluate("device.attributes['gpu.nvidia.com'].driverVersion.isLessThan(semver('580.9.0'))", dev)


def test_device_builder_qualifies_names() -> None:
    dev = cel.device("dra.net", {"rdma": True, "resource.kubernetes.io/pcieRoot": "pci0000:a0"})
    assert dev["attributes"] == {"dra.net": {"rdma": True}, "resource.kubernetes.io": {"pcieRoot": "pci0000:a0"}}
