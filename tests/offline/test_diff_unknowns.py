"""`offline.diff` on what a replacement does to the resources computed from it: in the preview `pulumi up`
shows, a replaced resource's outputs are unknown, so every input computed from them (the recording's
`propertyDependencies`) is unknown; a replace-forcing one replaces its resource, an unknown kubeconfig
its Kubernetes provider and everything the provider manages; and the dependents a delete-first
replacement replaces are deleted before it. The real engine judges the Kubernetes cases in
tests/e2e/test_pulumi_engine.py (`test_diff_predicts_the_engines_steps_when_a_replacement_makes_the_kubeconfig_unknown`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from eks_devices.core.knowledge import replacement
from eks_devices.offline import diff
from support import engine, stacks

KEY = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
CLUSTER = "eks:index:Cluster::platform-eks"

def _with_key(stack: str) -> tuple[list[diff.Change], dict[str, Any], engine.Recording]:
    """The shipped stack against itself with `cluster.kmsKeyArn` added (replace-forcing on the cluster)."""
    (before, old_plan), (after, new_plan) = (engine.run_and_plan(cfg, stack) for cfg in (
        stacks.shipped(stack), stacks.shipped(stack, overrides={"eks-devices:cluster": {"kmsKeyArn": KEY}})))
    changes = diff.compare(before, after)
    return changes, diff.device_story(old_plan, new_plan, changes, (before, after)), after


def _deleted_before_the_cluster(c: diff.Change) -> bool:
    return c.delete_before_replace and any(r.startswith(f"deleted before {CLUSTER} is") for r in c.reasons)


def test_a_replaced_auto_mode_cluster_replaces_its_provider_and_all_it_manages() -> None:
    """Adding `kmsKeyArn` on dev replaces the cluster. Its kubeconfig is unknown in preview, so the
    Kubernetes provider is replaced, and with it every NodePool, NodeClass, DeviceClass and claim; its
    security group id and name are unknown, so the tags on the group and the access entries (clusterName
    is replace-forcing) are replaced; the cluster's fixed name deletes it first, and the access entries
    before it. Every pool's nodes are replaced, and `--fail-on replace` stops it for the NodePools too."""
    changes, story, after = _with_key("dev")
    named = {c.name: c for c in changes}
    cluster = named["platform-eks"]
    assert cluster.action == "replace" and cluster.delete_before_replace
    assert any(r.startswith("name ml-dev is given and unchanged") for r in cluster.reasons)
    provider = named["platform-k8s"]
    assert (provider.action, provider.unknown) == ("replace", ["kubeconfig"])
    assert provider.reasons[0].startswith(f"kubeconfig: computed from the outputs of {CLUSTER}, which is replaced")
    managed = [r for r in after.resources if r.provider.rpartition("::")[0] == after.named("platform-k8s").urn]
    assert len(managed) >= 8
    for r in managed:
        assert named[r.name].action == "replace", r.name
        assert named[r.name].reasons[0].startswith("its provider platform-k8s is replaced"), r.name
    entries = [c for c in changes if c.type.startswith("aws:eks/access")]
    assert len(entries) == 4 and all(c.action == "replace" and c.unknown == ["clusterName"] for c in entries)
    assert all(_deleted_before_the_cluster(c) for c in entries)
    tags = [c for c in changes if c.type == "aws:ec2/tag:Tag"]
    assert len(tags) == 2 and all(c.action == "replace" and not c.delete_before_replace for c in tags)
    assert {s["pool"]: s["nodes"] for s in story["pools"]} == dict.fromkeys(
        ("gpu-dra", "gpu-plugin", "inference-neuron", "train-efa"), "replaced")
    losses = {c.type for c in diff.stateful_losses(changes)}
    assert {"eks:index:Cluster", "kubernetes:karpenter.sh/v1:NodePool",
            "kubernetes:resource.k8s.io/v1:ResourceClaim"} <= losses
    assert diff.summary(changes) == {"create": 0, "update": 1, "replace": 1 + 1 + len(managed) + 4 + 2, "delete": 2}


