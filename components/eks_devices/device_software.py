"""DeviceSoftware: the device software of one cluster, from the Plan.

Self-managed modes (karpenter, managed-node-groups): one Helm release per (device family,
manager) that some pool uses — `plan.releases`, values already scoped and merged — installed with
`helm.v3.Release`, in its namespace (created here unless it is kube-system). Auto Mode: no
release at all; Auto Mode runs its own drivers and plugins. In every mode the DeviceClasses the
toolkit owns and the shared-claim ResourceClaims (`device_manifests`) become typed
`resource.k8s.io/v1` objects. The component decides nothing: it translates the Plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from eks_devices.core.knowledge.charts import runs_deployment
from eks_devices.core.manifests import software as device_manifests
from eks_devices.core.model import Plan
from eks_devices.core.model import Release as ReleasePlan
from eks_devices.core.names import DEVICE_SOFTWARE_TYPE
from eks_devices.inputs import check_plan, name_problems, provider_problems


@dataclass(frozen=True)
class DeviceSoftwareArgs:
    """What the device software takes: the `plan` (its releases, DeviceClasses and shared claims),
    the cluster's Kubernetes provider, what everything waits for (`depends_on`; the provider already
    waits for the cluster), and the nodes a release running a Deployment waits for (`workload_nodes`:
    DaemonSet-only releases install before any node exists)."""

    plan: Plan
    k8s_provider: pulumi.ProviderResource
    depends_on: Sequence[pulumi.Resource] = ()
    workload_nodes: Sequence[pulumi.Resource] = ()


class DeviceSoftware(pulumi.ComponentResource):
    """Helm releases of the device software, toolkit-owned DeviceClasses and shared GPU claims."""

    pulumi_type = DEVICE_SOFTWARE_TYPE  # the type token; Pulumi's component analyzer reads it from the class

    # The attributes are declared in __init__, not on the class: the SDK evaluates a component class's
    # annotations at its registration (pulumi 3.272.0, `_types.resource_types`), and these would load
    # `pulumi_kubernetes.resource.v1` in every stack without a DeviceClass or claim (~40 ms, 3 MiB), and
    # the Helm module in Auto Mode, which installs no release.

    def __init__(self, name: str, args: DeviceSoftwareArgs, opts: pulumi.ResourceOptions | None = None):
        plan = args.plan
        check_plan("DeviceSoftware", plan, [*name_problems(name), *provider_problems(args.k8s_provider, required=True)])
        super().__init__(DEVICE_SOFTWARE_TYPE, name, None, opts)
        self._name = name
        self._provider = args.k8s_provider
        self._depends_on = list(args.depends_on)
        self._workload_nodes = list(args.workload_nodes)
        self.namespaces: dict[str, k8s.core.v1.Namespace] = {
            m["metadata"]["name"]: self._namespace(m) for m in device_manifests.namespaces(plan)}
        self.releases: dict[str, k8s.helm.v3.Release] = {
            key: self._release(r) for key, r in sorted(plan.releases.items())}
        self.device_classes: dict[str, k8s.resource.v1.DeviceClass] = {
            m["metadata"]["name"]: self._device_class(m) for m in device_manifests.toolkit_device_classes(plan)}
        self.claims: dict[str, k8s.resource.v1.ResourceClaim] = {
            f"{m['metadata']['namespace']}/{m['metadata']['name']}": self._claim(m)
            for m in device_manifests.shared_claims(plan)}
        self.register_outputs({
            "releases": {key: r.status for key, r in self.releases.items()},
            "deviceClasses": sorted(self.device_classes),
            "claims": sorted(self.claims),
        })

    def _opts(self, *extra: pulumi.Resource, **kwargs: Any) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, provider=self._provider,
                                      depends_on=[*self._depends_on, *extra], **kwargs)

    def _namespace(self, manifest: dict[str, Any]) -> k8s.core.v1.Namespace:
        return k8s.core.v1.Namespace(f"{self._name}-ns-{manifest['metadata']['name']}",
                                     metadata=manifest["metadata"], opts=self._opts())

    def _release(self, release: ReleasePlan) -> k8s.helm.v3.Release:
        """One Helm release: OCI charts by full reference, others from their repository. Values go
        through with their nulls (a null deletes a chart default, as `helm --set k=null` does)."""
        oci = release.chart.startswith("oci://")
        namespace = self.namespaces.get(release.namespace)
        nodes = self._workload_nodes if runs_deployment(release.key, release.values) else []
        return k8s.helm.v3.Release(
            f"{self._name}-{release.key}",
            k8s.helm.v3.ReleaseArgs(
                name=release.key,
                chart=release.chart,
                repository_opts=None if oci else k8s.helm.v3.RepositoryOptsArgs(repo=release.repository),
                version=release.version,
                namespace=release.namespace,
                create_namespace=False,
                values=release.values,
                allow_null_values=True,
                cleanup_on_fail=True,
                max_history=10,
            ),
            opts=self._opts(*([namespace] if namespace else []), *nodes),
        )

    def _device_class(self, manifest: dict[str, Any]) -> k8s.resource.v1.DeviceClass:
        # a fixed cluster-wide name: a replacement must delete the old object first
        # needs nothing of the releases: a class only selects devices that drivers publish later
        return k8s.resource.v1.DeviceClass(
            f"{self._name}-class-{manifest['metadata']['name']}",
            metadata=manifest["metadata"], spec=manifest["spec"],
            opts=self._opts(delete_before_replace=True))

    def _claim(self, manifest: dict[str, Any]) -> k8s.resource.v1.ResourceClaim:
        # a claim's spec is immutable: a change replaces it (the old one first, the name is fixed);
        # it waits for its namespace and the class it names if the toolkit creates it, not for a driver
        meta = manifest["metadata"]
        requests = manifest["spec"]["devices"]["requests"]
        waits = [self.namespaces.get(meta["namespace"]),
                 *(self.device_classes.get(r["exactly"]["deviceClassName"]) for r in requests)]
        return k8s.resource.v1.ResourceClaim(
            f"{self._name}-claim-{meta['namespace']}-{meta['name']}",
            metadata=meta, spec=manifest["spec"],
            opts=self._opts(*(w for w in waits if w is not None),
                            delete_before_replace=True, replace_on_changes=["spec"]))
