"""The Pulumi program: the platform in `infra.py`, and its exports."""
import infra
import pulumi

pulumi.export("clusterName", infra.cluster_name)
pulumi.export("kubeconfig", infra.kubeconfig)
