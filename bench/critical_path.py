"""Benchmark: how long the first `pulumi up` of each shipped stack waits, from its deploy graph.

For every shipped stack it runs `eks-devices preview <stack> --json` (the real program under the
mock engine) and reads each resource's `dependsOn` and `provider` — what the engine makes it wait
for. With a typical creation time per kind of resource (the table below) it prints the longest
chain of waits (the critical path) and its length against the minimum: the longest chain when
every resource waits only for what it truly needs (`NEEDS`). A ratio of 1.00 means no resource
on the critical path waits for something it does not need.

    .venv/bin/python bench/critical_path.py [STACK ...]
    .venv/bin/python bench/critical_path.py --from preview.json   # a saved `preview --json` (another revision)

The durations are what the chain is weighed with, not measurements of this run; the ratio depends
on which waits exist, and only weakly on the figures.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "components"))
from eks_devices.core.knowledge.charts import runs_deployment  # noqa: E402

# Typical creation time in minutes per kind of resource.
# - eks-cluster 15: the EKS control plane averages 15 minutes (aws/containers-roadmap#1227;
#   an unofficial measurement across 21 regions found 13-16 min, us-west-2 15:00).
# - node-group 4, nat 2, addon 1.5, release / karpenter-release 1 (a Deployment waits for its
#   replica), release-ds / crd-release 0.5 (DaemonSets or CRDs only): estimates from the AWS consoles' usual waits, not
#   published figures; every other kind is an API call of seconds (0.1).
DURATIONS = {"eks-cluster": 15.0, "node-group": 4.0, "nat": 2.0, "addon": 1.5, "release": 1.0,
             "karpenter-release": 1.0, "crd-release": 0.5, "release-ds": 0.5}
DEFAULT_DURATION = 0.1

# What each kind truly needs: a recorded wait on any other kind is one the resource could do without.
NEEDS: dict[str, set[str]] = {
    "subnet": {"vpc"}, "igw": {"vpc"}, "route-table": {"vpc"}, "sg": {"vpc"}, "sg-rule": {"sg"},
    "route": {"route-table", "nat", "igw"}, "rta": {"subnet", "route-table"}, "nat": {"subnet", "eip", "igw"},
    "role-attachment": {"role"}, "policy": {"role", "queue", "eks-cluster"}, "kms-alias": {"kms-key"},
    "log-group": {"kms-key"},
    "eks-cluster": {"subnet", "vpc", "sg", "role", "role-attachment", "kms-key", "log-group"},
    # the Kubernetes provider talks to the cluster as the deployer, whose access entry and policy must exist
    "eks-part": {"eks-cluster"}, "k8s-provider": {"eks-cluster", "access-entry", "access-policy"},
    "tag": {"eks-cluster", "subnet", "sg"},
    "access-entry": {"eks-cluster", "role"}, "access-policy": {"eks-cluster", "role", "access-entry"},
    "pod-identity": {"eks-cluster", "role", "addon"}, "event-target": {"queue", "event-rule"},
    "queue-policy": {"queue"},
    # CoreDNS runs on nodes; a node group needs its cluster, role, template and subnets with their routes,
    # and aws-node's Pod Identity association (its own role, docs/security.md), without which a node's
    # network plugin starts with no credentials
    "addon": {"eks-cluster", "node-group"},
    "launch-template": {"sg", "placement-group", "eks-cluster"},
    "node-group": {"eks-cluster", "role", "role-attachment", "launch-template", "subnet", "route", "rta",
                   "placement-group", "pod-identity"},
    "crd-release": {"k8s-provider", "eks-cluster"},
    # the controller runs on the system nodes, resolves AWS endpoints through CoreDNS, and takes its
    # credentials from Pod Identity and its queue from SQS
    "karpenter-release": {"crd-release", "node-group", "addon", "pod-identity", "access-entry", "queue",
                          "role", "role-attachment", "policy", "eks-cluster", "k8s-provider"},
    "release-ds": {"namespace", "k8s-provider", "eks-cluster"},
    "release": {"namespace", "k8s-provider", "eks-cluster", "node-group"},
    "namespace": {"k8s-provider"}, "device-class": {"k8s-provider"},
    "claim": {"namespace", "device-class", "k8s-provider"},
    "custom-claim": {"namespace", "release", "release-ds", "k8s-provider"},
    # Karpenter's NodePools and EC2NodeClasses need the controller too, on the way out: its finalizers on
    # EC2NodeClasses and NodeClaims hold their deletion until it has terminated the nodes
    "node-class": {"crd-release", "karpenter-release", "eks-cluster", "role", "role-attachment", "access-entry",
                   "access-policy", "sg", "subnet", "placement-group", "k8s-provider"},
    "node-pool": {"node-class", "crd-release", "karpenter-release", "eks-cluster", "role", "role-attachment",
                  "access-entry", "access-policy", "k8s-provider"},
}

KINDS = {
    "aws:ec2/vpc:Vpc": "vpc", "aws:ec2/subnet:Subnet": "subnet", "aws:ec2/internetGateway:InternetGateway": "igw",
    "aws:ec2/routeTable:RouteTable": "route-table", "aws:ec2/route:Route": "route",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "rta", "aws:ec2/eip:Eip": "eip",
    "aws:ec2/natGateway:NatGateway": "nat", "aws:ec2/securityGroup:SecurityGroup": "sg",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sg-rule",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sg-rule", "aws:iam/role:Role": "role",
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "role-attachment", "aws:iam/policy:Policy": "policy",
    "aws:kms/key:Key": "kms-key", "aws:kms/alias:Alias": "kms-alias", "aws:cloudwatch/logGroup:LogGroup": "log-group",
    "eks:index:Cluster": "eks-cluster", "aws:eks/cluster:Cluster": "eks-part",
    "pulumi:providers:kubernetes": "k8s-provider", "aws:ec2/tag:Tag": "tag",
    "aws:eks/accessEntry:AccessEntry": "access-entry",
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": "access-policy",
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": "pod-identity", "aws:eks/addon:Addon": "addon",
    "aws:sqs/queue:Queue": "queue", "aws:sqs/queuePolicy:QueuePolicy": "queue-policy",
    "aws:cloudwatch/eventRule:EventRule": "event-rule", "aws:cloudwatch/eventTarget:EventTarget": "event-target",
    "aws:ec2/launchTemplate:LaunchTemplate": "launch-template", "aws:ec2/placementGroup:PlacementGroup":
    "placement-group", "aws:eks/nodeGroup:NodeGroup": "node-group", "kubernetes:core/v1:Namespace": "namespace",
    "kubernetes:resource.k8s.io/v1:DeviceClass": "device-class",
    "kubernetes:resource.k8s.io/v1:ResourceClaim": "claim",
    "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate": "claim",
}


def kind(resource: dict[str, Any]) -> str:
    """The resource's kind in NEEDS/DURATIONS terms."""
    type_ = resource["type"]
    if type_ == "kubernetes:helm.sh/v3:Release":
        name = resource["inputs"].get("name", "")
        if name in ("karpenter-crd", "karpenter"):
            return "crd-release" if name == "karpenter-crd" else "karpenter-release"
        return "release" if runs_deployment(name, resource["inputs"].get("values") or {}) else "release-ds"
    if type_.startswith("kubernetes:"):
        object_kind = type_.rsplit(":", 1)[-1]
        if object_kind.endswith("NodeClass"):
            return "node-class"
        if object_kind == "NodePool":
            return "node-pool"
        return KINDS.get(type_, "custom-claim")
    return KINDS.get(type_, type_)


