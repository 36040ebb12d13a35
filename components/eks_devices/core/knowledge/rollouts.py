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
  place without new nodes, by an UpdateNodegroupConfig that runs after the version update ("Do any
  version update first"), so an upgrade meets the group at its old size.
- aws/karpenter-provider-aws v1.14.0-68-g1d927085d pkg/apis/v1/ec2nodeclass.go:41-123 and
  `Hash` at :541: the EC2NodeClass drift hash covers the whole spec except the selector terms and
  `ipPrefixCount` (`hash:"ignore"`; selector terms drift only when what they resolve to changes:
  pkg/cloudprovider/drift.go `isAMIDrifted`, so a new alias version, which resolves to another AMI,
  drifts every node);
  website/content/en/docs/concepts/disruption.md "Drift": a NodeClaim whose NodePool template or
  EC2NodeClass changes is drifted and replaced within the NodePool's disruption budgets.
- EKS User Guide, "Create a managed node group with Capacity Blocks for ML" (capacity-blocks-mng),
  Considerations: a node group on a Capacity Block is upgraded only at desired size 0. An upgrade is
  an UpdateNodegroupVersion, which every node-group rolling path above calls (a new Kubernetes
  version, release version, or launch template version: a tag or a reservation id in the template).
- EKS User Guide, "Update existing cluster to new Kubernetes version" (update-cluster): the control
  plane moves one minor version at a time, and never back (EKS API UpdateClusterVersion refuses it).
- kubernetes-sigs/karpenter v1.14.0-20-g226646810 pkg/apis/v1/nodepool.go:235 (NodeClaimTemplateSpec
  `Requirements ... hash:"ignore"`: requirements are outside the NodePool drift hash) and
  pkg/controllers/nodeclaim/disruption/drift.go `areRequirementsDrifted`: a node drifts only when its
  labels no longer satisfy the NodePool's requirements. Adding a value drifts nothing; removing one
  drifts the nodes that carry it; a new key drifts the nodes whose label for it is not accepted.
- pulumi/pulumi-terraform-bridge pkg/tfbridge/schema.go, `nameRequiresDeleteBeforeReplace`: when
  the program gives an auto-nameable property (pulumi-aws autonames a node group's
  `nodeGroupName`) and does not change it, the replacement deletes the old resource first, since
  the new one cannot share its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eks_devices.core.knowledge import amis

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASSES = ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:eks.amazonaws.com/v1:NodeClass")

TF_LAUNCH_TEMPLATE = ("hashicorp/terraform-provider-aws internal/service/ec2/ec2_launch_template.go "
                      "(resourceLaunchTemplateUpdate: new launch template data is a new version)")
TF_NODE_GROUP = ("hashicorp/terraform-provider-aws internal/service/eks/node_group.go (commit 012e0a32) "
                 "(resourceNodeGroupUpdate: UpdateNodegroupVersion rolls the nodes)")
BRIDGE_FIXED_NAME = "pulumi/pulumi-terraform-bridge pkg/tfbridge/schema.go (nameRequiresDeleteBeforeReplace)"
EKS_CLUSTER = "eks:index:Cluster"
EKS_CLUSTER_CHILD = "aws:eks/cluster:Cluster"
# the auto-nameable property per type whose given, unchanged value makes a replacement delete first. pulumi-eks's
# Cluster passes its `name` to the aws.eks.Cluster it creates (pulumi/pulumi-eks v4.3.0 nodejs/eks/cluster/cluster.ts
# :687-764), whose `name` pulumi-aws auto-names (pulumi/pulumi-terraform-bridge `ProviderInfo.SetAutonaming`: every
# resource's string input `name`), so that child is replaced delete-first
FIXED_NAMES = {NODE_GROUP: "nodeGroupName", EKS_CLUSTER: "name"}
# a remote component's child that carries its fixed name: the resource the engine deletes first when it is replaced
FIXED_NAME_CHILD = {EKS_CLUSTER: EKS_CLUSTER_CHILD}
PULUMI_EKS_NAME = ("pulumi/pulumi-eks v4.3.0 nodejs/eks/cluster/cluster.ts:687-764 (the cluster's `name` is its "
                   "aws.eks.Cluster's, auto-nameable: pulumi/pulumi-terraform-bridge ProviderInfo.SetAutonaming)")
REQUIREMENTS = "spec.template.spec.requirements"  # outside the drift hash: `requirement_drift` says what drifts
KARPENTER_REQUIREMENTS = ("kubernetes-sigs/karpenter v1.14.0-20-g226646810 pkg/apis/v1/nodepool.go:235 (requirements "
                          "hash:\"ignore\") and pkg/controllers/nodeclaim/disruption/drift.go (areRequirementsDrifted)")
KARPENTER_DRIFT = ("aws/karpenter-provider-aws v1.14.0-68-g1d927085d pkg/apis/v1/ec2nodeclass.go "
                   "(EC2NodeClass.Hash) and website/content/en/docs/concepts/disruption.md (Drift)")
AMI_TERMS = "spec.amiSelectorTerms"
KARPENTER_AMI_DRIFT = ("aws/karpenter-provider-aws v1.14.0-68-g1d927085d pkg/cloudprovider/drift.go (isAMIDrifted: "
                       "a node drifts when the AMIs its class's selector terms resolve to no longer include its own)")


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
    NODE_POOL: Rollout(("spec.template",), (REQUIREMENTS,), KARPENTER_DRIFT),
    **{kind: Rollout(("spec",), ("spec.subnetSelectorTerms", "spec.securityGroupSelectorTerms",
                                 "spec.capacityReservationSelectorTerms", "spec.ipPrefixCount"),
                      KARPENTER_DRIFT) for kind in NODE_CLASSES},
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


def _requirements(value: object) -> dict[str, tuple[str, frozenset[str]]]:
    """key → (operator, values) of a NodePool's requirements list."""
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = (str(item.get("operator")), frozenset(str(v) for v in item.get("values") or ()))
    return out


def requirement_drift(before: object, after: object) -> list[str]:
    """Which running nodes a change of NodePool requirements drifts, one phrase per key (none: no node).
    Only nodes whose labels the new requirements refuse drift (`KARPENTER_REQUIREMENTS`)."""
    old, new = _requirements(before), _requirements(after)
    out = []
    for key, (operator, values) in sorted(new.items()):
        was = old.get(key)
        if was == (operator, values):
            continue
        if was is None:
            out.append(f"nodes whose {key} is not {operator} {', '.join(sorted(values))}")
        elif operator == was[0] == "In":
            if removed := sorted(was[1] - values):
                out.append(f"nodes with {key} {', '.join(removed)}")
        elif operator == was[0] == "NotIn":
            if added := sorted(values - was[1]):
                out.append(f"nodes with {key} {', '.join(added)}")
        else:
            out.append(f"nodes whose {key} is not {operator} {', '.join(sorted(values))}")
    return out


def source(type_: str) -> str:
    return TABLE[type_].source


# --- updates the API refuses, or that stall half-way -------------------------------------------------

VERSION_BEFORE_SCALING = ("hashicorp/terraform-provider-aws internal/service/eks/node_group.go (commit 012e0a32) "
                          "(resourceNodeGroupUpdate: UpdateNodegroupVersion runs before UpdateNodegroupConfig, which "
                          "applies the new scaling)")
CAPACITY_BLOCK_AT_ZERO = ("EKS User Guide, \"Create a managed node group with Capacity Blocks for ML\": a Capacity "
                          "Block node group is upgraded only at desired size 0")
ONE_MINOR_AT_A_TIME = ("EKS User Guide, \"Update existing cluster to new Kubernetes version\": one minor version "
                       "at a time, never back")


def capacity_block_stalls(changed: list[str], desired_size: int) -> list[str]:
    """The changed node group paths that upgrade (UpdateNodegroupVersion) a Capacity Block group that
    still wants nodes: EKS refuses them until its desired size is 0 (`CAPACITY_BLOCK_AT_ZERO`).
    `desired_size` is the group's size before the update: the upgrade runs first (`VERSION_BEFORE_SCALING`)."""
    return [] if desired_size == 0 else rolling_paths(NODE_GROUP, changed)


def version_step_problem(before: tuple[int, int], after: tuple[int, int]) -> str | None:
    """Why EKS refuses moving a control plane from `before` to `after` (a skipped minor, a downgrade)."""
    if after == before or (after[0] == before[0] and after[1] == before[1] + 1):
        return None
    what = "a downgrade" if after < before else f"{after[1] - before[1] - 1} skipped minor version(s)"
    return (f"Kubernetes {before[0]}.{before[1]} → {after[0]}.{after[1]} is {what}: EKS refuses it "
            f"({ONE_MINOR_AT_A_TIME}); step through each minor, one pulumi up each")


def pinned_from_latest(paths: list[str], old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """The alias a node class is pinned to when its only rolling change moves its AMI selector from one
    family's `@latest` to a release of that family: its nodes drift only if that is not the release they
    run (`KARPENTER_AMI_DRIFT`), which no stack file says."""
    def aliases(inputs: dict[str, Any]) -> list[str]:
        terms = (inputs.get("spec") or {}).get("amiSelectorTerms") or []
        return [str(t.get("alias")) for t in terms if isinstance(t, dict) and t.get("alias")]

    was, now = aliases(old), aliases(new)
    if not paths or not all(_beneath(p, AMI_TERMS) for p in paths) or len(was) != 1 or len(now) != 1:
        return None
    family, _, version = was[0].partition("@")
    if version != amis.LATEST or not now[0].startswith(f"{family}@") or now[0] == was[0]:
        return None
    return now[0]
