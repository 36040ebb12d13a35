"""A platform team's own Pulumi program: its stack config in code, eks-devices' platform on it."""
import pulumi

from eks_devices.core import planner as planning
from eks_devices.core.spec.stack import parse
from eks_devices.platform import Platform

spec = parse({
    "aws:region": "us-east-2",
    "eks-devices:cluster": {"name": "research", "version": "1.36", "mode": "karpenter"},
    "eks-devices:nodePools": {
        "h100": {"instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}},
        "l40s": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "device-plugin"}},
    },
})
plan = planning.build(spec)
if plan.errors:
    raise pulumi.RunError("\n".join(f"{f.path}: {f.message} (fix: {f.fix})" for f in plan.errors))
platform = Platform("research", plan)
pulumi.export("kubeconfig", pulumi.Output.secret(platform.cluster.eks.kubeconfig_json))
pulumi.export("h100NodeSelector", {k: v for k, v in plan.pools["h100"].labels.items() if "device-manager" in k})