class Graph:
    """The recorded deploy graph: waits per resource (explicit and through inputs, plus the
    provider; a wait on a local component is a wait on everything under it)."""

    def __init__(self, resources: list[dict[str, Any]]) -> None:
        self.by_urn = {r["urn"]: r for r in resources}
        self.children: dict[str, list[str]] = {}
        for r in resources:
            if r.get("parent"):
                self.children.setdefault(r["parent"], []).append(r["urn"])

    def leaves(self, urn: str) -> list[str]:
        """A local component stands for the resources under it; anything else for itself."""
        r = self.by_urn.get(urn)
        if r is None:
            return []
        if r["component"] and not r["remote"]:
            return [leaf for child in self.children.get(urn, []) for leaf in self.leaves(child)]
        return [urn]

    def waits(self, urn: str, needed_only: bool) -> set[str]:
        r = self.by_urn[urn]
        direct = list(r["dependsOn"]) + ([r["provider"]] if r.get("provider") else [])
        parent = self.by_urn.get(r.get("parent") or "")
        if parent is not None and parent["remote"]:
            direct.append(parent["urn"])  # what a remote component returns exists once it is done
        found = {leaf for d in direct for leaf in self.leaves(d) if leaf != urn}
        if needed_only:
            found = {d for d in found if kind(self.by_urn[d]) in NEEDS.get(kind(r), set())}
        return found

    def critical_path(self, needed_only: bool) -> tuple[float, list[str]]:
        """The longest chain of waits, weighed with DURATIONS: its length and its resources in order."""

        @functools.cache
        def finish(urn: str) -> tuple[float, tuple[str, ...]]:
            before = max((finish(d) for d in self.waits(urn, needed_only)), default=(0.0, ()))
            return before[0] + duration(self.by_urn[urn]), (*before[1], urn)

        ends = [finish(u) for u, r in self.by_urn.items() if not (r["component"] and not r["remote"])]
        length, chain = max(ends, default=(0.0, ()))
        return length, list(chain)


def duration(resource: dict[str, Any]) -> float:
    return DURATIONS.get(kind(resource), DEFAULT_DURATION) if not resource["component"] or resource["remote"] else 0.0


def preview(stack: str) -> dict[str, Any]:
    cli = Path(sys.executable).parent / "eks-devices"
    done = subprocess.run([str(cli), "preview", stack, "--json"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"preview {stack} failed ({done.returncode}): {done.stderr[-500:]}")
    return json.loads(done.stdout)


def report(stack: str, recorded: dict[str, Any] | None = None) -> float:
    graph = Graph((recorded or preview(stack))["resources"])
    actual, chain = graph.critical_path(needed_only=False)
    minimum, _ = graph.critical_path(needed_only=True)
    print(f"{stack}: critical path {actual:.1f} min, minimum {minimum:.1f} min, ratio {actual / minimum:.2f}")
    for urn in chain:
        r = graph.by_urn[urn]
        if duration(r) >= 0.5:
            print(f"  {duration(r):5.1f}  {r['name']} ({kind(r)})")
    return actual / minimum


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stacks", nargs="*", default=["dev", "staging", "prod"])
    parser.add_argument("--from", dest="saved", type=Path, help="read this `preview --json` instead of running one")
    args = parser.parse_args()
    if args.saved:
        recorded = json.loads(args.saved.read_text())
        report(recorded["stack"], recorded)
        return
    for stack in args.stacks:
        report(stack)


if __name__ == "__main__":
    main()