def test_a_replaced_cluster_deletes_its_node_groups_first() -> None:
    """On prod the node groups' clusterName is computed from pulumi-eks's aws.eks.Cluster (a resource
    reference), so the engine deletes them before it deletes the cluster it replaces delete-first (EKS
    refuses to delete a cluster with node groups attached): the Capacity Block pool releases its capacity
    first. The launch templates' network interfaces name the new cluster's security group: unknown, an
    update (a new version) rather than a replacement."""
    changes, story, _ = _with_key("prod")
    groups = [c for c in changes if c.type == "aws:eks/nodeGroup:NodeGroup"]
    assert len(groups) == 4 and all(c.action == "replace" and _deleted_before_the_cluster(c) for c in groups)
    assert all(c.unknown == ["clusterName"] for c in groups)
    addons = [c for c in changes if c.type in ("aws:eks/addon:Addon", "aws:eks/podIdentityAssociation:"
                                                                       "PodIdentityAssociation")]
    assert len(addons) == 3 and all(_deleted_before_the_cluster(c) for c in addons)
    templates = [c for c in changes if c.type == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert templates and all((c.action, c.unknown) == ("update", ["networkInterfaces"]) for c in templates)
    releases = [c for c in changes if c.type == "kubernetes:helm.sh/v3:Release"]
    assert len(releases) == 4 and all(c.action == "replace" for c in releases)
    pools = {s["pool"]: s for s in story["pools"]}
    assert {p: s["nodes"] for p, s in pools.items()} == dict.fromkeys(("inference", "p5-train", "trn-train"),
                                                                      "replaced")
    assert pools["p5-train"]["reservedCapacityReleasedFirst"] and pools["inference"]["oldNodesDeletedFirst"]
    assert story["reservedCapacityRolled"] == ["p5-train"]


def _queues(name: str, delete_first: bool = False) -> Callable[[], None]:
    """A queue named `name`, a policy whose (replace-forcing) queueUrl and a queue whose (in-place)
    retention are computed from it without carrying its id or ARN."""

    def program() -> None:
        a = aws.sqs.Queue("a", name=name, opts=pulumi.ResourceOptions(delete_before_replace=delete_first))
        aws.sqs.QueuePolicy("reads-a", queue_url=a.url.apply(lambda _: "https://sqs.example/1/fixed"), policy="{}")
        aws.sqs.Queue("b", message_retention_seconds=a.arn.apply(lambda _: 60))

    return program


@pytest.mark.parametrize("delete_first", [False, True], ids=["created-first", "deleted-first"])
def test_an_input_computed_from_a_replaced_resource_is_unknown(delete_first: bool) -> None:
    """The values do not change (they are computed from the outputs, not copies of an id), yet in preview
    they are unknown: the replace-forcing queueUrl replaces the policy, the retention updates the other
    queue. A delete-first replacement deletes the policy before it, not the queue it only updates."""
    before, after = (engine.run(_queues(n, delete_first), {}) for n in ("one", "two"))
    assert after.named("reads-a").property_dependencies == {"queueUrl": [after.named("a").urn]}
    changes = {c.name: c for c in diff.compare(before, after)}
    assert {n: c.action for n, c in changes.items()} == {"a": "replace", "reads-a": "replace", "b": "update"}
    policy, other = changes["reads-a"], changes["b"]
    assert (policy.changed, policy.unknown) == (["queueUrl"], ["queueUrl"])
    assert policy.reasons[0] == (f"queueUrl: computed from the outputs of aws:sqs/queue:Queue::a, which is replaced, "
                                 f"so unknown in the preview pulumi up shows ({replacement.UNKNOWN_IN_PREVIEW})")
    assert policy.reasons[1].startswith("queueUrl (unknown): replace-forcing property queueUrl (")
    assert replacement.UNKNOWN_FORCES_NEW in policy.reasons[1]
    assert (other.changed, other.unknown, other.reasons) == (["messageRetentionSeconds"], ["messageRetentionSeconds"], [])
    assert policy.delete_before_replace is delete_first and not other.delete_before_replace


def _anchored(anchor: str, delete_first: bool) -> Callable[[], None]:
    """A ConfigMap through a provider whose kubeconfig is computed from a namespace named `anchor`."""

    def program() -> None:
        base = k8s.Provider("base", kubeconfig="{}")
        ns = k8s.core.v1.Namespace("anchor", metadata={"name": anchor}, opts=pulumi.ResourceOptions(
            provider=base, delete_before_replace=delete_first))
        cluster = k8s.Provider("cluster", kubeconfig=ns.status.apply(lambda _: "{}"))
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings", "namespace": "default"}, data={"a": "b"},
                              opts=pulumi.ResourceOptions(provider=cluster))

    return program


