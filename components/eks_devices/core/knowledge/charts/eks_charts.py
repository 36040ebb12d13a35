"""The EFA charts of aws/eks-charts: aws-dranet (DRANET, 1.0.0) and aws-efa-k8s-device-plugin (v0.5.30).

Both templates hard-code CriticalAddonsOnly and append `tolerations`, run on the host network, and build
their required affinity from supportedInstanceLabels.keys × .values (aws-dranet `templates/daemonset.yaml`
lines 35-66, aws-efa-k8s-device-plugin lines 34-64). One DaemonSet each. `supportedInstanceLabels.values`
defaults to the instance types with an EFA (`stable/aws-dranet/values.yaml`,
`stable/aws-efa-k8s-device-plugin/values.yaml`).
"""

from __future__ import annotations

from eks_devices.core.families import EFA
from eks_devices.core.knowledge.charts.base import (
    Agent,
    Chart,
    ChartClass,
    Image,
    Refusal,
    Releases,
    series,
    truthy,
)
from eks_devices.core.names import INSTANCE_TYPE_LABEL
from eks_devices.core.values import chart_value

REPOSITORY = "https://aws.github.io/eks-charts"
# eks-charts aws-efa-k8s-device-plugin v0.5.30 and aws-dranet 1.0.0 (`values.yaml`
# `supportedInstanceLabels.keys`): one term per key, `key In supportedInstanceLabels.values`; the
# template appends `eks.amazonaws.com/compute-type NotIn [auto]` after the loop, so to the last term.
EKS_CHARTS_INSTANCE_KEYS = (INSTANCE_TYPE_LABEL,)


def _agent(manager: str, image: str) -> Agent:
    return Agent("efa", manager, "nodeSelector", None, "tolerations", ("CriticalAddonsOnly",),
                 instance_types="supportedInstanceLabels.values", host_network=True,
                 instance_label_keys="supportedInstanceLabels.keys",
                 default_instance_label_keys=EKS_CHARTS_INSTANCE_KEYS, images=(image,))


DRANET = Chart(
    "aws-dranet", "aws-dranet", REPOSITORY, "1.0.0", "kube-system",
    Releases(("1.0.0",), "aws/eks-charts gh-pages index.yaml (2026-08-03)"),
    agents=(_agent("dra", "dranet"),),
    eks_image="eks/dranet",  # <account>.dkr.ecr.<region>.amazonaws.com/eks/dranet
    images=(Image("image.repository", "image.tag", None),),  # templates/daemonset.yaml: `<repository>:<tag>`
    read_values=(("deviceClass.name", "text"),),
    # templates/deviceclass.yaml: under `deviceClass.create`, named `deviceClass.name`
    device_classes=(ChartClass(EFA.device_class, EFA.dra_driver, EFA.device_class_cel, ("deviceClass.create", True),
                               name_path="deviceClass.name"),),
    # `templates/daemonset.yaml` at chart 1.0.0 fails on an empty image tag
    refusals=(Refusal("aws-dranet", ("image.tag",),
                      lambda v: not truthy(chart_value(v, "image.tag", "v1.2.0-eksbuild.2")),
                      "image.tag is empty", "an image tag, or no image.tag value (the chart's default)",
                      "aws-dranet 1.0.0 templates/daemonset.yaml"),),
    deployment_switches=(),
)
EFA_DEVICE_PLUGIN = Chart(
    "aws-efa-k8s-device-plugin", "aws-efa-k8s-device-plugin", REPOSITORY, "v0.5.30", "kube-system",
    Releases(("v0.4.2", "v0.4.4", *series("v0.", 5, (2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 16, 17, 18, 19, 20,
                                                     21, 22, 24, 25, 26, 27, 28, 29, 30))),
             "aws/eks-charts gh-pages index.yaml (2026-08-03); later image bumps (PRs #1363, #1366) not read"),
    agents=(_agent("device-plugin", "aws-efa-k8s-device-plugin"),),
    eks_image="eks/aws-efa-k8s-device-plugin",
    # templates/daemonset.yaml: `<repository>:<tag | default appVersion>`; values.yaml sets the tag per release
    images=(Image("image.repository", "image.tag", None),),
    deployment_switches=(),
)
