"""The team's platform: two GPU pools on a Karpenter cluster (imported by `__main__.py` and the tests)."""
import pulumi

from eks_devices import Platform, PlatformArgs

platform = Platform("research", PlatformArgs(
    region="us-east-2",
    cluster={"name": "research", "version": "1.36", "mode": "karpenter"},
    node_pools={
        "h100": {"instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}},
        "l40s": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}},
    },
))
cluster_name = platform.cluster.name
kubeconfig = pulumi.Output.secret(platform.cluster.eks.kubeconfig_json)
