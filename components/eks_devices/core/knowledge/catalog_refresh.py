"""Refresh the instance catalogue snapshot from EC2 `DescribeInstanceTypes` (boto3, read-only).

The snapshot (`components/data/instance_types.json`) is committed so that the pure core never
needs an AWS account; this module maps EC2's records to catalogue entries (`eks_devices.preflight.catalogue` brings
the boto3 client). Types that EC2
(or moto's copy of its data) does not describe are kept from `EXTRA_TYPES`, with their source.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eks_devices.core.vocabulary import EFA_INTERFACE, EFA_ONLY

SNAPSHOT = Path(__file__).parent / "data" / "instance_types.json"
# A catalogued GPU model is EC2's GPU `Name` after this prefix (EC2 reports the manufacturer apart).
NVIDIA_MODEL_PREFIX = "NVIDIA "

# Instance families the project supports. Every size EC2 describes is taken.
FAMILIES: tuple[str, ...] = (
    "g4dn", "g5", "g5g", "g6", "g6e", "g6f", "gr6", "gr6f", "g7e", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en",
    "p6-b200", "p6-b300", "p6e-gb200", "trn1", "trn1n", "trn2", "inf2",
)

# Types absent from DescribeInstanceTypes data (moto 5.2.5 lacks p6e-gb200). Figures from
# the EKS User Guide, "Use P6e-GB200 UltraServers with Amazon EKS", and Karpenter `instance-types.md`.
EXTRA_TYPES: tuple[dict[str, Any], ...] = (
    {
        "name": "p6e-gb200.36xlarge",
        "architecture": "arm64",
        "gpu_count": 4,
        "gpu_model": "NVIDIA GB200",
        "gpu_memory_mib": None,
        "gpu_partition": None,
        "neuron_count": 0,
        "neuron_model": None,
        "efa_supported": True,
        "max_efa_interfaces": 17,
        "network_cards": 17,
        "efa_cards": None,  # which cards take EFA is not in the sources
        "source": ("EKS User Guide, \"Use P6e-GB200 UltraServers with Amazon EKS\": "
                   "4 GPUs per node, up to 17 network cards, AL2023 ARM NVIDIA AMI"),
    },
)


def _efa_cards(net: dict[str, Any]) -> list[int]:
    """The network cards that take an EFA (p6-b300's card 0, for one, is ENA-only)."""
    if not net.get("EfaSupported"):
        return []
    return sorted(c["NetworkCardIndex"] for c in net.get("NetworkCards", [])
                  if {EFA_INTERFACE, EFA_ONLY} & set(c.get("InterfaceTypes", [])))


def _gpu_count(gpu: dict[str, Any]) -> int:
    """The GPUs one `Gpus` record gives a node. A partitioned GPU (g6f, gr6f: `GpuPartitionSize` below 1,
    `Count` 0) is a whole device to the driver on the instance, one per `LogicalGpuCount`, as Karpenter's
    DRA metadata lists them (one `NVIDIA L4-3Q` on a g6f.large)."""
    if gpu.get("Count"):
        return int(gpu["Count"])
    return int(gpu.get("LogicalGpuCount", 0)) if _partition(gpu) else 0


def _partition(gpu: dict[str, Any]) -> float | None:
    """The fraction of one GPU each device is (EC2's `GpuPartitionSize`); None for whole GPUs."""
    size = gpu.get("GpuPartitionSize", 1)
    return float(size) if size < 1 else None


def _entry(raw: dict[str, Any]) -> dict[str, Any]:
    """The catalogue fields of one `DescribeInstanceTypes` record."""
    gpus = (raw.get("GpuInfo") or {}).get("Gpus") or []
    neurons = (raw.get("NeuronInfo") or {}).get("NeuronDevices") or []
    net = raw.get("NetworkInfo") or {}
    nvidia_gpus = [g for g in gpus if g.get("Manufacturer") == "NVIDIA"]
    archs = raw.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    return {
        "name": raw["InstanceType"],
        "architecture": "arm64" if "arm64" in archs else "x86_64",
        "gpu_count": sum(_gpu_count(g) for g in nvidia_gpus),
        "gpu_model": f"{NVIDIA_MODEL_PREFIX}{nvidia_gpus[0]['Name']}" if nvidia_gpus else None,
        "gpu_memory_mib": nvidia_gpus[0].get("MemoryInfo", {}).get("SizeInMiB") if nvidia_gpus else None,
        "gpu_partition": _partition(nvidia_gpus[0]) if nvidia_gpus else None,
        "neuron_count": sum(n.get("Count", 0) for n in neurons),
        "neuron_model": neurons[0]["Name"] if neurons else None,
        "efa_supported": bool(net.get("EfaSupported")),
        "max_efa_interfaces": (net.get("EfaInfo") or {}).get("MaximumEfaInterfaces", 0),
        "network_cards": net.get("MaximumNetworkCards", 1),
        "efa_cards": _efa_cards(net),
        "source": "EC2 DescribeInstanceTypes",
    }


def describe(client: Any) -> list[dict[str, Any]]:
    """Every supported instance type EC2 describes, as catalogue entries sorted by name."""
    patterns = [f"{family}.*" for family in FAMILIES]
    found: dict[str, dict[str, Any]] = {}
    paginator = client.get_paginator("describe_instance_types")
    for page in paginator.paginate(Filters=[{"Name": "instance-type", "Values": patterns}]):
        for raw in page["InstanceTypes"]:
            found[raw["InstanceType"]] = _entry(raw)
    for extra in EXTRA_TYPES:
        found.setdefault(extra["name"], dict(extra))
    return [found[name] for name in sorted(found)]


def write(client: Any, path: Path = SNAPSHOT) -> int:
    """Write the snapshot from an EC2 client (live or mocked); returns the number of types."""
    entries = describe(client)
    path.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n")
    return len(entries)
