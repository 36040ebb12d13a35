"""AWS Trainium and Inferentia (Neuron): the Neuron DRA driver or the Neuron device plugin."""

from __future__ import annotations

from typing import Any

from eks_devices.core.families.base import DROP, DeviceFamily, NodeFacts


def _bottlerocket(node: NodeFacts) -> dict[str, Any]:
    """On Neuron instance types the kubelet must give device nodes the container's user and group, or non-root
    containers cannot open /dev/neuron* (bottlerocket QUICKSTART-EKS and PR #4400; Karpenter docs PR #7722)."""
    return {"kubernetes": {"device-ownership-from-security-context": True}} if node.has_devices else {}


NEURON = DeviceFamily(
    name="neuron",
    title="Neuron",
    releases={"dra": "neuron-dra-driver", "device-plugin": "neuron-device-plugin"},
    extended_resource="aws.amazon.com/neuron",
    dra_driver="neuron.aws.com",
    device_class="neuron.aws.com",
    device_class_cel='device.driver == "neuron.aws.com"',
    dra_kubernetes=(1, 34),
    taint="aws.amazon.com/neuron",
    al2023_variant="NEURON",  # EKS API reference, Nodegroup amiType; Bottlerocket's standard variants carry it
    al2023_architectures=("x86_64",),  # AL2023_x86_64_NEURON only
    opaque_configs={"neuron.aws.com": ("neuron.aws.com/v1", ("NeuronConfig",))},  # aws-neuron-sdk deploy/eks/dra.rst
    short_key="neurons",
    claim_count_max=16,  # the most Neuron devices a type has (trn1.32xlarge, trn2.48xlarge: 16)
    efa_alignment="neuron",
    catalog_count="neuron_count",
    auto_mode_claims=("Auto Mode runs Trainium and Inferentia on the Neuron device plugin only: no Neuron DRA driver "
                      "publishes neuron.aws.com devices there",
                      "request them from the device plugin: make the claim kind: extended-resource with "
                      "extendedResources {aws.amazon.com/neuron: N} (drop "
                      f"{DROP}), or use a static Karpenter pool or a managed node group (cluster.mode) for "
                      "Neuron DRA"),
    bottlerocket_settings=_bottlerocket,
    # Auto Mode runs Neuron devices with the device plugin only, and has no label to choose otherwise
    sources=("EKS user guide, Manage hardware devices on Amazon EKS (Auto Mode: Neuron with the device plugin)",
             "aws-neuron/neuron-helm-charts (DeviceClass neuron.aws.com)"),
)
