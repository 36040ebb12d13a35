"""What `pulumi up` would do to a stack deployed from a baseline: two mock-engine recordings compared
resource by resource, and the device story the two plans tell.

A resource is the same resource when the new one's URN, or one of its aliases, is the old one's URN
(as the engine matches them). A matched resource is updated when its inputs changed, and replaced
when a changed input is on a replace-on-change path of the program, a replace-forcing property of its
provider (the table in `core/knowledge/replacement.py`), or when its provider moved. A replacement
gives the resource a new id, so the inputs of everything that reads that id change too, and in the
preview `pulumi up` shows its outputs are unknown, so every input computed from them (the engine's
`propertyDependencies`, which the recording keeps) is unknown: a replace-forcing one replaces its
resource, an unknown kubeconfig its Kubernetes provider and all the provider manages. The diff
follows both until nothing more changes; the dependents a delete-first replacement replaces are
deleted before it, as the engine orders them. An old resource nothing matches is deleted; if
a new resource of the same type has its logical name, that pair is reported as a replacement by a
new identity (an alias would have kept it). A Kubernetes object's old inputs are taken as the API
server stored them (`kube_storage`: without the empty lists it omits), since pulumi-kubernetes compares
the new inputs with the live object: an empty list a program keeps sending is a change on every `up`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from eks_devices.core.config.claims import EXTENDED_RESOURCES
from eks_devices.core.knowledge import amis, kube_storage, replacement, rollouts, versions
from eks_devices.core.knowledge.device_classes import EXTENDED_RESOURCE_KUBERNETES
from eks_devices.core.names import POOL_LABEL
from eks_devices.core.vocabulary import FAMILIES, reserves
from eks_devices.offline.engine import Recording, Registered

NODE_TYPES = (rollouts.NODE_GROUP, rollouts.NODE_POOL)
_EC2_ID = re.compile(r"[a-z]+-[0-9a-f]{8,17}")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r'\.?([A-Za-z_*][A-Za-z0-9_]*)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+|\*)\]')


@dataclass
class Change:
    """One resource's fate."""

    action: str  # create | update | replace | delete
    type: str
    name: str
    urn: str
    component: str  # the owning component as `type::name` ("stack" at the top)
    changed: list[str] = field(default_factory=list)  # input paths that differ
    unknown: list[str] = field(default_factory=list)  # of those, the inputs computed from a replaced resource
    reasons: list[str] = field(default_factory=list)  # why it is replaced (or why the update fails)
    previous_urn: str | None = None  # when matched through an alias, or replaced by a new identity
    stateful: bool = False
    loses: str = ""
    protected: bool = False  # protected in the baseline: pulumi up refuses to replace or delete it
    delete_before_replace: bool = False
    fails: bool = False  # an immutable field changes without replaceOnChanges: the API refuses the update
    rolls: list[str] = field(default_factory=list)  # URNs of node objects whose nodes this update replaces
    rollout: str = ""  # why those nodes are replaced although nothing is
    partial: bool = False  # only some of those nodes (the ones new NodePool requirements refuse)

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "type": self.type, "name": self.name, "urn": self.urn,
                "component": self.component, "changed": self.changed, "unknownInPreview": self.unknown,
                "reasons": self.reasons,
                "previousUrn": self.previous_urn, "stateful": self.stateful, "loses": self.loses,
                "protected": self.protected, "deleteBeforeReplace": self.delete_before_replace,
                "fails": self.fails, "rollsNodesOf": self.rolls, "rollout": self.rollout,
                "partialRoll": self.partial}


# --- property paths --------------------------------------------------------------------------------

def _join(prefix: str, key: str) -> str:
    if _PLAIN_KEY.fullmatch(key):
        return f"{prefix}.{key}" if prefix else key
    return f'{prefix}["{key}"]'


def changed_paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Paths (Pulumi property-path syntax) where `new` differs from `old`; lists compare whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            if old.get(key) != new.get(key):
                out.extend(changed_paths(old.get(key), new.get(key), _join(prefix, str(key))))
        return out
    return [] if old == new else [prefix]


def tokens(path: str) -> tuple[str, ...]:
    """`spec.template.metadata.labels["a/b"]` → ("spec", "template", "metadata", "labels", "a/b")."""
    return tuple(m.group(1) or m.group(2) or m.group(3) or "" for m in _TOKEN.finditer(path))


def under(rule: str, changed: str) -> bool:
    """Whether `changed` is `rule` or lies beneath it (`*` matches any key): how ignoreChanges applies."""
    a, b = tokens(rule), tokens(changed)
    return len(b) >= len(a) and all(x == "*" or x == y for x, y in zip(a, b, strict=False))


def covers(rule: str, changed: str) -> bool:
    """Whether a change at `changed` touches `rule` (either lies under the other; `*` matches any key)."""
    a, b = tokens(rule), tokens(changed)
    return all(x == "*" or y == "*" or x == y for x, y in zip(a, b, strict=False))


