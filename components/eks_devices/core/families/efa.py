"""AWS Elastic Fabric Adapters: DRANET (aws-dranet) or the EFA device plugin."""

from __future__ import annotations

from eks_devices.core.families.base import DeviceFamily

EFA = DeviceFamily(
    name="efa",
    title="EFA",
    releases={"dra": "aws-dranet", "device-plugin": "aws-efa-k8s-device-plugin"},
    extended_resource="vpc.amazonaws.com/efa",
    dra_driver="dra.net",
    device_class="efa.networking.k8s.aws",
    device_class_cel=("device.driver == \"dra.net\" && "
                      "device.attributes[\"dra.net\"].pciDevice == 'Elastic Fabric Adapter (EFA)'"),
    dra_kubernetes=(1, 35),  # aws-dranet requires 1.35 (aws/eks-charts `stable/aws-dranet` README)
    auto_mode_label=True,
    auto_mode_dra=True,
    karpenter_gate="draEFA",
    karpenter_selectable=frozenset({"pciDevice", "pciVendor", "pciSubsystem", "rdma", "numaNode"}),
    short_key="efa",
    claim_count_max=32,  # the most EFA interfaces a type has (p5.48xlarge, EC2 User Guide: EFA-supported types)
    interfaces=True,
    catalog_count="max_efa_interfaces",
    sources=("EKS user guide, Manage hardware devices on Amazon EKS (aws-dranet, Kubernetes 1.35)",
             "Karpenter v1.15 docs, tasks/dra (settings.awsFeatureGates.draEFA)"),
)
