"""What the e2e tests that put devices, Nodes and Pods on the real control plane share: adding a batch's
device nodes, waiting until the scheduler and controllers are done, and removing the nodes again."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from e2e.controlplane import ControlPlane
from eks_devices.core.knowledge import devices as inventory
from eks_devices.core.knowledge.devices import Device

WORKERS = 8  # requests in flight while a batch is created or removed
T = TypeVar("T")


def settle(poll: Callable[[], T | None], timeout: float, what: str) -> T:
    """`poll()` once a second until it gives the same answer twice in a row (None: not done yet); the
    scheduler and controllers act on events, so one quiet second means they are done."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        snapshot = poll()
        if snapshot is not None and snapshot == last:
            return snapshot
        last = snapshot
        time.sleep(1.0)
    raise TimeoutError(f"{what} did not settle in {timeout} s: {last}")


def add_device_nodes(plane: ControlPlane,
                     nodes: Iterable[tuple[str, dict[str, str], Sequence[Device], Sequence[dict[str, Any]]]]) -> None:
    """Create each `(node, labels, devices, objects)`: the node, its devices' ResourceSlices, then its objects
    in order (nodes in parallel)."""
    def add(entry: tuple[str, dict[str, str], Sequence[Device], Sequence[dict[str, Any]]]) -> None:
        node, labels, devices, objects = entry
        plane.add_node(node, labels)
        for piece in inventory.slices_of(tuple(devices), node):
            plane.apply(piece)
        for obj in objects:
            plane.apply(obj)

    with ThreadPoolExecutor(WORKERS) as workers:
        list(workers.map(add, nodes))


def remove_device_nodes(plane: ControlPlane, nodes: Iterable[tuple[str, str, Sequence[Device]]]) -> None:
    """Delete each `(namespace, node, devices)`: the namespace, the node's ResourceSlices and the node."""
    def remove(entry: tuple[str, str, Sequence[Device]]) -> None:
        namespace, node, devices = entry
        plane.delete("v1", "Namespace", namespace)
        for piece in inventory.slices_of(tuple(devices), node):
            plane.delete("resource.k8s.io/v1", "ResourceSlice", piece["metadata"]["name"])
        plane.delete("v1", "Node", node)

    with ThreadPoolExecutor(WORKERS) as workers:
        list(workers.map(remove, nodes))