# --- the comparison --------------------------------------------------------------------------------

def _component(r: Registered, by_urn: dict[str, Registered]) -> str:
    parent = by_urn.get(r.parent)
    while parent is not None and (parent.custom or parent.remote):  # a custom parent's component owns both
        parent = by_urn.get(parent.parent)
    return f"{parent.type}::{parent.name}" if parent is not None else "stack"


def _diffable(r: Registered) -> bool:
    """Resources whose inputs a provider diffs (custom resources and remote components)."""
    return r.custom or r.remote


def _compared(old: Registered) -> dict[str, Any]:
    """What the provider holds the new inputs against: pulumi-kubernetes' Diff compares with the live object
    pruned to the old inputs' shape, which the API server stored without the empty lists it omits
    (`kube_storage`); other providers compare with the old inputs."""
    return kube_storage.as_stored(old.inputs) if old.type.startswith("kubernetes:") else old.inputs


def _references(r: Registered) -> list[str]:
    """Values other resources receive from this one, which a replacement changes (its id and ARN)."""
    return [v for key in ("id", "arn") if isinstance(v := r.outputs.get(key), str) and len(v) > 6]


def _paths_holding(value: Any, needles: list[str], prefix: str = "") -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in sorted(value.items()) for p in _paths_holding(v, needles, _join(prefix, str(k)))]
    if isinstance(value, list):
        return [prefix] if any(_paths_holding(v, needles) for v in value) else []
    return [prefix] if isinstance(value, str) and any(_holds(value, n) for n in needles) else []


def _holds(value: str, needle: str) -> bool:
    """`value` is the id or ARN, or embeds an ARN (a policy document naming it) or an EC2-style id."""
    if value == needle:
        return True
    return (needle.startswith("arn:") or _EC2_ID.fullmatch(needle) is not None) and needle in value


def _verdict(change: Change, new: Registered, old: Registered, matched: dict[str, Registered],
             cause: str = "") -> None:
    """Decide a matched resource's action from its changed inputs: the reasons it is replaced, or why
    the update fails. `cause` says how a replaced resource changed some inputs (its new id, or outputs
    unknown in preview). A provider that answers to the old one's URN (an alias) is the same provider,
    as the engine takes it; an unknown kubeconfig is no known cluster (`replacement.UNKNOWN_FORCES_NEW`)."""
    entry = replacement.entry(new.type)
    replace: list[str] = []
    fail: list[str] = []
    same_cluster = (entry is not None and bool(entry.kubeconfig) and entry.kubeconfig not in change.unknown
                    and _same_cluster(old.inputs, new.inputs, entry.kubeconfig))
    for path in change.changed:
        hits = [r for r in new.replace_on_changes if covers(r, path)]
        forcing = [p for p in (entry.paths if entry else ()) if covers(p, path)
                   and not (same_cluster and p == entry.kubeconfig)]
        unknown = path in change.unknown
        if hits:
            replace.append(f"{path}{' (unknown)' if unknown else ''}: replace-on-change path {hits[0]} of the program")
        elif forcing and entry is not None:
            why = f"{entry.source}; unknown replaces too: {replacement.UNKNOWN_FORCES_NEW}" if unknown else entry.source
            replace.append(f"{path}{' (unknown)' if unknown else ''}: replace-forcing property {forcing[0]} ({why})")
        elif entry and any(covers(p, path) for p in entry.immutable):
            where = "in the Kubernetes API" if new.type.startswith("kubernetes:") else "in the AWS API"
            fail.append(f"{path}: immutable {where} and not replace-on-change, so pulumi up fails on it "
                        f"({entry.source})")
    old_provider, new_provider = old.provider.rpartition("::")[0], new.provider.rpartition("::")[0]
    was = matched.get(new_provider)
    if old_provider and new_provider and old_provider != (was.urn if was is not None else new_provider):
        replace.append(f"its provider changed: {old_provider} → {new_provider}")
    if replace and cause and cause not in change.reasons:
        replace.insert(0, cause)
    change.reasons = replace + fail
    change.fails = bool(fail) and not replace
    change.action = "replace" if replace else "update" if change.changed else "same"


def _same_cluster(old: dict[str, Any], new: dict[str, Any], key: str) -> bool:
    """Whether two kubeconfigs point at the same cluster (`replacement.active_cluster`), both readable."""
    was, now = replacement.active_cluster(old.get(key)), replacement.active_cluster(new.get(key))
    return was is not None and was == now


