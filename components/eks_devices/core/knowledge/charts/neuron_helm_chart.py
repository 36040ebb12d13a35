"""The Neuron chart (aws-neuron/neuron-helm-charts neuron-helm-chart, read at 1.10.0): one chart, two
releases, since DRA mode and plugin mode are exclusive per release.

In DRA mode the chart itself renders the `neuron-dra-driver` Namespace its DaemonSet runs in
(`draDriver.namespaceOverride`, no switch to turn that off), so the release lives in kube-system:
installed into neuron-dra-driver, Helm could neither create the namespace first (the chart's own object
would collide) nor store the release without it.
"""

from __future__ import annotations

from eks_devices.core.families import NEURON
from eks_devices.core.knowledge.charts.base import Agent, Chart, ChartClass, Image, Releases, Toleration, required
from eks_devices.core.vocabulary import NO_SCHEDULE

INFERENTIA = ("inf", "ml.inf")  # instance-type prefixes the chart keeps its DRA driver off
# Placeholders the chart's default affinity carries and its template fills in: the instance-type label
# key and the `neuronInstances` list (without Inferentia for the DRA driver).
NEURON_INSTANCE_TYPE_KEY = "__INSTANCE_TYPE_KEY__"
NEURON_INSTANCES = "__NEURON_INSTANCES__"
NEURON_AFFINITY = required([{"key": NEURON_INSTANCE_TYPE_KEY, "operator": "In", "values": NEURON_INSTANCES}])

# Both DaemonSets take their tolerations only from the values list, which defaults to CriticalAddonsOnly,
# the Neuron taint (NoSchedule) and SageMaker's node-health taint. Both modes' default required affinity
# admits only the instance types listed in `neuronInstances` (through the placeholders above; `values.yaml`
# lists the Trainium and Inferentia types), and the DRA
# driver's drops the Inferentia ones (`inf*`): the Neuron DRA driver serves Trainium.
_TOLERATIONS = (Toleration("CriticalAddonsOnly"), Toleration("aws.amazon.com/neuron", NO_SCHEDULE),
                Toleration("sagemaker.amazonaws.com/node-health-status", NO_SCHEDULE, "Unschedulable"))
_AGENTS = (
    Agent("neuron", "dra", "draDriver.nodeSelector", "draDriver.affinity", "draDriver.tolerations",
          enabled="draDriver.enabled", enabled_default=False, instance_types="neuronInstances",
          default_tolerations=_TOLERATIONS, excluded_prefixes=INFERENTIA, serves_only="Trainium",
          instance_types_in_affinity=True, default_affinity=NEURON_AFFINITY,
          images=("neuron-dra-driver",)),  # public.ecr.aws/neuron/neuron-dra-driver
    Agent("neuron", "device-plugin", "devicePlugin.nodeSelector", "devicePlugin.affinity",
          "devicePlugin.tolerations", enabled="devicePlugin.enabled", enabled_default=True,
          instance_types="neuronInstances", default_tolerations=_TOLERATIONS,
          instance_types_in_affinity=True, default_affinity=NEURON_AFFINITY,
          images=("neuron-device-plugin",)),  # public.ecr.aws/neuron/neuron-device-plugin
)
RELEASES = Releases(("1.8.0", "1.9.0", "1.10.0"),
                    "aws-neuron/neuron-helm-charts releases 1.8.0-1.10.0 (1.10.0: 2026-08-19)")
# templates/scheduler-extn.yaml and custom-scheduler.yaml are Deployments under `scheduler.enabled` (default
# false); the device plugin, DRA driver and node problem detector are DaemonSets.
_SWITCHES = (("scheduler.enabled", False),)
# templates/_helpers.tpl `neuron-dra-driver.fullimage` / `neuron-device-plugin.fullimage`: `<repository>:<tag>`,
# each under its switch (the toolkit turns the other one, the node problem detector and the scheduler off)
_IMAGES = (Image("draDriver.image.repository", "draDriver.image.tag", "public.ecr.aws/neuron/neuron-dra-driver",
                 enabled=("draDriver.enabled", False)),
           Image("devicePlugin.image.repository", "devicePlugin.image.tag",
                 "public.ecr.aws/neuron/neuron-device-plugin", enabled=("devicePlugin.enabled", True)))
DRA_DRIVER, DEVICE_PLUGIN = (
    Chart(key, "neuron-helm-chart", "oci://public.ecr.aws/neuron", "1.10.0", "kube-system", RELEASES, _AGENTS,
          deployment_switches=_SWITCHES, images=_IMAGES,
          # templates/dra-driver/dra-driver-deviceclass.yaml, with the DRA driver
          device_classes=(ChartClass(NEURON.device_class, NEURON.dra_driver, NEURON.device_class_cel,
                                     ("draDriver.enabled", False)),))
    for key in ("neuron-dra-driver", "neuron-device-plugin"))
