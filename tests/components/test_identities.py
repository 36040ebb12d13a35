"""Stable identities under the mock engine: what keeps its URN (or is aliased to the old one) when
a deployed stack changes — the cluster renamed, zones reordered or added, a pool renamed with
`renamedFrom` — and a changed claim replacing its object instead of failing the deploy. Each is
checked for a node-group stack and a Kubernetes-pool stack (or, for zones, a zone count and a
zone list)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from eks_devices.claims import ClaimTemplates, ClaimTemplatesArgs
from eks_devices.cluster import KMS_KEY_FIXED
from eks_devices.core.config.stack import ConfigError, parse
from eks_devices.identity import moved, renamed
from eks_devices.network import Network, NetworkArgs
from eks_devices.offline import diff
from eks_devices.program import plan_for_stack
from support import engine, stacks

SUBNET = "aws:ec2/subnet:Subnet"
STATEFUL = ("aws:ec2/vpc:Vpc", SUBNET, "aws:kms/key:Key", "aws:cloudwatch/logGroup:LogGroup")
CAPACITY_BLOCK = {"replicas": 2, "instanceTypes": ["p5.48xlarge"], "capacity": "capacity-block",
                  "capacityReservationIds": ["cr-0f1e2d3c4b5a69788"], "availabilityZone": "us-west-2b",
                  "placementGroup": False, "efa": {"alignWith": "gpu"}}
EFA_POOL = {"instanceTypes": ["p5.48xlarge"], "availabilityZone": "us-west-2a", "efa": {"alignWith": "gpu"}}
# a node-group stack whose pool holds a Capacity Block, and a Karpenter stack whose pool has its
# own placement group and EC2NodeClass: every kind of resource named after a pool
POOLS = {"managed-node-groups": ("train", CAPACITY_BLOCK), "karpenter": ("train", EFA_POOL)}
NODES = {"managed-node-groups": "aws:eks/nodeGroup:NodeGroup", "karpenter": "kubernetes:karpenter.sh/v1:NodePool"}


def stack(mode: str, name: str = "ml", pool: str | None = None, **changes: Any) -> dict[str, Any]:
    default, settings = POOLS[mode]
    return stacks.config(mode, pools={pool or default: {**settings, **changes}}, name=name)


def reachable(rec: engine.Recording) -> dict[str, engine.Registered]:
    """Every URN the engine would match a resource of `rec` by: its own and its aliases (each once)."""
    out: dict[str, engine.Registered] = {}
    for r in rec.resources:
        for urn in (r.urn, *r.aliases):
            assert urn not in out, f"{urn} is claimed by {out[urn].name} and {r.name}"
            out[urn] = r
    return out


def carried_over(before: engine.Recording, after: engine.Recording) -> dict[str, engine.Registered]:
    """Each resource of `before` by its URN → the resource of `after` that takes its state; an
    AssertionError names any that `after` would create anew or delete."""
    by_urn = reachable(after)
    lost = [r.urn for r in before.resources if r.urn not in by_urn]
    assert not lost, f"would be deleted and created again: {lost}"
    matched = {r.urn: by_urn[r.urn] for r in before.resources}
    assert len({m.urn for m in matched.values()}) == len(before.resources) == len(after.resources)
    return matched


@pytest.fixture(scope="module", params=sorted(POOLS))
def deployed(request: pytest.FixtureRequest) -> tuple[str, engine.Recording]:
    return request.param, engine.main(stack(request.param), stack="id")


# --- the cluster renamed ----------------------------------------------------------------------------

def test_renaming_the_cluster_keeps_every_identity(deployed: tuple[str, engine.Recording]) -> None:
    """Logical names do not follow the cluster's: the VPC, subnets, KMS key and log group (and
    everything else) keep their URNs; what must follow the EKS cluster's immutable name changes
    in its inputs only (the cluster, the log group's name, the key alias)."""
    mode, before = deployed
    after = engine.main(stack(mode, name="ml-renamed"), stack="id")
    assert sorted(r.urn for r in after.resources) == sorted(r.urn for r in before.resources)
    for type_ in STATEFUL:
        assert engine.of_type(before, type_), type_
        assert sorted(r.urn for r in after.of_type(type_)) == sorted(r.urn for r in before.of_type(type_))
    subnets = {r.urn: (r.inputs["cidrBlock"], r.inputs["availabilityZone"]) for r in after.of_type(SUBNET)}
    assert subnets == {r.urn: (r.inputs["cidrBlock"], r.inputs["availabilityZone"]) for r in before.of_type(SUBNET)}
    assert engine.one(after.of_type("aws:cloudwatch/logGroup:LogGroup")).inputs["name"] == "/aws/eks/ml-renamed/cluster"
    assert engine.one(after.of_type("eks:index:Cluster")).inputs["name"] == "ml-renamed"


# --- a pool renamed with renamedFrom ----------------------------------------------------------------

def test_a_pool_renamed_with_renamed_from_keeps_its_resources(deployed: tuple[str, engine.Recording]) -> None:
    """Every resource named after the pool is aliased to its old URN and keeps its physical name
    (node group name, NodePool and EC2NodeClass names), so nothing is replaced: a capacity-block
    node group keeps its reservation instead of waiting for capacity the old group holds."""
    mode, before = deployed
    after = engine.main(stack(mode, pool="pretrain", renamedFrom="train"), stack="id")
    matched = carried_over(before, after)
    renamed_ones = [m for urn, m in matched.items() if m.urn != urn]
    assert {m.type for m in renamed_ones} >= {NODES[mode], "aws:ec2/placementGroup:PlacementGroup"
                                              if mode == "karpenter" else "aws:ec2/launchTemplate:LaunchTemplate"}
    old_node = engine.one(n for n in before.of_type(NODES[mode]) if n.name.endswith("-train"))
    new_node = matched[old_node.urn]
    assert new_node.name.endswith("-pretrain") and old_node.name.endswith("-train")
    if mode == "managed-node-groups":
        assert new_node.inputs["nodeGroupName"] == old_node.inputs["nodeGroupName"]
        assert new_node.delete_before_replace  # a capacity-block group would still go first if replaced
    else:
        assert new_node.inputs["metadata"]["name"] == old_node.inputs["metadata"]["name"]
        old_class, = before.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
        assert matched[old_class.urn].inputs["metadata"]["name"] == old_class.inputs["metadata"]["name"]


def test_without_renamed_from_a_pool_rename_is_delete_and_create(deployed: tuple[str, engine.Recording]) -> None:
    """What renamedFrom prevents, in both modes: every resource named after the pool gets a new
    URN and a new physical name, so `diff` reports the old node object (stateful: its running
    nodes) deleted and a new one created, never the same one kept; a new capacity-block group
    would wait for the capacity the old one still holds."""
    mode, before = deployed
    after = engine.main(stack(mode, pool="pretrain"), stack="id")
    old_node = engine.one(n for n in before.of_type(NODES[mode]) if n.name.endswith("-train"))
    new_node = engine.one(n for n in after.of_type(NODES[mode]) if n.name.endswith("-pretrain"))
    assert old_node.urn not in reachable(after)
    name = "nodeGroupName" if mode == "managed-node-groups" else "metadata"
    assert new_node.inputs[name] != old_node.inputs[name]  # a new physical name: no collision with the old
    changes = {(c.type, c.name): c for c in diff.compare(before, after)}
    deleted, created = changes[(NODES[mode], old_node.name)], changes[(NODES[mode], new_node.name)]
    assert (deleted.action, deleted.stateful, created.action) == ("delete", True, "create")
    pool_resources = {c.type for c in changes.values() if c.action == "delete"}
    assert pool_resources >= ({"aws:ec2/launchTemplate:LaunchTemplate"} if mode == "managed-node-groups" else
                              {"kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "aws:ec2/placementGroup:PlacementGroup"})
    assert all(c.action in ("create", "delete", "update") for c in changes.values())


@pytest.mark.parametrize(("pools", "path", "given", "accepted"), [
    ({"a": {"renamedFrom": "b"}, "b": {}}, "nodePools.a.renamedFrom", "'b'", "no longer a pool"),
    ({"a": {"renamedFrom": "x"}, "c": {"renamedFrom": "x"}}, "nodePools.c.renamedFrom", "'x'", "only one pool"),
    ({"a": {"renamedFrom": "a"}}, "nodePools.a.renamedFrom", "'a'", "previous name"),
    ({"a": {"renamedFrom": "Not_A_Pool"}}, "nodePools.a.renamedFrom", "'Not_A_Pool'", "previous name"),
    ({"a": {"renamedFrom": "b"}, "b": {"renamedFrom": "c"}}, "nodePools.a.renamedFrom", "'b'", "no longer a pool"),
], ids=["still-a-pool", "twice", "itself", "not-a-pool-name", "chain"])
def test_renamed_from_names_a_previous_pool_once(pools: dict[str, Any], path: str, given: str, accepted: str) -> None:
    config = stacks.config("karpenter", pools={n: {"instanceTypes": ["g6e.xlarge"], **p} for n, p in pools.items()})
    with pytest.raises(ConfigError) as caught:
        parse(config)
    (problem,) = caught.value.problems
    assert (problem.path, problem.given) == (path, given) and accepted in problem.accepted


def test_a_valid_renamed_from_parses() -> None:
    config = stacks.config("karpenter", pools={"b": {"instanceTypes": ["g6e.xlarge"], "renamedFrom": "a"}})
    assert parse(config).node_pools["b"].renamed_from == "a"


# --- zones reordered or added ---------------------------------------------------------------------

def network(zones: int | list[str]) -> engine.Recording:
    spec = stacks.spec("karpenter", name="ml", network={"cidr": "10.42.0.0/16", "availabilityZones": zones})

    def program() -> None:
        Network("net", NetworkArgs(cluster_name="ml", config=spec.network))

    return engine.run(program, {"aws:region": "us-west-2"}, stack="net")


def layout(rec: engine.Recording) -> dict[str, tuple[str, str]]:
    """Per subnet URN: its CIDR and zone (both replace-forcing)."""
    return {r.urn: (r.inputs["cidrBlock"], r.inputs["availabilityZone"]) for r in rec.of_type(SUBNET)}


ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"]


def test_reordering_listed_zones_keeps_every_subnet_and_route() -> None:
    before, after = network(ZONES), network(["us-west-2c", "us-west-2a", "us-west-2b"])
    assert len(layout(before)) == 6 and layout(after) == layout(before)
    assert sorted(r.urn for r in after.resources) == sorted(r.urn for r in before.resources)
    nat_subnets = {r.urn: r.inputs["subnetId"] for r in after.of_type("aws:ec2/natGateway:NatGateway")}
    assert nat_subnets == {r.urn: r.inputs["subnetId"] for r in before.of_type("aws:ec2/natGateway:NatGateway")}


@pytest.mark.parametrize(("zones", "more"), [(3, 4), (ZONES, ["us-west-2a", "us-west-2d", "us-west-2b", "us-west-2c"])],
                         ids=["count", "list"])
def test_adding_a_zone_keeps_every_existing_subnet(zones: int | list[str], more: int | list[str]) -> None:
    """Wherever the new zone is written in a list, the existing subnets keep their names and CIDRs."""
    before, after = layout(network(zones)), layout(network(more))
    assert len(after) == len(before) + 2
    assert {urn: after[urn] for urn in before} == before


def test_a_zone_sorting_before_the_listed_ones_recuts_the_protected_subnets() -> None:
    """A zone's CIDR is its slot in name order: adding us-west-2a to [b, c] keeps the subnets'
    identities but moves their CIDRs (replace-forcing), so `diff` reports them replaced, protected."""
    before, after = network(ZONES[1:]), network(ZONES)
    assert set(layout(before)) < set(layout(after))
    moved = {urn for urn, slot in layout(before).items() if layout(after)[urn] != slot}
    assert moved == set(layout(before))  # every existing subnet gets another CIDR in its zone
    replaced = {c.urn: c for c in diff.compare(before, after) if c.type == SUBNET and c.action == "replace"}
    assert set(replaced) == moved
    assert all(c.protected and c.reasons[0].startswith("cidrBlock: replace-forcing") for c in replaced.values())


def test_listing_the_zones_a_count_picked_keeps_every_subnet() -> None:
    """From `availabilityZones: 3` to the same zones by name: the zone-keyed subnets are aliased
    to the position-keyed ones and keep their CIDRs."""
    before, after = network(3), network(ZONES)
    matched = carried_over(before, after)
    assert {urn: (m.inputs["cidrBlock"], m.inputs["availabilityZone"]) for urn, m in matched.items()
            if m.type == SUBNET} == layout(before)


# --- the identity helper ---------------------------------------------------------------------------

def test_renamed_aliases_the_component_and_what_is_named_after_it() -> None:
    assert moved("new-vpc", "old", "new") == "old-vpc" and moved("other", "old", "new") is None
    assert renamed("same", "same").transformations is None

    def program() -> None:
        parent = pulumi.ComponentResource("test:index:Thing", "new", None, renamed("old", "new"))
        pulumi.ComponentResource("test:index:Part", "new-part", None, pulumi.ResourceOptions(parent=parent))
        pulumi.ComponentResource("test:index:Part", "elsewhere", None, pulumi.ResourceOptions(parent=parent))

    rec = engine.run(program, {})
    assert [r.aliases[0].rsplit("::", 1)[1] for r in rec.resources if r.aliases] == ["old", "old-part"]
    assert rec.named("elsewhere").aliases == []



def _aliases_sent(program_parent: pulumi.Resource | None) -> dict[str, list[str]]:
    """The aliases `renamed` gives a component renamed from `old` to `new` and its descendants (three
    levels deep), as the SDK receives them: a later transformation sees the options it made."""
    sent: dict[str, list[str]] = {}

    def spy(args: pulumi.ResourceTransformationArgs) -> None:
        sent[args.name] = [a if isinstance(a, str) else f"Alias(name={a.name!r})" for a in args.opts.aliases or []]

    opts = renamed("old", "new")
    thing = pulumi.ComponentResource("test:index:Thing", "new", None, pulumi.ResourceOptions(
        parent=program_parent, transformations=[*opts.transformations, spy]))
    part = pulumi.ComponentResource("test:index:Part", "new-part", None, pulumi.ResourceOptions(parent=thing))
    pulumi.ComponentResource("test:index:Leaf", "new-part-leaf", None, pulumi.ResourceOptions(
        parent=part, aliases=[pulumi.Alias(name="new-piece-leaf")]))
    return sent


def test_renamed_gives_the_engines_urns_where_it_knows_the_parents() -> None:
    """Under the stack the old URNs are spelled out, with every parent's type as the engine spells a
    URN (`Thing$Part$Leaf`): a URN alias costs the SDK none of the Outputs an `Alias(name=...)` does.
    The offline monitor spells URNs as the engine does, so the recording lists the very URNs sent,
    and an `Alias(name=...)` under the same parents as the engine resolves it."""
    sent: dict[str, list[str]] = {}
    rec = engine.run(lambda: sent.update(_aliases_sent(None)), {}, stack="id", project="p")
    urn = "urn:pulumi:id::p::"
    assert sent == {
        "new": [urn + "test:index:Thing::old"],
        "new-part": [urn + "test:index:Thing$test:index:Part::old-part"],
        "new-part-leaf": ["Alias(name='new-piece-leaf')",
                          urn + "test:index:Thing$test:index:Part$test:index:Leaf::old-part-leaf",
                          urn + "test:index:Thing$test:index:Part$test:index:Leaf::old-piece-leaf"]}
    leaf = urn + "test:index:Thing$test:index:Part$test:index:Leaf::"
    assert {r.name: r.aliases for r in rec.resources} == {
        "new": sent["new"], "new-part": sent["new-part"],
        "new-part-leaf": [leaf + "new-piece-leaf", *sent["new-part-leaf"][1:]]}


def test_renamed_under_a_parent_it_never_saw_names_the_old_names() -> None:
    """Under a team's own component the transformation cannot spell its parents' types: it gives
    `Alias(name=...)`, which the engine resolves, and the recording lists the same old URNs."""
    sent: dict[str, list[str]] = {}

    def program() -> None:
        outer = pulumi.ComponentResource("team:index:Outer", "outer", None)
        sent.update(_aliases_sent(outer))

    rec = engine.run(program, {}, stack="id", project="p")
    assert sent["new-part"] == ["Alias(name='old-part')"]
    assert sent["new-part-leaf"][1:] == ["Alias(name='old-part-leaf')", "Alias(name='old-piece-leaf')"]
    assert rec.named("new").aliases == ["urn:pulumi:id::p::team:index:Outer$test:index:Thing::old"]
    assert rec.named("new-part-leaf").aliases == [
        f"urn:pulumi:id::p::team:index:Outer$test:index:Thing$test:index:Part$test:index:Leaf::{n}"
        for n in ("new-piece-leaf", "old-part-leaf", "old-piece-leaf")]


# --- claims -------------------------------------------------------------------------------------------

def claims(count: int) -> engine.Recording:
    config = stacks.shipped("prod", overrides={"eks-devices:claims": {"trn-quarter-neuron-efa": {
        "neurons": {"count": count}}}})

    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        ClaimTemplates("claims", ClaimTemplatesArgs(plan=plan_for_stack(), k8s_provider=provider))

    return engine.run(program, config, stack="prod")


def test_a_changed_claim_template_spec_replaces_it() -> None:
    """A ResourceClaimTemplate's spec is immutable in the API: the changed template keeps its URN,
    differs only under `spec`, and `spec` is replace-on-change with the old object deleted first
    (its name is fixed), so `pulumi up` replaces it instead of failing on the update."""
    template = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
    before = {r.urn: r for r in claims(4).of_type(template)}
    after = {r.urn: r for r in claims(8).of_type(template)}
    assert set(after) == set(before)
    changed = [urn for urn in before if before[urn].inputs != after[urn].inputs]
    assert len(changed) == 1
    old, new = before[changed[0]], after[changed[0]]
    assert [k for k in old.inputs if old.inputs[k] != new.inputs[k]] == ["spec"]
    assert new.replace_on_changes == ["spec"] and new.delete_before_replace


# --- the secrets key ------------------------------------------------------------------------------------

def test_a_brought_kms_key_says_a_cluster_keeps_the_key_it_was_created_with(monkeypatch: pytest.MonkeyPatch) -> None:
    """With `kmsKeyArn` no key is generated, and the program says why switching an existing cluster
    to it stops at the protected cluster and key (EKS cannot re-key a cluster)."""
    warnings: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *args, **kwargs: warnings.append(message))
    arn = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    rec = engine.main(stacks.config("managed-node-groups", cluster={"kmsKeyArn": arn}), stack="id")
    assert rec.of_type("aws:kms/key:Key") == []
    assert engine.one(rec.of_type("eks:index:Cluster")).inputs["encryptionConfigKeyArn"] == arn
    assert [w for w in warnings if w.startswith("cluster.kmsKeyArn")] == [KMS_KEY_FIXED]
    assert "cannot re-key" in KMS_KEY_FIXED


def test_a_zone_listed_twice_is_a_config_problem() -> None:
    """Listed zones name their subnets: a zone twice is refused, with its place in the list."""
    config = stacks.config("karpenter", network={"availabilityZones": [*ZONES, "us-west-2a"]})
    with pytest.raises(ConfigError) as caught:
        parse(config)
    assert [(p.path, p.given) for p in caught.value.problems] == [("network.availabilityZones.3", "'us-west-2a'")]
