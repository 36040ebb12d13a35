"""How a node pool's AMI is pinned, per mode, and what each choice rolls.

- Karpenter selects EKS-optimized AMIs by an `amiSelectorTerms` alias `family@version`; `@latest`
  follows every AMI release, so each one drifts every node built from it; a fixed version stays put
  until the control plane's minor changes, when Karpenter drifts the nodes onto that version's AMI
  for the new minor (aws/karpenter-provider-aws v1.14.0-68-g1d927085d
  website/content/en/docs/concepts/nodeclasses.md "spec.amiSelectorTerms" (alias formats
  `al2023@v20240703`, `bottlerocket@v1.20.4`), website/content/en/docs/tasks/managing-amis.md
  "Pinning AMIs" (production should pin; a version alias follows the control plane's minor), and
  pkg/cloudprovider/drift.go `isAMIDrifted` (a node whose image is no longer what the terms resolve
  to is drifted: AMIDrift)).
- An EKS managed node group runs the release it was created with until `releaseVersion` (or its
  `version`) changes, which rolls its nodes (hashicorp/terraform-provider-aws
  internal/service/eks/node_group.go commit 012e0a32, `resourceNodeGroupUpdate`); AL2023 releases
  are `<kubernetes>.<patch>-<date>` (`1.33.5-20251117`), Bottlerocket ones `<os>-<commit>`
  (`1.49.0-713f44ce`) (EKS API Reference, `Nodegroup.releaseVersion`; awslabs/amazon-eks-ami
  CHANGELOG.md release headings).
- EKS Auto Mode picks its own AMIs and, after a control-plane upgrade, replaces every node with one
  of the new version, observing pod disruption budgets (EKS User Guide, "Update the Kubernetes
  Version of an EKS Auto Mode cluster", auto-upgrade.html); nothing here pins it.
"""

from __future__ import annotations

import re

from eks_devices.core.vocabulary import AmiFamily, Mode

LATEST = "latest"

# the version part of a Karpenter alias, per AMI family
KARPENTER_ALIAS_VERSIONS: dict[AmiFamily, tuple[re.Pattern[str], str]] = {
    "al2023": (re.compile(r"v20[0-9]{6}"), "an AL2023 release such as v20251117"),
    "bottlerocket": (re.compile(r"v[0-9]+\.[0-9]+\.[0-9]+"), "a Bottlerocket release such as v1.49.0"),
}
# a managed node group's `releaseVersion`, per AMI family
NODE_GROUP_RELEASES: dict[AmiFamily, tuple[re.Pattern[str], str]] = {
    "al2023": (re.compile(r"([0-9]+)\.([0-9]+)\.[0-9]+-20[0-9]{6}"),
               "an EKS AL2023 release such as 1.36.0-20251117"),
    "bottlerocket": (re.compile(r"[0-9]+\.[0-9]+\.[0-9]+-[0-9a-f]{8}"),
                     "a Bottlerocket release such as 1.49.0-713f44ce"),
}

AUTO_MODE_ROLL = ("EKS Auto Mode replaces every node after a control-plane upgrade (EKS User Guide, \"Update the "
                  "Kubernetes Version of an EKS Auto Mode cluster\")")
KARPENTER_VERSION_ROLL = ("Karpenter resolves alias AMIs per control-plane minor, so every node drifts onto the "
                          "new minor's AMI (karpenter-provider-aws website/content/en/docs/tasks/managing-amis.md "
                          "\"Pinning AMIs\"; pkg/cloudprovider/drift.go isAMIDrifted)")
KARPENTER_ALIAS_ROLL = ("the alias resolves to another AMI, so every node drifts (karpenter-provider-aws "
                        "pkg/cloudprovider/drift.go isAMIDrifted: AMIDrift)")
KARPENTER_LATEST_DRIFT = ("every AMI release AWS publishes drifts and replaces this pool's nodes with no change to "
                          "the stack (karpenter-provider-aws website/content/en/docs/tasks/managing-amis.md)")


def alias(family: AmiFamily, version: str) -> str:
    """The `amiSelectorTerms` alias Karpenter selects the pool's AMI by."""
    return f"{family}@{version}"


def problem(mode: Mode, family: AmiFamily, version: str, kubernetes: tuple[int, int]) -> str | None:
    """What an `amiVersion` must be in `mode` for `family` when it is not acceptable, else None."""
    if version == LATEST:
        return None
    if mode == "auto-mode":
        return "no amiVersion in auto-mode (Auto Mode chooses and upgrades its own AMIs)"
    if mode == "karpenter":
        pattern, example = KARPENTER_ALIAS_VERSIONS[family]
        return None if pattern.fullmatch(version) else f"'latest' or {example} (the version of a Karpenter alias)"
    pattern, example = NODE_GROUP_RELEASES[family]
    match = pattern.fullmatch(version)
    if match is None:
        return f"'latest' or {example} (a node group releaseVersion)"
    if family == "al2023" and (int(match.group(1)), int(match.group(2))) != kubernetes:
        return f"a release for Kubernetes {kubernetes[0]}.{kubernetes[1]} (the cluster's version), such as " \
               f"{kubernetes[0]}.{kubernetes[1]}.0-20251117"
    return None
