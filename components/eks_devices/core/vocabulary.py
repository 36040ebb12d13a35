"""The project's words as types: modes, device families and managers, provisioning, capacity, AMI
families and the chart keys. Every other module takes these from here."""

from __future__ import annotations

from typing import Literal

NAMESPACE = "eks-devices"  # the stack configuration namespace: `eks-devices:<key>`

Mode = Literal["auto-mode", "karpenter", "managed-node-groups"]
MODES: tuple[Mode, ...] = ("auto-mode", "karpenter", "managed-node-groups")
Provisioning = Literal["dynamic", "static"]
Capacity = Literal["on-demand", "spot", "reserved", "capacity-block"]
AmiFamily = Literal["al2023", "bottlerocket"]
# `inferred` (dynamic Auto Mode pools, NVIDIA and EFA only): no device-manager label, Auto Mode picks per node
ManagerChoice = Literal["dra", "device-plugin", "none", "auto", "inferred"]
Family = Literal["nvidia", "efa", "neuron"]
FAMILIES: tuple[Family, ...] = ("nvidia", "efa", "neuron")
# Keys of per-chart settings (`helmValues`, `chartVersions`): one per Helm release the toolkit makes.
ChartKey = Literal[
    "karpenter", "nvidia-dra-driver", "nvidia-device-plugin", "aws-dranet",
    "aws-efa-k8s-device-plugin", "neuron-dra-driver", "neuron-device-plugin",
]
CHART_KEYS: tuple[str, ...] = ChartKey.__args__  # type: ignore[attr-defined]
