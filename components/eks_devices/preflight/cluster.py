"""Existing-cluster checks: what EKS APIs show about a cluster the stack would update.

Without Kubernetes credentials only the EKS view is visible: the control-plane version, managed
node groups (labels, AMI type, launch template) and EKS add-ons. DaemonSets installed with Helm or
kubectl live inside the cluster; that check is reported as not run, with the command to run,
rather than guessed.
"""

from __future__ import annotations

import tomllib
from typing import Any

from eks_devices.core.config.stack import FAMILIES, Family
from eks_devices.core.families import DESCRIPTORS, FAMILY, NVIDIA
from eks_devices.core.knowledge import installers, rollouts, versions
from eks_devices.core.knowledge.charts import RELEASE_FOR
from eks_devices.core.model import Plan
from eks_devices.core.names import BOTTLEROCKET_NVIDIA_PLUGIN, POOL_LABEL, manager_label
from eks_devices.preflight.model import CheckResult, Context

VERSION = "cluster.version"
NODE_GROUPS = "cluster.node-groups"
BOTTLEROCKET = "cluster.bottlerocket-plugin"
CAPACITY_BLOCK_UPGRADE = "cluster.capacity-block-upgrade"
ADDONS = "cluster.add-ons"
DAEMONSETS = "cluster.daemonsets"
# cluster states pulumi up cannot work with (EKS API Reference, Cluster.status)
UNUSABLE_CLUSTER = {"DELETING": "EKS is deleting it; pulumi up cannot update it, and creating it again fails while "
                                "the name is taken",
                    "FAILED": "EKS could not create it; pulumi up cannot update it"}

# EKS add-ons recognised by name as running a device plugin: (family, words that must all appear): each
# family's name with "device-plugin", and the NVIDIA GPU Operator, which deploys the NVIDIA device plugin
# unless told otherwise.
DEVICE_PLUGIN_ADDONS: tuple[tuple[Family, tuple[str, ...]], ...] = (
    *((d.name, (d.name, "device-plugin")) for d in DESCRIPTORS),
    *((installers.GPU_OPERATOR_AGENTS[0].family, (name,))
      for name in (installers.GPU_OPERATOR_CHART, installers.GPU_OPERATOR_CHART.replace("-", "_"))),
)
# Every EKS AMI type whose Bottlerocket variant bundles the NVIDIA device plugin (the FIPS ones too).
BOTTLEROCKET_NVIDIA = ("BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA_FIPS",
                       "BOTTLEROCKET_ARM_64_NVIDIA_FIPS")
PLUGIN_DAEMONSETS = ", ".join(d.releases["device-plugin"] for d in DESCRIPTORS if "device-plugin" in d.releases)


def minimum_version(plan: Plan) -> tuple[tuple[int, int], str]:
    """The lowest Kubernetes version the plan can run on, and why."""
    need, why = plan.spec.cluster.kubernetes, f"the stack's cluster.version {plan.spec.cluster.version}"
    for family in FAMILIES:
        if not any(p.manager(family) == "dra" for p in plan.pools.values()):
            continue
        floor = versions.AUTO_MODE_DRA_KUBERNETES if plan.mode == "auto-mode" else FAMILY[family].dra_kubernetes
        if floor > need:
            need, why = floor, f"{family} DRA{' in Auto Mode' if plan.mode == 'auto-mode' else ''} needs it"
    return need, why


def _cluster(ctx: Context, check: str) -> tuple[dict[str, Any] | None, list[CheckResult]]:
    """The cluster, or the not-run result saying it does not exist yet."""
    name = ctx.spec.cluster.name
    found = ctx.aws.cluster(name)
    if found is None:
        return None, [CheckResult(check, f"cluster {name}", "not-run",
                                  f"cluster {name} does not exist yet in {ctx.region}; nothing to compare")]
    status = str(found.get("status") or "")
    if status in UNUSABLE_CLUSTER:
        return None, [CheckResult(check, f"cluster {name}", "fail",
                                  f"cluster {name} is {status}: {UNUSABLE_CLUSTER[status]}",
                                  "wait until EKS has finished, then run preflight again (a deleted cluster's name "
                                  "can be used again once it is gone)")]
    return found, []