def compare(before: Recording, after: Recording) -> list[Change]:
    """Every resource that is created, updated, replaced or deleted going from `before` to `after`."""
    old_by_urn = {r.urn: r for r in before.resources}
    new_by_urn = {r.urn: r for r in after.resources}
    matched: dict[str, Registered] = {}  # new urn → old resource
    taken: set[str] = set()
    for r in after.resources:
        for urn in (r.urn, *r.aliases):
            if urn in old_by_urn and urn not in taken:
                matched[r.urn] = old_by_urn[urn]
                taken.add(urn)
                break
    kept_ids = _kept_ids(matched, after)
    changes: dict[str, Change] = {}
    for r in after.resources:
        old = matched.get(r.urn)
        entry = replacement.entry(r.type)
        change = Change("create", r.type, r.name, r.urn, _component(r, new_by_urn),
                        stateful=bool(entry and entry.stateful), loses=entry.loses if entry else "",
                        delete_before_replace=r.delete_before_replace)
        if old is not None:
            change.action = "same"
            change.protected = old.protect
            change.previous_urn = old.urn if old.urn != r.urn else None
            if _diffable(r):
                change.changed = [p for p in changed_paths(_compared(old), _swap(r.inputs, kept_ids))
                                  if not any(under(i, p) for i in r.ignore_changes)]  # the engine drops those
                _verdict(change, r, old, matched)
        changes[r.urn] = change
    _cascade(changes, matched, after)
    _fixed_names(changes, after)
    _deleted_first(changes, matched, before)
    _rollouts(changes, matched, after)
    _refused(changes, matched, after)
    out = [c for c in changes.values() if c.action != "same"]
    # what no new resource answers for is deleted; one with a new resource's type and name is a new identity
    created = {(c.type, c.name): c for c in out if c.action == "create"}
    for old in before.resources:
        if old.urn in taken:
            continue
        entry = replacement.entry(old.type)
        twin = created.get((old.type, old.name))
        if twin is not None:
            twin.action, twin.previous_urn, twin.protected = "replace", old.urn, old.protect
            twin.reasons.append(f"a new identity: its URN moved from {old.urn} (an alias would keep it)")
            twin.delete_before_replace = False  # a delete and a create: the old one goes last
            continue
        out.append(Change("delete", old.type, old.name, old.urn, _component(old, old_by_urn),
                          stateful=bool(entry and entry.stateful), loses=entry.loses if entry else "",
                          protected=old.protect))
    return sorted(out, key=lambda c: (c.component, c.type, c.name))


def _kept_ids(matched: dict[str, Registered], after: Recording) -> dict[str, str]:
    """new id or ARN → the old one, for resources matched through an alias: pulumi up keeps the
    matched resource (its id and ARN), while the mock engine names ids after the new logical name."""
    out: dict[str, str] = {}
    for r in after.resources:
        old = matched.get(r.urn)
        if old is not None and old.urn != r.urn:
            for key in ("id", "arn"):
                new_value, old_value = r.outputs.get(key), old.outputs.get(key)
                if isinstance(new_value, str) and isinstance(old_value, str) and new_value != old_value \
                        and len(new_value) > 6:
                    out[new_value] = old_value
    return out


