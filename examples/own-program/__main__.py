"""A platform team's own Pulumi program: its stack config in code, eks-devices' platform on it."""
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
pulumi.export("kubeconfig", pulumi.Output.secret(platform.cluster.eks.kubeconfig_json))
pulumi.export("h100NodeSelector",
              {k: v for k, v in platform.plan.pools["h100"].labels.items() if "device-manager" in k})