def version(ctx: Context) -> list[CheckResult]:
    found, absent = _cluster(ctx, VERSION)
    if found is None:
        return absent
    subject = f"cluster {found.get('name')}"
    text = str(found.get("version"))
    try:
        have = versions.kubernetes(text)
    except ValueError:
        return [CheckResult(VERSION, subject, "warn", f"EKS reports version {text!r}, which is not a minor version",
                            "check the cluster in the EKS console")]
    need, why = minimum_version(ctx.plan)
    stack = ctx.spec.cluster.kubernetes
    show = versions.show
    if have > stack:
        return [CheckResult(VERSION, subject, "fail",
                            f"the cluster runs {text}, newer than the stack's {ctx.spec.cluster.version}; EKS cannot "
                            "downgrade", f'set cluster.version to "{text}"')]
    if have >= need:
        return [CheckResult(VERSION, subject, "pass", f"the cluster runs {text}; the plan needs {show(need)} ({why})")]
    steps = need[1] - have[1] if need[0] == have[0] else 99
    if steps == 1 and need == stack:
        return [CheckResult(VERSION, subject, "warn",
                            f"the cluster runs {text}; pulumi up upgrades the control plane to {show(need)} "
                            f"({why}) before the device software",
                            "expected for an upgrade; update the node groups' AMIs after the control plane")]
    return [CheckResult(VERSION, subject, "fail",
                        f"the cluster runs {text}, below {show(need)} ({why}); EKS upgrades one minor version "
                        "at a time", f"upgrade the cluster step by step to {show(need)} before pulumi up")]


def node_groups(ctx: Context) -> list[CheckResult]:
    """Existing node groups' device-manager labels against the plan."""
    found, absent = _cluster(ctx, NODE_GROUPS)
    if found is None:
        return absent
    groups = ctx.aws.nodegroups(str(found.get("name")))
    results: list[CheckResult] = []
    unrelated = []
    for group in groups:
        labels = group.get("labels") or {}
        subject = f"node group {group.get('nodegroupName')}"
        pool = ctx.plan.pools.get(labels.get(POOL_LABEL, ""))
        if pool is not None:
            changes = [f"{f} {labels.get(manager_label(f), 'none')} → {pool.manager(f)}" for f in FAMILIES
                       if labels.get(manager_label(f), "none") != pool.manager(f)]
            if changes:
                results.append(CheckResult(
                    NODE_GROUPS, subject, "warn",
                    f"pool {pool.name}'s node group carries other device managers than the plan "
                    f"({'; '.join(changes)}): pulumi up replaces its nodes",
                    "expected when devices.* changed: drain its workloads first; reserved capacity is released "
                    "before the new nodes launch"))
            else:
                results.append(CheckResult(NODE_GROUPS, subject, "pass",
                                           f"pool {pool.name}'s device-manager labels match the plan"))
            continue
        claimed = {f: labels[manager_label(f)] for f in FAMILIES if manager_label(f) in labels}
        if not claimed:
            unrelated.append(str(group.get("nodegroupName")))
            continue
        results.append(_foreign(ctx.plan, subject, claimed))
    if unrelated or not groups:
        names = ", ".join(unrelated) if unrelated else "none"
        results.append(CheckResult(NODE_GROUPS, "other node groups", "pass",
                                   f"node groups without eks-devices labels ({names}): the stack's device software "
                                   "does not select them"))
    return results


def _foreign(plan: Plan, subject: str, claimed: dict[Family, str]) -> CheckResult:
    """A node group outside the stack that carries the toolkit's device-manager labels."""
    served, orphaned = [], []
    for family, manager in sorted(claimed.items()):
        key = RELEASE_FOR.get((family, manager))
        (served if key in plan.releases else orphaned).append(f"{manager_label(family)}={manager}")
    if served:
        return CheckResult(NODE_GROUPS, subject, "warn",
                           f"not a pool of this stack, yet labelled {', '.join(served)}: the stack's device software "
                           "will run on its nodes too",
                           "remove the eks-devices labels from it, or bring it into the stack as a node pool")
    return CheckResult(NODE_GROUPS, subject, "warn",
                       f"not a pool of this stack, labelled {', '.join(orphaned)}, but the stack installs no such "
                       "software: its nodes get no device manager from this stack",
                       "remove the labels, or add a pool with that device manager")


