"""The fit check: CEL evaluation, the simulated device inventory and the allocator, per instance type."""

from __future__ import annotations

from collections import Counter

import pytest

from eks_devices.core import cel
from eks_devices.core.derive import claims, fit
from eks_devices.core.knowledge import catalog, devices
from eks_devices.core.knowledge.device_classes import CD_CHANNEL_CEL, EFA_CEL, GPU_CEL, MIG_CEL, NEURON_CEL
from support import stacks

GB200 = "p6e-gb200.36xlarge"  # a GPU type no Karpenter release scraped: its PCIe layout is modelled

CLASSES = {
    "gpu.nvidia.com": [GPU_CEL], "mig.nvidia.com": [MIG_CEL], "efa.networking.k8s.aws": [EFA_CEL],
    "neuron.aws.com": [NEURON_CEL], "compute-domain-default-channel.nvidia.com": [CD_CHANNEL_CEL],
}
H100 = {"driver": "gpu.nvidia.com",
        "attributes": {"gpu.nvidia.com": {"type": "gpu", "productName": "NVIDIA H100 80GB HBM3",
                                          "cudaComputeCapability": {"version": "9.0.0"}},
                       "resource.kubernetes.io": {"pcieRoot": "pci0000:10"}},
        "capacity": {"gpu.nvidia.com": {"memory": "81152Mi"}}}


def node_fit(itype: str, built: claims.BuiltClaim, **kwargs) -> fit.NodeFit:
    return fit.fit_node(built.devices, CLASSES, devices.inventory(itype, **kwargs), itype, built.shared)


# --- CEL --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("expression", "expected"), [
    (GPU_CEL, True),
    (EFA_CEL, False),
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0", False),  # 81152Mi < 80Gi
    ("device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('79Gi'))", True),
    ("device.capacity['gpu.nvidia.com'].memory == quantity('81152Mi')", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('9.0.0')) >= 0", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.isLessThan(semver('10.0.0'))", True),
    ("device.attributes['gpu.nvidia.com'].productName.contains('H100')", True),
    ("'dra.net' in device.attributes", False),  # an unknown domain reads as an empty map
    ("device.driver == 'dra.net' && device.attributes['dra.net'].rdma", False),  # short-circuits
    ("quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi')", True),
    ("semver('1.2.3-rc.1').isLessThan(semver('1.2.3'))", True),
])
def test_cel_evaluates_dra_expressions(expression: str, expected: bool) -> None:
    cel.compile_expression(expression)
    assert cel.evaluate(expression, H100) is expected


@pytest.mark.parametrize(("expression", "message"), [
    ("device.driver ==", "syntax error"),
    ("device.attributes['gpu.nvidia.com'].bogus(1)", "undeclared function 'bogus'"),
    ("gpu.productName == 'x'", "undeclared reference to 'gpu'"),
    ("", "empty"),
])
def test_cel_compile_errors_are_clear(expression: str, message: str) -> None:
    with pytest.raises(cel.CelError, match=message):
        cel.compile_expression(expression)


def test_cel_runtime_errors_and_non_bool_results_raise() -> None:
    with pytest.raises(cel.CelError, match="no such member"):
        cel.evaluate("device.attributes['gpu.nvidia.com'].pciDevice == 'x'", H100)
    with pytest.raises(cel.CelError, match="must return a bool"):
        cel.evaluate("device.driver", H100)


def test_cel_macros_bind_their_variable() -> None:
    cel.compile_expression("[1, 2].all(x, x > 0) && device.driver != ''")
    assert cel.evaluate("['a', 'gpu.nvidia.com'].exists(d, d == device.driver)", H100)


def test_quantities_and_versions_compare_by_value() -> None:
    assert cel.Quantity("1Gi") == cel.Quantity("1024Mi")
    assert cel.Quantity("1.5k") == cel.Quantity("1500")
    assert cel.Quantity("500m") < cel.Quantity("1")
    assert cel.Semver("1.10.0") > cel.Semver("1.9.9")
    with pytest.raises(ValueError):
        cel.Quantity("80 GiB")
    with pytest.raises(ValueError):
        cel.Semver("9.0")


# --- the simulated inventory ------------------------------------------------------------------