@pytest.mark.parametrize("delete_first", [False, True], ids=["created-first", "deleted-first"])
def test_a_kubeconfig_computed_from_a_replaced_resource_replaces_the_provider(delete_first: bool) -> None:
    """The same kubeconfig text, but unknown in preview: pulumi-kubernetes' DiffConfig replaces the
    provider, and the engine every object it manages; behind a delete-first replacement they all go
    first (the engine's dependent replacements)."""
    before, after = (engine.run(_anchored(n, delete_first), {}) for n in ("one", "two"))
    changes = {c.name: c for c in diff.compare(before, after)}
    assert {n: (c.action, c.delete_before_replace) for n, c in changes.items()} == {
        n: ("replace", delete_first) for n in ("anchor", "cluster", "settings")}
    assert changes["cluster"].unknown == ["kubeconfig"]
    assert changes["settings"].reasons[0].startswith("its provider cluster is replaced")


def test_the_diff_view_says_what_is_unknown_and_what_goes_before_the_cluster() -> None:
    from rich.console import Console

    from eks_devices.cli.diff_view import print_diff

    changes, story, _ = _with_key("prod")
    console = Console(record=True, width=400)
    print_diff(console, "kmsKeyArn added", changes, story, diff.summary(changes))
    text = console.export_text()
    assert ("unknown in the preview pulumi up shows (computed from a resource being replaced): networkInterfaces"
            in text)
    assert f"clusterName: computed from the outputs of {CLUSTER}, which is replaced" in text
    assert f"deleted before {CLUSTER} is, whose replacement deletes it first" in text
    assert "p5-train: nodes replaced; reserved capacity released first" in text


def _cluster_alone(key: str) -> Callable[[], None]:
    """pulumi-eks's Cluster with a given name, and a Kubernetes provider on its kubeconfig: nothing reads its
    aws.eks.Cluster child."""

    def program() -> None:
        import pulumi_eks as eks

        cluster = eks.Cluster("c", name="fixed", encryption_config_key_arn=key, skip_default_node_group=True)
        k8s.Provider("k8s", kubeconfig=cluster.kubeconfig_json)

    return program


def test_a_cluster_deleted_first_takes_first_only_what_reads_its_child() -> None:
    """The engine deletes first the dependents of the component's aws.eks.Cluster (the resource it deletes
    first), not those of the component: a provider reading the component's kubeconfig is replaced, created
    first."""
    before, after = (engine.run(_cluster_alone(k), {"aws:region": "us-west-2"}) for k in (KEY, KEY.replace("1234a", "9")))
    changes = {c.name: c for c in diff.compare(before, after)}
    assert {n: (c.action, c.delete_before_replace) for n, c in changes.items()} == {
        "c": ("replace", True), "k8s": ("replace", False)}


def _two_clusters(key_a: str) -> Callable[[], None]:
    """Two pulumi-eks clusters side by side, an access entry on each, its clusterName read from the cluster's
    aws.eks.Cluster child."""

    def program() -> None:
        import pulumi_eks as eks

        for name, key in (("alpha", key_a), ("beta", KEY)):
            cluster = eks.Cluster(name, name=name, encryption_config_key_arn=key, skip_default_node_group=True)
            aws.eks.AccessEntry(f"{name}-entry", cluster_name=cluster.eks_cluster.name,
                                principal_arn="arn:aws:iam::123456789012:role/admin")

    return program


def test_a_replaced_cluster_reaches_what_reads_its_own_children_only() -> None:
    """The child a program reads is told apart from a sibling cluster's of the same type by its name."""
    before, after = (engine.run(_two_clusters(k), {"aws:region": "us-west-2"}) for k in (KEY, KEY.replace("1234a", "9")))
    changes = {c.name: (c.action, c.delete_before_replace) for c in diff.compare(before, after)}
    assert changes == {"alpha": ("replace", True), "alpha-entry": ("replace", True)}