def bottlerocket(ctx: Context) -> list[CheckResult]:
    """Bottlerocket NVIDIA node groups labelled for NVIDIA DRA must switch off the bundled plugin."""
    found, absent = _cluster(ctx, BOTTLEROCKET)
    if found is None:
        return absent
    results = []
    for group in ctx.aws.nodegroups(str(found.get("name"))):
        if group.get("amiType") not in BOTTLEROCKET_NVIDIA:
            continue
        subject = f"node group {group.get('nodegroupName')}"
        if (group.get("labels") or {}).get(manager_label(NVIDIA.name)) != "dra":
            results.append(CheckResult(BOTTLEROCKET, subject, "pass",
                                       "Bottlerocket NVIDIA with its bundled device plugin; no NVIDIA DRA driver "
                                       "is scoped to it"))
            continue
        results.append(_bundled_plugin(ctx, subject, group.get("launchTemplate") or {}))
    return results or [CheckResult(BOTTLEROCKET, "node groups", "pass", "no Bottlerocket NVIDIA node groups")]


def capacity_block_upgrade(ctx: Context) -> list[CheckResult]:
    """A Capacity Block node group is upgraded only at desired size 0 (the rule `diff` applies too:
    `rollouts.capacity_block_stalls`): when `pulumi up`
    would move a pool's group to the stack's version while it still has nodes, EKS refuses midway."""
    found, absent = _cluster(ctx, CAPACITY_BLOCK_UPGRADE)
    if found is None:
        return absent
    stack = ctx.spec.cluster.version
    results = []
    for group in ctx.aws.nodegroups(str(found.get("name"))):
        pool = ctx.plan.pools.get((group.get("labels") or {}).get(POOL_LABEL, ""))
        if pool is None or group.get("capacityType") != "CAPACITY_BLOCK":
            continue
        subject, have = f"node group {group.get('nodegroupName')}", str(group.get("version"))
        desired = int((group.get("scalingConfig") or {}).get("desiredSize") or 0)
        if have == stack:
            results.append(CheckResult(CAPACITY_BLOCK_UPGRADE, subject, "pass",
                                       f"pool {pool.name} already runs Kubernetes {have}; no node upgrade"))
        elif not rollouts.capacity_block_stalls(["version"], desired):
            results.append(CheckResult(CAPACITY_BLOCK_UPGRADE, subject, "pass",
                                       f"pool {pool.name} runs {have} at desired size 0: pulumi up can upgrade it "
                                       f"to {stack}"))
        else:
            results.append(CheckResult(
                CAPACITY_BLOCK_UPGRADE, subject, "fail",
                f"pool {pool.name} runs {have} with {desired} node(s); pulumi up would upgrade it to {stack}, and "
                f"the upgrade stalls ({rollouts.CAPACITY_BLOCK_AT_ZERO})",
                _scale_down_first(pool.name, group, have, str(found.get("version")), stack)))
    return results or [CheckResult(CAPACITY_BLOCK_UPGRADE, "node groups", "pass",
                                   "no Capacity Block node group of the stack")]


def _scale_down_first(pool: str, group: dict[str, Any], have: str, control_plane: str, stack: str) -> str:
    """How to reach desired size 0 before the upgrade: through the stack while the control plane is
    still at the group's version, else outside it (and a refresh afterwards restores the replicas)."""
    if control_plane == have:
        return (f'pulumi up once with nodePools.{pool}.replicas: 0 and cluster.version "{have}", then with '
                f'cluster.version "{stack}", then restore the replicas')
    return (f"scale it to 0 first (aws eks update-nodegroup-config --cluster-name {group.get('clusterName')} "
            f"--nodegroup-name {group.get('nodegroupName')} --scaling-config minSize=0,maxSize=1,desiredSize=0), "
            "pulumi up, then pulumi up --refresh to restore its replicas")


def _bundled_plugin_setting(document: Any) -> bool | None:
    """The bundled plugin's switch (`settings.` + `BOTTLEROCKET_NVIDIA_ENABLED`) in Bottlerocket user data
    (absent: on), or None when the document does not have that shape (a table where a table belongs, a boolean)."""
    node: Any = document
    for key in ("settings", *BOTTLEROCKET_NVIDIA_PLUGIN.split(".")):
        if not isinstance(node, dict):
            return None
        node = node.get(key, {})
    if not isinstance(node, dict):
        return None
    enabled = node.get("enabled", True)
    return enabled if isinstance(enabled, bool) else None