def _by_root(itype: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for device in devices.inventory(itype):
        root = device.attribute(devices.PCIE_ROOT)
        if device.driver == "dra.net" and device.name == "eth0":
            continue
        out.setdefault(root[1], {}).setdefault(device.driver, 0)
        out[root[1]][device.driver] += 1
    return out


@pytest.mark.parametrize(("itype", "roots"), [
    # what Karpenter scraped from running instances (`device_layouts`): (GPUs, EFAs) → how many roots hold that
    ("p5.48xlarge", {(1, 4): 8}),
    ("p5e.48xlarge", {(1, 4): 8}),
    ("p5en.48xlarge", {(2, 4): 4}),
    ("p4d.24xlarge", {(2, 1): 4}),
    ("g6e.48xlarge", {(1, 0): 8, (0, 2): 2}),  # no GPU shares a root with an EFA
    ("p6-b200.48xlarge", {(2, 2): 4}),
    ("g7e.48xlarge", {(2, 1): 4}),  # not scraped: 8 GPUs and 4 EFAs spread over min(8, 4) roots
])
def test_gpu_efa_topology(itype: str, roots: dict[tuple[int, int], int]) -> None:
    layout = _by_root(itype)
    assert Counter((v.get("gpu.nvidia.com", 0), v.get("dra.net", 0)) for v in layout.values()) == roots


def _roots_of(itype: str) -> dict[str, list[str]]:
    """The devices on each PCIe root, by the root's name (the primary ENA left out)."""
    out: dict[str, list[str]] = {}
    for device in devices.inventory(itype):
        if device.name != "eth0" and (root := device.attribute(devices.PCIE_ROOT)):
            out.setdefault(root[1], []).append(device.name)
    return out


def test_devices_publish_the_pcie_root_names_of_real_nodes() -> None:
    """Where Karpenter scraped a type, its roots carry the names its nodes publish (karpenter-provider-aws v1.15.0
    `drametadata`); elsewhere they are named by position and said to be."""
    p5 = _roots_of("p5.48xlarge")
    assert p5["pci0000:44"] == ["gpu-0", "efa0", "efa1", "efa2", "efa3"] and p5["pci0000:bb"][0] == "gpu-7"
    assert sorted(p5) == ["pci0000:44", "pci0000:55", "pci0000:66", "pci0000:77", "pci0000:88", "pci0000:99",
                          "pci0000:aa", "pci0000:bb"]
    assert _roots_of("g6e.48xlarge")["pci0000:a5"] == ["efa2", "efa3"]  # an EFA root without GPUs
    assert _roots_of("g5.48xlarge") == {"pci0000:00": [f"gpu-{g}" for g in range(8)] + ["efa0"]}
    (first, _) = devices.inventory("g5g.metal", ("nvidia",))  # the one type whose GPUs sit in PCI domain 2
    assert (first.attribute(devices.PCIE_ROOT), first.attribute(devices.PCI_BUS_ID)) == (
        ("string", "pci0002:00"), ("string", "0002:01:00.0"))
    assert all(map(devices.root_names_published, ("p5.48xlarge", "g6e.48xlarge", "g5g.metal")))
    # g7e's names come from v1.15.2's scrape: each GPU pair shares its root with an EFA
    assert _roots_of("g7e.48xlarge")["pci0000:a6"] == ["gpu-4", "gpu-5", "efa2"]
    # a type no release scraped (p6e-gb200) has its roots named by position
    assert not devices.root_names_published("p6e-gb200.36xlarge") and "pci0000:10" in _roots_of("p6e-gb200.36xlarge")


def _on_root(root: str, device_class: str = "gpu.nvidia.com", count: int = 1) -> dict:
    return {"requests": [{"name": "r", "exactly": {"deviceClassName": device_class, "count": count, "selectors": [
        {"cel": {"expression": f"device.attributes['resource.kubernetes.io'].pcieRoot == '{root}'"}}]}}]}


def test_a_selector_naming_a_pcie_root_is_judged_against_real_names() -> None:
    """p5.48xlarge's first GPU and its four EFAs sit on pci0000:44: a claim naming that root fits once per node;
    a root the type lacks fits nowhere, for certain. On p6e-gb200 (roots named by position) a failure is unsettled."""
    p5 = devices.inventory("p5.48xlarge")
    assert fit.fit_node(_on_root("pci0000:44"), CLASSES, p5, "p5.48xlarge").per_node == 1
    assert fit.fit_node(_on_root("pci0000:44", "efa.networking.k8s.aws", 4), CLASSES, p5, "p5.48xlarge").per_node == 1
    assert fit.fit_node(_on_root("pci0000:44", "efa.networking.k8s.aws", 5), CLASSES, p5, "p5.48xlarge").cause == \
        "too-few"
    absent = fit.fit_node(_on_root("pci0000:45"), CLASSES, p5, "p5.48xlarge")
    assert (absent.per_node, absent.cause) == (0, "no-devices")
    gb200 = fit.fit_node(_on_root("pci0000:44"), CLASSES, devices.inventory(GB200), GB200)
    assert (gb200.per_node, gb200.cause) == (0, "topology-modelled") and "named by position" in gb200.reason
    # a DeviceClass's selector naming a root counts too
    classes = {**CLASSES, "root": [GPU_CEL + " && device.attributes['resource.kubernetes.io'].pcieRoot == 'x'"]}
    by_class = {"requests": [{"name": "r", "exactly": {"deviceClassName": "root", "count": 1}}]}
    assert fit.fit_node(by_class, classes, devices.inventory(GB200), GB200).cause == "topology-modelled"
    assert fit.fit_node(by_class, classes, p5, "p5.48xlarge").cause == "no-devices"


def test_gpus_publish_what_the_nvidia_driver_publishes() -> None:
    gpu = devices.inventory("p5.48xlarge", ("nvidia",))[0]
    view = gpu.cel()
    assert view["attributes"]["gpu.nvidia.com"]["productName"] == "NVIDIA H100 80GB HBM3"
    assert view["attributes"]["gpu.nvidia.com"]["type"] == "gpu"
    assert view["capacity"]["gpu.nvidia.com"]["memory"] == "81152Mi"
    assert view["attributes"]["resource.kubernetes.io"]["pcieRoot"].startswith("pci0000:")
    assert devices.inventory("g6e.48xlarge", ("nvidia",))[0].capacity["memory"] == "46068Mi"


@pytest.mark.parametrize(("itype", "product", "memory"), [
    ("g6f.large", "NVIDIA L4-3Q", "3Gi"),
    ("g6f.2xlarge", "NVIDIA L4-6Q", "6Gi"),
    ("gr6f.4xlarge", "NVIDIA L4-12Q", "12Gi"),
])
def test_a_gpu_partition_is_one_device_named_by_its_vgpu_profile(itype: str, product: str, memory: str) -> None:
    """(Karpenter v1.15.0 `drametadata`: a partition publishes its vGPU profile and its memory.)"""
    (gpu,) = devices.inventory(itype, ("nvidia",))
    assert (gpu.attributes["productName"]["string"], gpu.capacity["memory"]) == (product, memory)


def test_each_gpu_of_a_node_has_a_pci_bus_of_its_own() -> None:
    """Two GPUs on one PCIe root (p4d, p5en, g5.48xlarge's eight) still sit on buses of their own."""
    gpu_types = [t for t, it in catalog.instance_types().items() if it.has_nvidia]
    assert len(gpu_types) > 40
    for itype in gpu_types:
        buses = [d.attributes[devices.PCI_BUS_ID]["string"] for d in devices.inventory(itype, ("nvidia",))]
        assert len(set(buses)) == len(buses), itype


def test_efa_devices_are_what_dranet_publishes() -> None:
    efa = [d for d in devices.inventory("p5.48xlarge", ("efa",)) if d.name != "eth0"]
    assert len(efa) == 32
    assert all(cel.evaluate(EFA_CEL, d.cel()) for d in efa)
    ena = [d for d in devices.inventory("p5.48xlarge", ("efa",)) if d.name == "eth0"]
    assert not cel.evaluate(EFA_CEL, ena[0].cel())  # the primary ENA is published but not an EFA


def test_neuron_device_groups() -> None:
    trn1 = devices.inventory("trn1.32xlarge")
    neurons = [d for d in trn1 if d.driver == "neuron.aws.com"]
    efas = [d for d in trn1 if d.driver == "dra.net" and d.name != "eth0"]
    def ids(devs: list[devices.Device], size: int) -> list[str]:
        values = [d.attribute(devices.device_group(size)) for d in devs]
        assert all(v is not None and v[0] == "string" for v in values)  # the lookup library's ids are strings
        return [v[1] for v in values]  # type: ignore[index]

    def partition(values: list[str]) -> list[int]:  # the values as first-seen group numbers
        return [list(dict.fromkeys(values)).index(v) for v in values]

    assert partition(ids(neurons, 4)) == [i // 4 for i in range(16)]
    assert partition(ids(efas, 4)) == [i // 2 for i in range(8)]
    # an EFA per two devices: both devices carry their EFA's PCI address as devicegroup1_id
    assert ids(neurons, 1) == [efas[i // 2].attributes["dra.net/pciAddress"]["string"] for i in range(16)]
    assert ids(efas, 1) == [e.attributes["dra.net/pciAddress"]["string"] for e in efas]
    assert ids(efas, 4)[0] == ids(neurons, 4)[0] and ids(efas, 16) == ids(neurons, 16)[:8]
    trn2 = devices.inventory("trn2.48xlarge")
    trn2_efas = [d for d in trn2 if d.driver == "dra.net" and d.name != "eth0"]
    assert ids(trn2_efas, 1) == ids([d for d in trn2 if d.driver == "neuron.aws.com"], 1)
    assert len(set(ids(trn2_efas, 1))) == 16


def test_only_the_requested_families_are_published() -> None:
    assert {d.driver for d in devices.inventory("p5.48xlarge", ("nvidia",))} == {"gpu.nvidia.com"}
    assert {d.driver for d in devices.inventory("trn2.48xlarge", ("neuron",))} == {"neuron.aws.com"}


# --- fit tables -------------------------------------------------------------------------------

FIT_TABLE = [
    # instance type, claim, claims per node (0 = does not fit), cause when it does not
    ("p5.48xlarge", claims.gpu_claim("c", 8), 1, ""),
    ("p5.48xlarge", claims.gpu_claim("c", 1, model="H100"), 8, ""),
    ("p5.48xlarge", claims.gpu_claim("c", 9), 0, "too-few"),
    ("p5.48xlarge", claims.gpu_claim("c", 1, min_memory_gib=80), 0, "no-devices"),  # NVML: 81152Mi < 80Gi
    ("p5.48xlarge", claims.gpu_claim("c", 1, min_memory_gib=79), 8, ""),
    ("p5.48xlarge", claims.gpu_efa_aligned_claim("c", 1, 4), 8, ""),
    ("p5.48xlarge", claims.gpu_efa_aligned_claim("c", 4, 16), 2, ""),
    ("p5.48xlarge", claims.gpu_efa_aligned_claim("c", 8, 24), 1, ""),  # 32 devices: the claim limit
    ("p5.48xlarge", claims.gpu_efa_aligned_claim("c", 8, 32), 0, "too-many"),  # 40 devices: over it
    ("p5.48xlarge", claims.gpu_efa_aligned_claim("c", 1, 5), 0, "topology"),   # 32 EFAs, 4 per root
    ("p5.48xlarge", claims.gpu_efa_aligned_claim("c", 1, "all"), 0, "too-many"),  # 1 + all 32 EFAs
    ("p5en.48xlarge", claims.gpu_efa_aligned_claim("c", 1, "all"), 0, "topology"),  # 1 + 16; 4 EFAs per root
    ("p5en.48xlarge", claims.gpu_efa_aligned_claim("c", 1, 2), 8, ""),
    ("p5en.48xlarge", claims.gpu_efa_aligned_claim("c", 1, 4), 4, ""),  # 4 × (2 GPUs + 4 EFAs)
    ("p5en.48xlarge", claims.gpu_efa_aligned_claim("c", 8, 32), 0, "too-many"),  # checked before the supply
    ("p5en.48xlarge", claims.gpu_claim("c", 1, model="H200", min_memory_gib=140), 8, ""),
    ("p4d.24xlarge", claims.gpu_efa_aligned_claim("c", 8, 4), 1, ""),          # 4 × (2 GPUs + 1 EFA)
    ("p4d.24xlarge", claims.gpu_efa_aligned_claim("c", 2, 1), 4, ""),
    ("p4d.24xlarge", claims.gpu_efa_aligned_claim("c", 8, 8), 0, "too-few"),   # each GPU with its own EFA
    ("p4d.24xlarge", claims.gpu_efa_aligned_claim("c", 1, 2), 0, "topology"),  # 4 EFAs but 1 per root
    ("p4d.24xlarge", claims.gpu_claim("c", 1, model="H100"), 0, "no-devices"),
    ("g6e.48xlarge", claims.gpu_claim("c", 2, model="L40S"), 4, ""),
    ("g6f.4xlarge", claims.gpu_claim("c", 1, model="L4"), 1, ""),  # the model word matches `NVIDIA L4-12Q`
    ("g6f.4xlarge", claims.gpu_claim("c", 1, model="L4", min_memory_gib=20), 0, "no-devices"),
    ("gr6.4xlarge", claims.gpu_claim("c", 1, model="L4", min_memory_gib=20), 1, ""),
    ("g6e.48xlarge", claims.gpu_claim("c", 1, model="H100"), 0, "no-devices"),  # an H100 selector on L40S
    ("g6e.48xlarge", claims.gpu_efa_aligned_claim("c", 2, 1), 0, "topology"),  # no GPU on an EFA's root
    ("g6e.48xlarge", claims.gpu_efa_aligned_claim("c", 1, 2), 0, "topology"),
    ("g7e.48xlarge", claims.gpu_efa_aligned_claim("c", 2, 1), 4, ""),  # scraped (v1.15.2): 4 × (2 GPUs + 1 EFA)
    ("g7e.48xlarge", claims.gpu_efa_aligned_claim("c", 1, 2), 0, "topology"),
    ("p6e-gb200.36xlarge", claims.gpu_efa_aligned_claim("c", 1, 4), 4, ""),  # modelled: 17 EFAs over 4 GPU roots
    ("p6e-gb200.36xlarge", claims.gpu_efa_aligned_claim("c", 1, 6), 0, "topology-modelled"),
    ("g6e.48xlarge", claims.efa_claim("c", "all"), 1, ""),
    ("trn1.32xlarge", claims.neuron_efa_aligned_claim("c", 4, 2), 4, ""),
    ("trn1.32xlarge", claims.neuron_efa_aligned_claim("c", 4, 4), 0, "topology"),  # 8 EFAs, 2 per group of 4
    ("trn1.32xlarge", claims.neuron_efa_aligned_claim("c", 16, 8), 1, ""),
    ("trn1.32xlarge", claims.neuron_efa_aligned_claim("c", "all", "all"), 1, ""),
    ("trn1.32xlarge", claims.neuron_claim("c", 4, connected=True), 4, ""),
    ("trn1.32xlarge", claims.neuron_claim("c", 17), 0, "too-few"),
    ("trn2.48xlarge", claims.neuron_efa_aligned_claim("c", 4, 4), 4, ""),
    ("trn2.48xlarge", claims.neuron_efa_aligned_claim("c", 1, 1), 16, ""),
    ("trn2.48xlarge", claims.neuron_efa_aligned_claim("c", 8, 9), 0, "topology"),
    ("trn2.48xlarge", claims.neuron_claim("c", 1, instance_type="trn2.48xlarge", logical_neuron_core=2), 16, ""),
    ("trn2.48xlarge", claims.neuron_claim("c", 1, instance_type="trn1.32xlarge"), 0, "no-devices"),
    ("trn2.48xlarge", claims.gpu_claim("c", 1), 0, "no-devices"),
]


@pytest.mark.parametrize(("itype", "built", "per_node", "cause"), FIT_TABLE,
                         ids=[f"{t}-{i}" for i, (t, *_) in enumerate(FIT_TABLE)])
def test_fit_table(itype: str, built: claims.BuiltClaim, per_node: int, cause: str) -> None:
    result = node_fit(itype, built)
    assert result.per_node == per_node, result.reason
    assert result.cause == cause
    assert bool(result.reason) == (per_node == 0)


def test_topology_reason_describes_the_node() -> None:
    result = node_fit("p4d.24xlarge", claims.gpu_efa_aligned_claim("c", 1, 2))
    assert "resource.kubernetes.io/pcieRoot" in result.reason
    assert "4 × (2 gpu.nvidia.com + 1 efa.networking.k8s.aws) per pcieRoot" in result.reason
    trn1 = node_fit("trn1.32xlarge", claims.neuron_efa_aligned_claim("c", 4, 4))
    assert "4 × (4 neuron.aws.com + 2 efa.networking.k8s.aws) per devicegroup4_id" in trn1.reason


def test_selector_reason_names_what_the_node_has() -> None:
    result = node_fit("g6e.48xlarge", claims.gpu_claim("c", 1, model="H100"))
    assert "8 × NVIDIA L40S (memory 46068Mi)" in result.reason


def test_all_mode_reason_says_every_device_is_taken() -> None:
    result = node_fit("p5en.48xlarge", claims.gpu_efa_aligned_claim("c", 1, "all"))
    assert "take all 16" in result.reason


def test_a_claim_holds_at_most_32_devices() -> None:
    """The scheduler refuses a claim needing more than AllocationResultsMaxSize devices; with
    firstAvailable it counts the smallest alternative, and skips alternatives that would exceed it."""
    too_many = node_fit("p5.48xlarge", claims.gpu_efa_aligned_claim("c", 8, 32))
    assert too_many.cause == "too-many" and "at least 40 devices" in too_many.reason
    efas = claims.first_available("efa", [claims.exact("every", "efa.networking.k8s.aws", "all"),
                                          claims.exact("some", "efa.networking.k8s.aws", 8)])
    built = claims.build("c", [claims.exact("gpu", "gpu.nvidia.com", 1), efas])
    assert node_fit("p5.48xlarge", built).per_node == 4  # "every" (33 devices) is skipped, "some" taken
    assert node_fit("p5en.48xlarge", built).per_node == 1  # 1 + all 16 EFAs fits the limit


def test_first_available_takes_the_first_alternative_that_fits() -> None:
    request = claims.first_available("gpu", [
        claims.exact("h100", "gpu.nvidia.com", 1, claims.gpu_selectors("H100")),
        claims.exact("l40s", "gpu.nvidia.com", 2, claims.gpu_selectors("L40S")),
    ])
    built = claims.build("c", [request])
    outcome = fit.allocate(built.devices, CLASSES, devices.inventory("g6e.48xlarge"))
    assert outcome.ok and outcome.devices[0][0] == "gpu/l40s" and len(outcome.devices[0][1]) == 2
    outcome = fit.allocate(built.devices, CLASSES, devices.inventory("p5.48xlarge"))
    assert outcome.ok and outcome.devices[0][0] == "gpu/h100"
    assert node_fit("g6e.48xlarge", built).per_node == 4


def test_first_available_constraint_by_request_or_subrequest_name() -> None:
    request = claims.first_available("gpu", [claims.exact("two", "gpu.nvidia.com", 2)])
    for name in ("gpu", "gpu/two"):
        built = claims.build("c", [request, claims.exact("efa", "efa.networking.k8s.aws", 1)],
                             [claims.match(devices.PCIE_ROOT, [name, "efa"])])
        assert node_fit("p4d.24xlarge", built).per_node == 4
        assert node_fit("p5.48xlarge", built).cause == "topology"


def test_distinct_attribute() -> None:
    spread = claims.build("c", [claims.exact("gpu", "gpu.nvidia.com", 4)],
                          [{"requests": [], "distinctAttribute": devices.PCIE_ROOT}])
    assert node_fit("p4d.24xlarge", spread).per_node == 2
    five = claims.build("c", [claims.exact("gpu", "gpu.nvidia.com", 5)],
                        [{"requests": [], "distinctAttribute": devices.PCIE_ROOT}])
    assert node_fit("p4d.24xlarge", five).cause == "topology"  # 4 roots, published
    five_efas = claims.build("c", [claims.exact("efa", "efa.networking.k8s.aws", 5)],
                             [{"requests": [], "distinctAttribute": devices.PCIE_ROOT}])
    assert node_fit(GB200, five_efas).cause == "topology-modelled"  # 4 roots, modelled


def test_match_attribute_skips_devices_lacking_it() -> None:
    built = claims.build("c", [claims.exact("efa", "efa.networking.k8s.aws", 1)],
                         [claims.match(devices.device_group(1))])
    assert node_fit("p5en.48xlarge", built).cause == "topology"  # EFAs of a GPU type have no groups
    assert node_fit(GB200, built).cause == "topology-modelled"
    assert node_fit("trn1.32xlarge", built).per_node == 8
    assert node_fit("trn2.48xlarge", built).per_node == 16


def test_trn1_pairs_one_efa_with_two_neuron_devices() -> None:
    """The lookup library gives two trn1 devices one EFA and its PCI address as their devicegroup1_id, so
    eight 1-device + 1-EFA aligned claims fit (connected-device-maps-over-efa-for-neuron v1.1.0)."""
    assert node_fit("trn1.32xlarge", claims.neuron_efa_aligned_claim("c", 1, 1)).per_node == 8


def test_missing_device_class_and_selector_errors() -> None:
    missing = claims.build("c", [claims.exact("x", "fpga.example.com", 1)])
    assert node_fit("p5.48xlarge", missing).cause == "class-missing"
    broken = claims.build("c", [claims.exact("gpu", "gpu.nvidia.com", 1,
                                             ["device.attributes['gpu.nvidia.com'].nonexistent == 1"])])
    result = node_fit("p5.48xlarge", broken)
    assert result.cause == "cel-error" and "nonexistent" in result.reason


def test_mig_devices_on_a_mig_pool() -> None:
    mig = claims.mig_claim("c", "1g.5gb")
    assert node_fit("p4d.24xlarge", mig, mig_profile="1g.5gb").per_node == 56  # 7 per A100, 8 GPUs
    assert node_fit("p4d.24xlarge", claims.mig_claim("c", "1g.5gb", 7), mig_profile="1g.5gb").per_node == 8
    assert node_fit("p4d.24xlarge", claims.mig_claim("c", "1g.5gb", 8),
                    mig_profile="1g.5gb").cause == "topology"  # 8 slices are never on one parent GPU
    assert node_fit("p4d.24xlarge", mig).cause == "no-devices"  # no MIG without a MIG profile
    assert node_fit("p4d.24xlarge", claims.mig_claim("c", "2g.10gb"), mig_profile="1g.5gb").cause == "no-devices"


def test_a_media_extension_mig_profile_fits_once_per_gpu() -> None:
    """`+me` owns the GPU's media engines, so each GPU has one such MIG device."""
    me = devices.inventory("p5.48xlarge", ("nvidia",), mig_profile="1g.10gb+me")
    assert len(me) == 8 and {d.attribute("gpu.nvidia.com/profile")[1] for d in me} == {"1g.10gb+me"}
    assert all(d.capacity["memory"] == "10Gi" and "+" not in d.name for d in me)
    assert node_fit("p5.48xlarge", claims.mig_claim("c", "1g.10gb+me"), mig_profile="1g.10gb+me").per_node == 8


def test_consumable_shares_let_several_claims_share_a_gpu() -> None:
    built = claims.gpu_claim("c", 1)
    assert node_fit("g6e.xlarge", built).per_node == 1
    assert node_fit("g6e.xlarge", built, gpu_shares=4).per_node == 4


def test_allocation_mode_all_shares_a_gpu_with_consumable_shares() -> None:
    """`allocationMode: All` takes one share of every matching GPU, so with 4 shares per GPU four such claims fit
    (the real 1.36 scheduler binds them: tests/e2e/test_dra_allocation.py, edge `shares-all`); an exclusive
    GPU still serves one."""
    every = claims.build("c", [claims.exact("gpu", "gpu.nvidia.com", "all")], (), [])
    assert node_fit("g6e.xlarge", every).per_node == 1
    assert node_fit("g6e.12xlarge", every, gpu_shares=4).per_node == 4


def test_shared_claim_is_allocated_once() -> None:
    result = node_fit("p5.48xlarge", claims.time_sliced_gpu_claim("c"))
    assert result.per_node == 1
    assert fit.describe([result], shared=True) == "fits on: p5.48xlarge (x1 shared by its Pods)"


def test_compute_domain_channel() -> None:
    built = claims.compute_domain_channel("cd")
    assert node_fit("p5.48xlarge", built, compute_domains=True).per_node == 1
    assert node_fit("p5.48xlarge", built).cause == "no-devices"


def test_describe() -> None:
    good = fit.NodeFit("p5.48xlarge", 1)
    bad = fit.NodeFit("p4d.24xlarge", 0, "too few", "too-few")
    assert fit.describe([good]) == "fits on: p5.48xlarge (x1 per node)"
    assert fit.describe([good, bad]) == "fits on: p5.48xlarge (x1 per node); not on: p4d.24xlarge (too few)"
    assert fit.describe([bad]) == "does not fit: too few"


def test_a_static_interface_layout_limits_the_efas() -> None:
    aligned = claims.gpu_efa_aligned_claim("c", 1, 4)
    assert node_fit("p5.48xlarge", aligned, efa_interfaces=8).per_node == 2  # cards 0-7: two PCIe roots
    assert node_fit("p5.48xlarge", aligned, efa_interfaces=32).per_node == 8


def test_a_search_that_runs_out_of_budget_is_undetermined(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fit, "SEARCH_BUDGET", 5)
    result = node_fit("p5.48xlarge", claims.gpu_efa_aligned_claim("c", 1, 5))
    assert result.cause == "undetermined" and "gave up" in result.reason


def _pairs_claim(requests: int) -> dict:
    """The issue's claim: every request `firstAvailable` of two alternatives, each 2 whole GPUs."""
    alt = {"deviceClassName": "gpu.nvidia.com", "count": 2}
    return {"requests": [{"name": f"r{i}", "firstAvailable": [{"name": "a", **alt}, {"name": "b", **alt}]}
                         for i in range(requests)]}


def test_a_claim_no_node_can_hold_is_decided_without_searching_every_combination() -> None:
    budget = fit.Budget(fit.SEARCH_BUDGET)
    outcome = fit.allocate(_pairs_claim(9), CLASSES, devices.inventory("p5.48xlarge"), budget=budget)
    assert not outcome.ok and outcome.cause == "too-few" and "needs 18 × gpu.nvidia.com" in outcome.reason
    assert budget.spent <= 2 ** 9  # one step per combination, no device placement tried


def test_the_search_budget_bounds_the_whole_claim_not_each_combination(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fit, "_short", lambda combo, candidates: False)  # force the full search
    node = devices.inventory("p5.48xlarge")
    exact = {"requests": [{"name": f"r{i}", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}
                          for i in range(9)]}
    one = fit.Budget(10 ** 9)
    assert not fit.allocate(exact, CLASSES, node, budget=one).ok  # the same search, one combination only
    per_combination = one.spent  # what one choice of alternatives costs
    budget = fit.Budget(3 * per_combination)  # far below the 512 combinations' total
    outcome = fit.allocate(_pairs_claim(9), CLASSES, node, budget=budget)
    assert outcome.cause == "undetermined" and "limit for the whole claim" in outcome.reason
    assert budget.spent == budget.limit + 1
    monkeypatch.setattr(fit, "SEARCH_BUDGET", 3 * per_combination)
    result = fit.fit_node(_pairs_claim(9), CLASSES, node, "p5.48xlarge")
    assert result.cause == "undetermined" and "gave up" in result.reason


@pytest.mark.parametrize(("version", "per_node"), [("1.34", 4), ("1.35", 4), ("1.36", 16)])
def test_consumable_shares_count_only_where_the_api_server_keeps_them(version: str, per_node: int) -> None:
    """Before 1.36 DRAConsumableCapacity is off: the API server drops a device's `allowMultipleAllocations`, so
    each of g6e.12xlarge's 4 GPUs goes to one claim (a real 1.34/1.35 scheduler binds 4 one-GPU Pods, not 16:
    tests/e2e/test_kubernetes_versions.py). The stack is refused there too (`karpenter-time-slicing`), but the
    fit it reports must be the cluster's."""
    pool = {"instanceTypes": ["g6e.12xlarge"], "devices": {"nvidia": "dra"},
            "gpuSharing": {"strategy": "time-slicing", "replicas": 4}}
    plan = stacks.build(stacks.config("karpenter", version, {"shares": pool},
                                      claims={"one": {"pools": ["shares"], "gpus": {"count": 1}}}))
    [claim] = plan.claims
    assert [n.per_node for n in claim.pools["shares"].nodes] == [per_node]
