"""Programs that do not use eks-devices, for the policy pack's tests."""

from __future__ import annotations

import pulumi
import pulumi_eks as eks
import pulumi_kubernetes as k8s


def foreign_program() -> None:
    """A team's own program, no eks-devices: a pulumi-eks GPU node group on its existing cluster, a
    Karpenter NodePool, and both NVIDIA charts installed with their defaults. (The node group gets the
    cluster as core data; the Python mocks cannot deserialize the resource references inside a mocked
    `eks.Cluster`'s `core` reliably, and the policies read only the node group's own inputs.)"""
    core = {"cluster": {"name": "ml"}, "subnetIds": ["subnet-0a1b2c3d"], "vpcId": "vpc-0a1b2c3d"}
    eks.ManagedNodeGroup("gpu", cluster=core, instance_types=["g6e.xlarge"],
                         node_role_arn="arn:aws:iam::123456789012:role/nodes",
                         scaling_config={"min_size": 1, "max_size": 2, "desired_size": 1})
    provider = k8s.Provider("k8s", kubeconfig="{}")
    opts = pulumi.ResourceOptions(provider=provider)
    k8s.apiextensions.CustomResource("gpu-pool", api_version="karpenter.sh/v1", kind="NodePool", spec={
        "template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6e"]}]}}},
        opts=opts)
    k8s.helm.v3.Release("device-plugin", chart="nvidia-device-plugin", version="0.20.0", namespace="nvidia",
                        repository_opts={"repo": "https://nvidia.github.io/k8s-device-plugin"}, opts=opts)
    k8s.helm.v4.Chart("dra-driver", chart="oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu",
                      version="0.4.1", namespace="nvidia", values={"gpuResourcesEnabledOverride": True}, opts=opts)
