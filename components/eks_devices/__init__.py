"""eks-devices: Pulumi components that build EKS clusters for accelerated workloads and decide,
per node pool and device family, whether a DRA driver or a device plugin manages the devices."""

__version__ = "0.1.0"
