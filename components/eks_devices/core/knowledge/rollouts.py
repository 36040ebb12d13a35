"""Which in-place updates replace running nodes: what makes EKS roll a managed node group and what
Karpenter (and EKS Auto Mode, built on it) treats as drift, per resource type the toolkit creates.

Such an update keeps every resource's identity, so the replacement table (`replacement.py`) does not
see it, yet every node of the pool is drained and replaced. `eks-devices diff` uses this table to
say which pools' nodes roll.

Sources (read at these revisions; paths are in each repository):
- hashicorp/terraform-provider-aws internal/service/ec2/ec2_launch_template.go,
  `resourceLaunchTemplateUpdate`: a change to any launch template data (`updateKeys`, which include
  `tag_specifications` and `block_device_mappings`) creates a new version; `tags` (the template's
  own tags), `name` and the default-version settings do not.
- hashicorp/terraform-provider-aws internal/service/eks/node_group.go (commit 012e0a32), `resourceNodeGroupUpdate`:
  a change of `launch_template`, `release_version` or `version` calls UpdateNodegroupVersion, which
  replaces the group's nodes in a rolling update; labels, taints, tags and scaling are updated in
  place without new nodes.
- aws/karpenter-provider-aws v1.14.0-68-g1d927085d pkg/apis/v1/ec2nodeclass.go:41-123 and
  `Hash` at :541: the EC2NodeClass drift hash covers the whole spec except the selector terms and
  `ipPrefixCount` (`hash:"ignore"`; selector terms drift only when what they resolve to changes);
  website/content/en/docs/concepts/disruption.md "Drift": a NodeClaim whose NodePool template or
  EC2NodeClass changes is drifted and replaced within the NodePool's disruption budgets.
- pulumi/pulumi-terraform-bridge pkg/tfbridge/schema.go, `nameRequiresDeleteBeforeReplace`: when
  the program gives an auto-nameable property (pulumi-aws autonames a node group's
  `nodeGroupName`) and does not change it, the replacement deletes the old resource first, since
  the new one cannot share its name.
"""

from __future__ import annotations

from dataclasses import dataclass

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASSES = ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:eks.amazonaws.com/v1:NodeClass")

TF_LAUNCH_TEMPLATE = ("hashicorp/terraform-provider-aws internal/service/ec2/ec2_launch_template.go "
                      "(resourceLaunchTemplateUpdate: new launch template data is a new version)")
TF_NODE_GROUP = ("hashicorp/terraform-provider-aws internal/service/eks/node_group.go (commit 012e0a32) "
                 "(resourceNodeGroupUpdate: UpdateNodegroupVersion rolls the nodes)")
BRIDGE_FIXED_NAME = "pulumi/pulumi-terraform-bridge pkg/tfbridge/schema.go (nameRequiresDeleteBeforeReplace)"
# the auto-nameable property per type whose given, unchanged value makes a replacement delete first
FIXED_NAMES = {NODE_GROUP: "nodeGroupName"}
KARPENTER_DRIFT = ("aws/karpenter-provider-aws v1.14.0-68-g1d927085d pkg/apis/v1/ec2nodeclass.go "
                   "(EC2NodeClass.Hash) and website/content/en/docs/concepts/disruption.md (Drift)")


@dataclass(frozen=True)
class Rollout:
    """Which changed input paths of one resource type replace nodes while the resource is updated."""

    rolls: tuple[str, ...]  # a change here (or beneath) rolls nodes; () = anything not in `except_`
    except_: tuple[str, ...]  # a change only here rolls nothing
    source: str


TABLE: dict[str, Rollout] = {
    LAUNCH_TEMPLATE: Rollout((), ("tags", "name", "namePrefix", "defaultVersion", "updateDefaultVersion"),
                             TF_LAUNCH_TEMPLATE),
    NODE_GROUP: Rollout(("launchTemplate", "releaseVersion", "version"), (), TF_NODE_GROUP),
    NODE_POOL: Rollout(("spec.template",), (), KARPENTER_DRIFT),
    **{kind: Rollout(("spec",), ("spec.subnetSelectorTerms", "spec.securityGroupSelectorTerms",
                                 "spec.capacityReservationSelectorTerms", "spec.amiSelectorTerms",
                                 "spec.ipPrefixCount"), KARPENTER_DRIFT) for kind in NODE_CLASSES},
}


def _beneath(path: str, prefix: str) -> bool:
    """Whether property path `path` is `prefix` or lies under it (`a.b`, `a["x"]`, `a[0]`)."""
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def rolling_paths(type_: str, changed: list[str]) -> list[str]:
    """The changed paths of a `type_` resource that replace nodes when it is updated in place."""
    entry = TABLE.get(type_)
    if entry is None:
        return []
    return [p for p in changed
            if not any(_beneath(p, e) for e in entry.except_)
            and (not entry.rolls or any(_beneath(p, r) for r in entry.rolls))]


def source(type_: str) -> str:
    return TABLE[type_].source