def _swap(value: Any, ids: dict[str, str]) -> Any:
    """`value` with every id or ARN of `ids` (whole, or embedded as `_holds` finds them) replaced."""
    if not ids:
        return value
    if isinstance(value, dict):
        return {k: _swap(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_swap(v, ids) for v in value]
    if isinstance(value, str):
        for new, old in ids.items():
            if _holds(value, new):
                value = value.replace(new, old)
    return value


def _cascade(changes: dict[str, Change], matched: dict[str, Registered], after: Recording) -> None:
    """A replaced resource gets a new id: inputs that carry its old id or ARN change too. And in preview
    its outputs are unknown: every input computed from them (its `propertyDependencies` name the
    resource, or for a remote component one of its children the program reads through a reference) is
    unknown, which replaces the resource where the input is replace-forcing
    (`replacement.UNKNOWN_FORCES_NEW`) and updates it otherwise."""
    done: set[str] = set()
    remote = {r.urn for r in after.resources if r.remote}
    while fresh := [u for u, c in changes.items() if c.action == "replace" and u not in done]:
        for urn in fresh:
            done.add(urn)
            replaced = changes[urn]
            if replaced.type.startswith("pulumi:providers:"):
                _provider_replaced(changes, matched, after, urn)
            old = matched.get(urn)
            needles = _references(old) if old is not None else []
            name = f"{replaced.type}::{replaced.name}"
            for r in after.resources:
                change, old_r = changes[r.urn], matched.get(r.urn)
                if old_r is None or not _diffable(r) or change.action == "replace":
                    continue
                held = [p for p in _paths_holding(r.inputs, needles) if p not in change.changed] if needles else []
                unknown = [key for key, urns in sorted(r.property_dependencies.items())
                           if key not in change.unknown and any(_of(u, urn, urn in remote) for u in urns)]
                if not held and not unknown:
                    continue
                change.changed.extend(p for p in held + unknown if p not in change.changed)
                change.unknown.extend(unknown)
                cause = (f"{', '.join(unknown)}: computed from the outputs of {name}, which is replaced, so unknown "
                         f"in the preview pulumi up shows ({replacement.UNKNOWN_IN_PREVIEW})"
                         if unknown else f"the new id of {name} reaches its inputs")
                _verdict(change, r, old_r, matched, cause=cause)


def _of(dependency: str, urn: str, remote: bool) -> bool:
    """Whether a property dependency is the resource `urn`, or (for a `remote` component, whose children the
    program reads through resource references) one of its children."""
    return dependency == urn or (remote and _child_of(dependency, urn))


def _child_of(dependency: str, component: str) -> bool:
    """Whether `dependency` is a URN under `component`: its qualified type extends the component's, and its
    name starts with the component's (as pulumi-eks names its children, `${name}-eksCluster`), which tells
    two components of one type under one parent apart."""
    head, _, name = component.rpartition("::")
    child_head, _, child_name = dependency.rpartition("::")
    return child_head.startswith(head + "$") and child_name.startswith(name)


def _deleted_first(changes: dict[str, Change], matched: dict[str, Registered], before: Recording) -> None:
    """The engine's dependent replacements (`replacement.DEPENDENTS_DELETED_FIRST`): a resource replaced
    delete-first (for a remote component, the child that carries its fixed name) is deleted only after
    every dependent its replacement replaces, walked in the baseline: a resource whose provider is among
    them, or one of whose replace-forcing inputs is computed from one of them. Those go first too."""
    new_urn = {old.urn: urn for urn, old in matched.items()}
    for urn, root in list(changes.items()):
        old_root = matched.get(urn)
        if root.action != "replace" or not root.delete_before_replace or old_root is None:
            continue
        child = rollouts.FIXED_NAME_CHILD.get(root.type)
        gone = ({u for r in before.resources for urns in r.property_dependencies.values() for u in urns
                 if _child_of(u, old_root.urn) and u.split("::")[2].endswith("$" + child)} if child
                else {old_root.urn})  # a component is no step of its own: its child is what is deleted first
        name = f"{root.type}::{root.name}"
        for r in before.resources:
            change = changes.get(new_urn.get(r.urn, ""))
            if change is None or change.action != "replace" or not r.custom or r.urn in gone:
                continue
            keys = [k for k, urns in r.property_dependencies.items() if gone & set(urns)]
            if r.provider.rpartition("::")[0] in gone or _forces(r, keys):
                gone.add(r.urn)
                change.delete_before_replace = True
                change.reasons.append(f"deleted before {name} is, whose replacement deletes it first "
                                      f"({replacement.DEPENDENTS_DELETED_FIRST})")


def _forces(r: Registered, keys: list[str]) -> bool:
    """Whether an unknown value at any of `keys` replaces `r` (a replace-on-change path of the program, a
    replace-forcing property, or a provider's kubeconfig: `replacement.UNKNOWN_FORCES_NEW`)."""
    entry = replacement.entry(r.type)
    paths = [*r.replace_on_changes, *(entry.paths if entry else ())]
    return any(covers(p, k) for p in paths for k in keys)


def _provider_replaced(changes: dict[str, Change], matched: dict[str, Registered], after: Recording,
                       provider: str) -> None:
    """Every resource the replaced `provider` manages is replaced too (`replacement.PROVIDER_REPLACED`)."""
    for r in after.resources:
        change = changes[r.urn]
        if r.urn in matched and r.provider.rpartition("::")[0] == provider and change.action != "replace":
            change.reasons.insert(0, f"its provider {changes[provider].name} is replaced, and with it every "
                                     f"resource it manages ({replacement.PROVIDER_REPLACED})")
            change.action, change.fails = "replace", False


def _fixed_names(changes: dict[str, Change], after: Recording) -> None:
    """A replaced resource whose given auto-nameable name stays the same is deleted before its
    replacement is created (the provider's rule, `rollouts.FIXED_NAMES`): its nodes go first."""
    for r in after.resources:
        change, name = changes[r.urn], rollouts.FIXED_NAMES.get(r.type)
        if change.action == "replace" and name and r.inputs.get(name) and name not in change.changed:
            child = rollouts.FIXED_NAME_CHILD.get(r.type)
            if not change.delete_before_replace:
                change.reasons.append(f"{name} {r.inputs[name]} is given and unchanged, so the old "
                                      f"{child + ' it creates' if child else 'one'} is deleted before the new one "
                                      f"is created ({rollouts.BRIDGE_FIXED_NAME}"
                                      f"{'; ' + rollouts.PULUMI_EKS_NAME if child else ''})")
            change.delete_before_replace = True


def _rollouts(changes: dict[str, Change], matched: dict[str, Registered], after: Recording) -> None:
    """Updates that replace running nodes although no resource is replaced (`core/knowledge/rollouts.py`):
    a launch template's new version reaches its node groups' `launchTemplate.version` (EKS rolls
    them), a node group's own version inputs roll it, and a changed NodePool template or node class
    drifts the Karpenter / Auto Mode nodes built from it."""
    ids = {r.urn: r.outputs.get("id") for r in after.resources}  # the new run's ids, which its inputs carry
    by_id = {ids.get(urn): urn for urn, old in matched.items()
             if old.type == rollouts.LAUNCH_TEMPLATE and changes[urn].action == "update"}
    class_names = {}
    for urn, change in changes.items():
        if change.type in rollouts.NODE_CLASSES and change.action == "update":
            new = next(r for r in after.resources if r.urn == urn)
            class_names[(new.inputs.get("metadata") or {}).get("name")] = urn
    for r in after.resources:
        change = changes[r.urn]
        if change.action not in ("same", "update") or r.urn not in matched:
            continue
        if r.type == rollouts.NODE_GROUP:
            template = by_id.get((r.inputs.get("launchTemplate") or {}).get("id"))
            paths = rollouts.rolling_paths(rollouts.LAUNCH_TEMPLATE, changes[template].changed) if template else []
            if paths:
                source = changes[template]
                source.rolls.append(r.urn)
                source.rollout = (f"{', '.join(paths)}: a new launch template version "
                                  f"({rollouts.source(rollouts.LAUNCH_TEMPLATE)})")
                if "launchTemplate.version" not in change.changed:
                    change.changed.append("launchTemplate.version")
                    _verdict(change, r, matched[r.urn], matched)
        elif r.type == rollouts.NODE_POOL:
            node_class = ((((r.inputs.get("spec") or {}).get("template") or {}).get("spec") or {})
                          .get("nodeClassRef") or {}).get("name")
            source_urn = class_names.get(node_class)
            if source_urn and (paths := rollouts.rolling_paths(changes[source_urn].type, changes[source_urn].changed)):
                changes[source_urn].rolls.append(r.urn)
                pinned = rollouts.pinned_from_latest(paths, matched[source_urn].inputs,
                                                     next(n for n in after.resources if n.urn == source_urn).inputs)
                why = (f"unless {pinned} is the release they already run ({rollouts.KARPENTER_AMI_DRIFT})" if pinned
                       else f"({rollouts.source(changes[source_urn].type)})")
                changes[source_urn].rollout = f"{', '.join(paths)}: drift of the nodes built from it {why}"
        paths = rollouts.rolling_paths(r.type, change.changed) if change.action == "update" else []
        if r.type in NODE_TYPES and paths:
            change.rolls.append(r.urn)
            change.rollout = f"{', '.join(paths)}: its nodes are replaced ({rollouts.source(r.type)})"
        elif r.type == rollouts.NODE_POOL and change.action == "update" and any(
                under(rollouts.REQUIREMENTS, p) for p in change.changed):
            drifted = rollouts.requirement_drift(_requirements_of(matched[r.urn]), _requirements_of(r))
            if drifted:
                change.rolls.append(r.urn)
                change.partial = True
                change.rollout = (f"{rollouts.REQUIREMENTS}: only {'; '.join(drifted)} drift, the other nodes are "
                                  f"kept ({rollouts.KARPENTER_REQUIREMENTS})")


CLUSTER_TYPES = ("eks:index:Cluster", "aws:eks/cluster:Cluster")


def _fail(change: Change, reason: str) -> None:
    """Mark an update `pulumi up` would not get through (the API refuses it, or it stalls half-way)."""
    if reason not in change.reasons:
        change.reasons.append(reason)
    change.fails = change.action == "update"


def _requirements_of(r: Registered) -> Any:
    return ((((r.inputs.get("spec") or {}).get("template") or {}).get("spec") or {}).get("requirements"))


def _refused(changes: dict[str, Change], matched: dict[str, Registered], after: Recording) -> None:
    """Updates the API refuses or that stall (`core/knowledge/rollouts.py`): a control plane moved by
    more than one minor, and an upgrade of a Capacity Block node group that still wants nodes."""
    for r in after.resources:
        change, old = changes[r.urn], matched.get(r.urn)
        if change.action != "update" or old is None:
            continue
        if r.type in CLUSTER_TYPES and "version" in change.changed:
            try:
                step = (versions.kubernetes(str(old.inputs.get("version"))),
                        versions.kubernetes(str(r.inputs.get("version"))))
            except ValueError:
                continue
            if why := rollouts.version_step_problem(*step):
                _fail(change, f"version: {why}")
        if r.type == rollouts.NODE_GROUP and r.inputs.get("capacityType") == "CAPACITY_BLOCK":
            # the upgrade runs before new scaling applies (`rollouts.VERSION_BEFORE_SCALING`): the old size counts
            desired = int((old.inputs.get("scalingConfig") or {}).get("desiredSize") or 0)
            if paths := rollouts.capacity_block_stalls(change.changed, desired):
                scaled = int((r.inputs.get("scalingConfig") or {}).get("desiredSize") or 0) != desired
                _fail(change, f"{', '.join(paths)}: the group upgrades with {desired} node(s) wanted "
                              f"({rollouts.CAPACITY_BLOCK_AT_ZERO})"
                              + ("; it still wants them when the upgrade runs, before the new scaling applies "
                                 f"({rollouts.VERSION_BEFORE_SCALING})" if scaled else "")
                              + "; pulumi up once with the pool's replicas: 0, then with this change, then restore "
                              "the replicas")


# --- the device story ------------------------------------------------------------------------------

@dataclass
class PoolStory:
    """One pool's devices before and after."""

    pool: str
    managers: dict[str, tuple[str, str]]  # family → (before, after), for the families with a manager
    nodes: str  # "kept" | "replaced" | "created" | "deleted" | "updated"
    released_first: bool  # reserved capacity: the old nodes go before the new ones exist
    workloads: list[str]  # who loses their nodes
    deleted_first: bool = False  # the old nodes go before the new ones exist (reserved or not)
    capacity: str = "on-demand"
    provisioning: str = "dynamic"
    why: list[str] = field(default_factory=list)  # what rolls its nodes with no resource of it replaced
    renamed_from: str | None = None  # its name in the baseline (`renamedFrom`): the same pool, aliased

    @property
    def reserved(self) -> bool:
        return reserves(self.capacity)

    def as_dict(self) -> dict[str, Any]:
        return {"pool": self.pool, "renamedFrom": self.renamed_from, "nodes": self.nodes, "capacity": self.capacity,
                "provisioning": self.provisioning, "rolledBecause": self.why,
                "oldNodesDeletedFirst": self.deleted_first,
                "reservedCapacityReleasedFirst": self.released_first,
                "managers": {f: {"before": b, "after": a, "flips": b != a and "-" not in (b, a)}  # as `manager_flips`
                             for f, (b, a) in self.managers.items()},
                "workloadsLosingNodes": self.workloads}


def _pool_of(urns: tuple[str | None, ...], recordings: tuple[Recording, Recording]) -> str | None:
    """The pool whose node object (node group or NodePool) has one of `urns`, by its pool label."""
    for rec in recordings:
        for r in rec.resources:
            if r.urn in urns:
                labels = r.inputs.get("labels") if r.type.startswith("aws:") else \
                    ((r.inputs.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels")
                if isinstance(labels, dict) and isinstance(labels.get(POOL_LABEL), str):
                    return labels[POOL_LABEL]
    return None


def partly_rolled(changes: list[Change], recordings: tuple[Recording, Recording]) -> set[str]:
    """The pools (as `roll_reasons` names them) whose every rolling update replaces only some nodes."""
    whole = {_pool_of((u,), recordings) or u.rsplit("::", 1)[-1] for c in changes if not c.partial for u in c.rolls}
    return {_pool_of((u,), recordings) or u.rsplit("::", 1)[-1] for c in changes if c.partial for u in c.rolls} - whole


def roll_reasons(changes: list[Change], recordings: tuple[Recording, Recording]) -> dict[str, list[str]]:
    """Per pool (or, for node objects of no pool such as the system node group, their resource name)
    whose nodes an in-place update replaces: why, one line per update that rolls them."""
    out: dict[str, list[str]] = {}
    for c in changes:
        for urn in c.rolls:
            reasons = out.setdefault(_pool_of((urn,), recordings) or urn.rsplit("::", 1)[-1], [])
            if c.rollout and f"{c.name}: {c.rollout}" not in reasons:
                reasons.append(f"{c.name}: {c.rollout}")
    return out


def rolled_nodes(changes: list[Change], recordings: tuple[Recording, Recording]) -> list[str]:
    """The pools (or node objects of no pool) whose nodes an in-place update replaces."""
    return sorted(roll_reasons(changes, recordings))


def manager_flips(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(pool, family, before, after) for each pool kept whose resolved manager changes (`plan_data` dicts)."""
    out = []
    was = renamed_pools(before, after)
    for pool in sorted(set(after["pools"]) & (set(before["pools"]) | set(was))):
        for family in FAMILIES:
            b = before["pools"][was.get(pool, pool)]["managers"][family]["manager"]
            a = after["pools"][pool]["managers"][family]["manager"]
            if a != b:
                out.append((pool, family, b, a))
    return out


def _served_through_dra(plan: dict[str, Any]) -> dict[str, str]:
    """Extended resource → the DeviceClass that names it (`extendedResourceName`): on a DRA node the
    scheduler serves a Pod's plain request for it through DRA, from Kubernetes 1.36 (KEP-5004)."""
    if versions.kubernetes(plan["kubernetesVersion"]) < EXTENDED_RESOURCE_KUBERNETES:
        return {}
    return {c["extendedResourceName"]: c["name"] for c in plan.get("deviceClasses", [])
            if c.get("extendedResourceName")}


def device_story(before: dict[str, Any], after: dict[str, Any], changes: list[Change],
                 recordings: tuple[Recording, Recording]) -> dict[str, Any]:
    """Per pool and family the manager before → after, whether the nodes are replaced (and reserved
    capacity released first), the releases removed and added, and the workloads that lose nodes."""
    was = renamed_pools(before, after)
    node_changes: dict[str, Change] = {}
    for c in changes:
        if c.type in NODE_TYPES and (pool := _pool_of((c.urn, c.previous_urn), recordings)) is not None:
            node_changes.setdefault(pool, c)
    for new_name, old_name in was.items():  # a renamed pool's node object is labelled with either name
        if old_name in node_changes:
            node_changes.setdefault(new_name, node_changes.pop(old_name))
    _stalled_pools(before, after, node_changes)
    resource_of = {family: name for name, family in EXTENDED_RESOURCES.items()}
    through_dra = _served_through_dra(after)
    upgrade = upgrade_rolls(before, after)
    renamed_to = {old: new for new, old in was.items()}
    reasons = {renamed_to.get(p, p): why for p, why in roll_reasons(changes, recordings).items()}
    partial = {renamed_to.get(p, p) for p in partly_rolled(changes, recordings)} - set(upgrade)
    by_resources = sorted(reasons)
    rolled = set(by_resources) | set(upgrade)
    stories = []
    for pool in sorted((set(before["pools"]) - set(was.values())) | set(after["pools"])):
        old, new = before["pools"].get(was.get(pool, pool)), after["pools"].get(pool)
        managers = {}
        for family in FAMILIES:
            b = old["managers"][family]["manager"] if old else "-"
            a = new["managers"][family]["manager"] if new else "-"
            if {b, a} - {"none", "-"}:
                managers[family] = (b, a)
        change = node_changes.get(pool)
        nodes = "created" if old is None else "deleted" if new is None else (change.action if change else "kept")
        nodes = {"create": "created", "delete": "deleted", "replace": "replaced", "update": "updated"}.get(nodes, nodes)
        if nodes in ("kept", "updated") and pool in rolled:
            nodes = "partly rolled" if pool in partial else "rolled"
        first = bool(change and change.action == "replace" and change.delete_before_replace)
        released = first and reserves((old or {}).get("capacity", ""))
        workloads = []
        for family, (b, a) in managers.items():
            if b == "device-plugin" and a != "device-plugin":
                via = through_dra.get(resource_of[family]) if a == "dra" else None
                workloads.append(f"pods requesting {resource_of[family]} on pool {pool}: "
                                 f"no {family} device plugin serves its nodes after the change" + (
                                     f"; DRA does (the {via} DeviceClass names {resource_of[family]} as its "
                                     "extended resource), one device of that class per unit requested" if via else ""))
            if b == "dra" and a != "dra":
                claims = sorted(n for n, c in before.get("claims", {}).items() if pool in c.get("pools", {})
                                and family in c.get("families", []))
                who = f"claims {', '.join(claims)}" if claims else f"pods with ResourceClaims for {family} devices"
                workloads.append(f"{who} on pool {pool}: no {family} DRA driver serves its nodes after the change")
        if nodes in ("replaced", "deleted", "rolled", "partly rolled") and not workloads and managers:
            workloads.append(f"every pod on pool {pool} is evicted while its nodes are "
                             f"{'removed' if nodes == 'deleted' else 'replaced' if nodes == 'replaced' else 'rolled'}")
        if change or pool in rolled or old is None or new is None or any(b != a for b, a in managers.values()):
            shape = new or old or {}
            stories.append(PoolStory(pool, managers, nodes, released, workloads, first,
                                     capacity=shape.get("capacity", "on-demand"),
                                     provisioning=shape.get("provisioning", "dynamic"),
                                     why=([upgrade[pool]] if pool in upgrade else []) + reasons.get(pool, [])
                                     if nodes in ("rolled", "partly rolled") else [], renamed_from=was.get(pool)))
    return {
        "pools": [s.as_dict() for s in stories],
        "flips": [{"pool": p, "family": f, "before": b, "after": a} for p, f, b, a in manager_flips(before, after)],
        "releasesRemoved": sorted(set(before["releases"]) - set(after["releases"])),
        "releasesAdded": sorted(set(after["releases"]) - set(before["releases"])),
        "nodesRolled": sorted(set(by_resources) | {s.pool for s in stories if s.nodes in ("rolled", "partly rolled")}),
        "reservedCapacityRolled": [s.pool for s in stories if s.reserved
                                   and s.nodes in ("rolled", "partly rolled", "replaced")],
        "amiDrift": ami_drift(after),
        "warnings": _roll_warnings(after, stories) + _held_roll_warnings(stories),
    }


def renamed_pools(before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """new pool name → its name in the baseline, for the pools renamed with `renamedFrom`: the same
    pool, whose resources keep their identity through aliases."""
    return {name: str(p["renamedFrom"]) for name, p in after["pools"].items()
            if p.get("renamedFrom") in before["pools"] and p.get("renamedFrom") not in after["pools"]}


def _stalled_pools(before: dict[str, Any], after: dict[str, Any], node_changes: dict[str, Change]) -> None:
    """Pool changes that stall, read from the two plans (`plan_data` dicts): a capacity-block pool
    renamed without `renamedFrom` (its new node object waits for the reservation the old one holds
    until the old one is deleted, last), and a pinned zone moved while the pool keeps its cluster
    placement group (a cluster placement group lives in one zone: EC2 User Guide, "Placement
    strategies", cluster; its running instances hold it there until they are gone)."""
    was = renamed_pools(before, after)
    gone = {n: p for n, p in before["pools"].items() if n not in after["pools"] and n not in was.values()}
    for name, pool in after["pools"].items():
        change = node_changes.get(name)
        if change is None:
            continue
        old = before["pools"].get(was.get(name, name))
        if old is None and pool.get("capacity") == "capacity-block":
            held = [n for n, p in gone.items() if set(p.get("capacityReservationIds", ())) &
                    set(pool.get("capacityReservationIds", ()))]
            if held:
                change.reasons.append(
                    f"pool {name} draws on the reservation of pool {held[0]}, which is deleted only after it is "
                    f"created: it waits for capacity the old pool holds; rename with nodePools.{name}.renamedFrom: "
                    f"{held[0]} (its resources keep their identity)")
                change.fails = True
        elif (old is not None and old.get("placementGroup") and pool.get("placementGroup")
              and old.get("availabilityZone") and old.get("availabilityZone") != pool.get("availabilityZone")):
            change.reasons.append(
                f"availabilityZone {old['availabilityZone']} → {pool.get('availabilityZone')}: the pool keeps its "
                "cluster placement group, which lives in one zone and holds the old nodes there, so new nodes in "
                "the new zone cannot launch into it; move the pool in two steps (placementGroup: false, then the "
                "zone and placementGroup: true) or scale it to 0 first")
            change.fails = True


def upgrade_rolls(before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """Pools whose nodes a control-plane version change replaces with no node resource replaced
    (`knowledge/amis.py`): every Auto Mode pool, and every Karpenter pool (an alias AMI follows the
    minor). Managed node groups roll through their own `version` input, which the resource diff sees."""
    if before.get("mode") != after.get("mode") or before.get("kubernetesVersion") == after.get("kubernetesVersion"):
        return {}
    why = {"auto-mode": amis.AUTO_MODE_ROLL, "karpenter": amis.KARPENTER_VERSION_ROLL}.get(after.get("mode", ""))
    if why is None:
        return {}
    change = f"Kubernetes {before['kubernetesVersion']} → {after['kubernetesVersion']}: {why}"
    return {pool: change for pool in sorted(set(before["pools"]) & set(after["pools"]))}


def ami_drift(after: dict[str, Any]) -> list[dict[str, str]]:
    """The Karpenter pools on an `@latest` alias: each AMI release replaces their nodes, whatever the change."""
    if after.get("mode") != "karpenter":
        return []
    return [{"pool": name, "alias": amis.alias(p["ami"], p.get("amiVersion", amis.LATEST)),
             "capacity": p["capacity"], "provisioning": p["provisioning"], "why": amis.KARPENTER_LATEST_DRIFT}
            for name, p in sorted(after["pools"].items()) if p.get("amiVersion", amis.LATEST) == amis.LATEST]


def _held_roll_warnings(stories: list[PoolStory]) -> list[str]:
    """A warning per rolled or replaced pool whose nodes cannot simply come back: static pools and
    pools on reserved capacity or a capacity block."""
    out = []
    for s in stories:
        if s.nodes in ("rolled", "partly rolled", "replaced") and (s.reserved or s.provisioning == "static"):
            kinds = " ".join(k for k in (s.provisioning if s.provisioning == "static" else "",
                                         s.capacity if s.reserved else "") if k)
            out.append(f"{kinds} pool {s.pool}: " + ("some of its nodes are rolled" if s.nodes == "partly rolled"
                                                     else f"every node is {s.nodes}")
                       + ("; the capacity it holds must be free for the new nodes" if s.reserved else ""))
    return out


def _roll_warnings(after: dict[str, Any], stories: list[PoolStory]) -> list[str]:
    """A warning when the change replaces the nodes of every pool of the stack at once (two or more)."""
    pools = sorted(after["pools"])
    moved = {s.pool for s in stories if s.nodes in ("rolled", "replaced")}
    if len(pools) < 2 or not set(pools) <= moved:
        return []
    return [f"every pool's nodes are replaced at once ({', '.join(pools)}): no pool keeps capacity while "
            "pulumi up rolls them; change this in a maintenance window, one stack at a time"]


def summary(changes: list[Change]) -> dict[str, int]:
    counts = {"create": 0, "update": 0, "replace": 0, "delete": 0}
    for c in changes:
        counts[c.action] += 1
    return counts


def stateful_losses(changes: list[Change]) -> list[Change]:
    """The replacements and deletions of stateful resources, and the updates `pulumi up` fails on
    (what `--fail-on replace` stops: a deploy that cannot apply is no safer than one that replaces)."""
    return [c for c in changes if (c.stateful and c.action in ("replace", "delete")) or c.fails]