def _bundled_plugin(ctx: Context, subject: str, template: dict[str, Any]) -> CheckResult:
    fix = (f"set [settings.{BOTTLEROCKET_NVIDIA_PLUGIN}] enabled = false in its launch template user data "
           "(the plan does this for its own Bottlerocket DRA pools), then roll the node group")
    if not template.get("id"):
        return CheckResult(BOTTLEROCKET, subject, "fail",
                           "labelled for NVIDIA DRA but has no launch template, so Bottlerocket's bundled NVIDIA "
                           "device plugin runs beside the DRA driver", fix)
    user_data = ctx.aws.launch_template_user_data(str(template["id"]), str(template.get("version") or "$Default"))
    try:
        document = tomllib.loads(user_data or "")
    except tomllib.TOMLDecodeError:
        document = None
    enabled = _bundled_plugin_setting(document)
    if enabled is None:
        return CheckResult(BOTTLEROCKET, subject, "warn",
                           f"labelled for NVIDIA DRA; launch template {template['id']} user data is not Bottlerocket "
                           f"settings TOML ([settings.{BOTTLEROCKET_NVIDIA_PLUGIN}] tables), so whether the bundled "
                           "plugin is off cannot be read", fix)
    if enabled is False:
        return CheckResult(BOTTLEROCKET, subject, "pass",
                           f"labelled for NVIDIA DRA and launch template {template['id']} switches the bundled "
                           "device plugin off")
    return CheckResult(BOTTLEROCKET, subject, "fail",
                       f"labelled for NVIDIA DRA, but launch template {template['id']} leaves Bottlerocket's bundled "
                       "NVIDIA device plugin on: both would allocate the same GPUs", fix)


def _addon_family(name: str) -> Family | None:
    lowered = name.lower()
    for family, words in DEVICE_PLUGIN_ADDONS:
        if all(w in lowered for w in words):
            return family
    return None


def addons(ctx: Context) -> list[CheckResult]:
    """EKS add-ons that run a device plugin where the plan puts a DRA driver."""
    found, absent = _cluster(ctx, ADDONS)
    if found is None:
        return absent
    listed = ctx.aws.addons(str(found.get("name")))
    results = []
    for addon in listed:
        name = str(addon.get("addonName"))
        family = _addon_family(name)
        if family is None:
            continue
        results.append(_addon(ctx.plan, addon, name, family))
    if not results:
        names = ", ".join(str(a.get("addonName")) for a in listed) or "none"
        results.append(CheckResult(ADDONS, "add-ons", "pass", f"no add-on runs a device plugin (add-ons: {names})"))
    return results


def _addon(plan: Plan, addon: dict[str, Any], name: str, family: Family) -> CheckResult:
    subject = f"add-on {name}"
    dra = [p.name for p in plan.pools.values() if p.manager(family) == "dra"]
    plugin = [p.name for p in plan.pools.values() if p.manager(family) == "device-plugin"]
    scoped = manager_label(family) in str(addon.get("configurationValues") or "")
    fix = (f"remove the add-on (the stack installs the {family} software itself), or scope it with its "
           f"configuration values to nodes labelled {manager_label(family)}=device-plugin")
    if dra and scoped:
        return CheckResult(ADDONS, subject, "warn",
                           f"runs the {family} device plugin; its configuration mentions {manager_label(family)}, "
                           f"so it may be kept off DRA pools {', '.join(dra)}: confirm it selects device-plugin "
                           "nodes only", fix)
    if dra:
        return CheckResult(ADDONS, subject, "fail",
                           f"runs the {family} device plugin, unscoped, on nodes where the plan puts the {family} "
                           f"DRA driver (pools {', '.join(dra)}): both would allocate the same devices", fix)
    if plugin:
        builtin = "Auto Mode's own plugin" if plan.mode == "auto-mode" else "the stack's own device plugin release"
        return CheckResult(ADDONS, subject, "warn",
                           f"runs the {family} device plugin beside {builtin} on pools {', '.join(plugin)}", fix)
    return CheckResult(ADDONS, subject, "pass", f"runs the {family} device plugin; no pool of this stack has "
                       f"{family} devices")


def daemonsets(ctx: Context) -> list[CheckResult]:
    """DaemonSets are inside the cluster: out of reach of EKS APIs, so reported as not run, and as
    blocking on an existing cluster (exit 3): a preflight that passes must have run every check."""
    found, absent = _cluster(ctx, DAEMONSETS)
    if found is None:
        return absent
    return [CheckResult(DAEMONSETS, f"cluster {found.get('name')}", "not-run",
                        "device plugin DaemonSets installed with Helm or kubectl are visible only through the "
                        "Kubernetes API, which this read-only AWS check does not use",
                        "with cluster credentials run `kubectl get daemonsets -A` and make sure no "
                        f"{PLUGIN_DAEMONSETS} outside the stack's releases selects the DRA pools' nodes "
                        "(then --allow-not-run)", blocked=True)]
