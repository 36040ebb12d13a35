"""Karpenter's charts (`karpenter-crd`, then `karpenter` with CRDs skipped), one version for both."""

from __future__ import annotations

from eks_devices.core.knowledge.charts.base import Chart, Image, Releases, series

RELEASES = Releases(
    tuple(v for minor, last in ((0, 14), (1, 10), (2, 8), (3, 8), (4, 4), (5, 8), (6, 8), (7, 6), (8, 8), (9, 2),
                                (10, 2), (11, 3), (12, 2), (13, 1), (14, 1), (15, 2))
          for v in series("1.", minor, last)),
    "aws/karpenter-provider-aws tags v1.0.0-v1.14.1; v1.15.0 (#9719, 2026-10), v1.15.1 and v1.15.2 (release notes)")

KARPENTER_CRD = Chart("karpenter-crd", "karpenter-crd", "oci://public.ecr.aws/karpenter", "1.15.0", "kube-system",
                      RELEASES)
# templates/_helpers.tpl `karpenter.controller.image`: `<repository>:<tag | default appVersion>@<digest>` when a
# digest is set, which values.yaml does for each release's controller (read at v1.14.1)
KARPENTER = Chart("karpenter", "karpenter", "oci://public.ecr.aws/karpenter", "1.15.0", "kube-system", RELEASES,
                  images=(Image("controller.image.repository", "controller.image.tag",
                                "public.ecr.aws/karpenter/controller", digest="controller.image.digest",
                                tag_of=lambda version: version),),
                  read_values=(("settings", "mapping"), ("settings.awsFeatureGates", "mapping"),
                               ("settings.featureGates", "mapping")))

# The keys of `settings` the chart reads at the pinned 1.15.0, per mapping ("" is `settings` itself): its
# values.yaml `settings` block, each key read by templates/deployment.yaml (or, for enableDRA,
# ignoreDRARequests and the draNVIDIAGPU / draEFA gates, the `karpenter.dra` helper in templates/_helpers.tpl)
# (aws/karpenter-provider-aws v1.15.0 charts/karpenter). A key it does not read is dropped without a word.
SETTINGS_VERSION = "1.15.0"
SETTINGS_KEYS: dict[str, tuple[str, ...]] = {
    "": ("batchMaxDuration", "batchIdleDuration", "preferencePolicy", "minValuesPolicy", "clusterCABundle",
         "clusterName", "clusterEndpoint", "isolatedVPC", "eksControlPlane", "vmMemoryOverheadPercent",
         "interruptionQueue", "enableZonalShift", "reservedENIs", "enableDRA", "ignoreDRARequests", "legacyNodeRepair",
         "disableClusterStateObservability", "disableDryRun", "amiRefreshInterval", "subnetRefreshInterval",
         "securityGroupRefreshInterval", "featureGates", "awsFeatureGates"),
    "featureGates": ("nodeRepair", "nodeOverlay", "reservedCapacity", "spotToSpotConsolidation", "staticCapacity",
                     "capacityBuffer", "terminateFirstDrift", "terminateFirstRepair", "podDeletionCostManagement"),
    "awsFeatureGates": ("nodeClassCEL", "draNVIDIAGPU", "draEFA", "rebootForRepair"),
}
