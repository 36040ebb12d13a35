"""AWS Trainium and Inferentia (Neuron): the Neuron DRA driver or the Neuron device plugin."""

from __future__ import annotations

from eks_devices.core.families.base import DeviceFamily

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
    # Auto Mode runs Neuron devices with the device plugin only, and has no label to choose otherwise
    sources=("EKS user guide, Manage hardware devices on Amazon EKS (Auto Mode: Neuron with the device plugin)",
             "aws-neuron/neuron-helm-charts (DeviceClass neuron.aws.com)"),
)
