"""DRA serving device-plugin extended resources (KEP-5004, DRAExtendedResource): the stack's choice
(`cluster.draExtendedResources`) against what its `gpu.nvidia.com` DeviceClass will say, and the Pods that
could reach DRA pools without anyone meaning them to."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.families import NVIDIA
from eks_devices.core.knowledge.device_classes import EXTENDED_RESOURCE_KUBERNETES, GPU_CLASS
from eks_devices.core.model import Plan
from eks_devices.core.names import eks_manager_label, manager_label
from eks_devices.core.rules.registry import Verdict, error, rule, warning

CHOICE = "cluster.draExtendedResources"
GPU_RESOURCE = NVIDIA.extended_resource


def _gpu_class_serves(plan: Plan) -> bool:
    """Whether the plan's `gpu.nvidia.com` DeviceClass names `nvidia.com/gpu` as its extended resource."""
    return any(c.name == GPU_CLASS and c.extended_resource_name == GPU_RESOURCE for c in plan.device_classes)


@rule("dra-extended-resources-off", "`cluster.draExtendedResources: false` needs a `gpu.nvidia.com` DeviceClass "
      "without `extendedResourceName` (the NVIDIA DRA chart has no switch for it)",
      modes=("karpenter", "managed-node-groups"))
def _dra_extended_resources_off(plan: Plan) -> Iterator[Verdict]:
    """dra-driver-nvidia-gpu v0.4.1 renders `extendedResourceName: nvidia.com/gpu` on its `gpu.nvidia.com` class
    whenever it renders `resource.k8s.io/v1` (`templates/deviceclass-gpu.yaml` l.12-14; `values.yaml` has no
    other knob), and v1 is the DRA API a 1.34+ cluster serves without opt-in (the beta versions need
    `--runtime-config`, which EKS does not expose; Kubernetes blog "v1.34: DRA has graduated to GA")."""
    if plan.spec.cluster.dra_extended_resources is False and _gpu_class_serves(plan):
        yield error(CHOICE, "the stack says plugin-style Pods must not be served through DRA, but the NVIDIA DRA "
                    "chart's gpu.nvidia.com DeviceClass names nvidia.com/gpu as its extended resource whenever it "
                    "renders resource.k8s.io/v1, and the chart has no value to leave it out",
                    f"set {CHOICE}: true and keep plugin-style Pods off the DRA pools with a nodeSelector on "
                    f"{manager_label('nvidia')}: device-plugin")


@rule("dra-extended-resources", "plugin-style `nvidia.com/gpu` Pods can be served through DRA on DRA pools: say "
      "whether that is meant where both kinds of pool exist (warning)")
def _dra_extended_resources(plan: Plan) -> Iterator[Verdict]:
    """From Kubernetes 1.36 the scheduler may allocate a `nvidia.com/gpu` request through DRA on a node without
    the device plugin when a DeviceClass names that extended resource (KEP-5004). With plugin pools beside
    DRA pools, a Pod meant for the plugin pools (same taint, same request) can land on, and use up, a DRA
    pool's GPUs. Karpenter and Auto Mode do not launch DRA nodes for such Pods, but the scheduler uses the
    free GPUs of DRA nodes that exist."""
    if (plan.spec.cluster.dra_extended_resources is not None or plan.spec.cluster.kubernetes
            < EXTENDED_RESOURCE_KUBERNETES or not _gpu_class_serves(plan)):
        return
    dra = sorted(p.name for p in plan.pools.values() if p.manager("nvidia") == "dra")
    plugin = sorted(p.name for p in plan.pools.values() if p.serves("nvidia", "device-plugin"))
    if not dra or not plugin:
        return
    label = eks_manager_label("nvidia") if plan.mode == "auto-mode" else manager_label("nvidia")
    off = f", or {CHOICE}: false to keep them off DRA nodes" if plan.mode == "auto-mode" else ""
    yield warning(CHOICE, f"Pods asking for {GPU_RESOURCE} (meant for pools {', '.join(plugin)}) can also be served "
                  f"through DRA on pools {', '.join(dra)}: their gpu.nvidia.com DeviceClass names {GPU_RESOURCE} "
                  f"as its extended resource (DRAExtendedResource, on from Kubernetes 1.36)",
                  f"give plugin-style Pods a nodeSelector on {label}: device-plugin, and state the choice: "
                  f"{CHOICE}: true to let them use DRA pools{off}")
