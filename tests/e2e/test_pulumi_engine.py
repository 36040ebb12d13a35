"""The real Pulumi engine as the oracle for the offline engine: the steps `eks-devices diff` predicts,
what `preview` records of each resource, and what a program is given (its project's configuration, its
secrets).

The Kubernetes-layer components on an existing cluster (`DeviceSoftware`'s DeviceClasses and
namespaces, `ClaimTemplates`, Karpenter and Auto Mode `NodePools`) run through the real Pulumi CLI and
the real `pulumi-resource-kubernetes` provider (both built from Go modules), as Automation API inline
programs with a local file backend, against the real API server: `up` with a baseline, then `preview`
of a change. The steps the engine plans per resource (create, update, replace, delete; replace with
delete-before-replace; an alias honoured as no step) must be the ones `diff` predicts from the mock
engine's recordings of the same two programs (`eks_devices.offline.diff.compare`). The same
components under one component renamed (`identity.renamed`, as the shipped program renames every
resource) must be no step at all, also in a state an interrupted update left.

The recording is also held against the state `up` leaves (URNs, parents, dependencies, providers,
options, inputs), a URN registered twice against the engine's refusal, the configuration the CLI merges
from Pulumi.yaml and which keys it makes secrets against the offline run's, and the inputs a preview
shows as `[secret]` against the engine's preview events.

The device software's Helm releases need their charts, which are in no registry this tier can reach: the
cases above choose stacks without any (Auto Mode installs no device software; the Karpenter pools are
`none`-managed). The releases are judged apart, with stand-in charts (one ConfigMap, the chart's name and
version) served by a local OCI registry: one release as `DeviceSoftware` makes it, changed one input at a
time, and `DeviceSoftware` itself with every release of a stack's plan (the values, names, namespaces and
options the component sends are the plan's own), again unchanged and after day-2 changes.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import functools
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pulumi import automation as auto

from e2e import pulumi_cli
from e2e.controlplane import ControlPlane
from e2e.oci_registry import Registry
from e2e.pulumi_cli import PROJECT
from eks_devices import (
    ClaimTemplates,
    ClaimTemplatesArgs,
    DeviceSoftware,
    DeviceSoftwareArgs,
    NodePools,
    NodePoolsArgs,
    build,
    identity,
    parse,
)
from eks_devices.core.config import stack_file
from eks_devices.core.config.errors import ConfigError
from eks_devices.core.model import Plan
from eks_devices.offline import diff
from eks_devices.offline import engine as offline
from support import stacks

SIG, SECRET_SIG = pulumi.runtime.rpc._special_sig_key, pulumi.runtime.rpc._special_secret_sig
STEPS = {"create": "create", "update": "update", "replace": "replace", "create-replacement": "replace",
         "delete-replaced": "replace", "delete": "delete"}

def components(cfg: dict[str, Any], kubeconfig: pulumi.Input[str],
               under: Callable[[], pulumi.Resource | None] = lambda: None,
               name: str | None = None) -> Callable[[], None]:
    """The program: the stack's Kubernetes-layer components on an existing cluster, named `name` (the
    cluster's by default), under the component `under` makes (none by default)."""

    def program() -> None:
        plan = build(parse(cfg))
        assert not plan.releases, "this tier has no charts: choose stacks without device software"
        cluster = cfg["eks-devices:cluster"]["name"]
        base = name or cluster
        child = pulumi.ResourceOptions(parent=under())
        provider = k8s.Provider(f"{base}-k8s", kubeconfig=kubeconfig, enable_server_side_apply=True, opts=child)
        software = DeviceSoftware(base, DeviceSoftwareArgs(plan=plan, k8s_provider=provider), child)
        ClaimTemplates(base, ClaimTemplatesArgs(plan=plan, k8s_provider=provider, namespaces=software.namespaces,
                                                device_classes=software.device_classes, releases=software.releases),
                       child)
        if plan.pools:
            NodePools(base, NodePoolsArgs(
                plan=plan, cluster_name=cluster, k8s_provider=provider, node_role_name="nodes",
                node_role_arn="arn:aws:iam::111122223333:role/nodes", private_subnet_ids=["subnet-0000000a", "subnet-0000000b"],
                private_subnets_by_zone={"us-west-2a": "subnet-0000000a", "us-west-2b": "subnet-0000000b"},
                cluster_security_group_id="sg-0c", efa_security_group_id="sg-0e", discovery_tag=cluster,
                tagged_security_groups=True), child)

    return program


Program = Callable[[str], Callable[[], None]]  # a program, given the cluster's kubeconfig


def real_steps(plane: ControlPlane, env: dict[str, str], stack: str, before: Program, after: Program,
               state: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
               refresh: bool = False) -> dict[str, str]:
    """`up` with `before` (its state then rewritten by `state`, when given; then `refresh`ed, when asked),
    then the engine's planned step per URN for `after` (resources with a step only)."""
    kubeconfig = _kubeconfig_text(plane)
    ws = pulumi_cli.workspace(plane, env)
    s = auto.create_or_select_stack(stack_name=stack, project_name=PROJECT, program=before(kubeconfig), opts=ws)
    try:
        result = s.up(on_output=lambda _line: None)
        assert result.summary.result == "succeeded"
        if state is not None:
            exported = s.export_stack()
            s.import_stack(auto.Deployment(exported.version, state(dict(exported.deployment or {}))))
        if refresh:
            assert s.refresh(on_output=lambda _line: None).summary.result == "succeeded"
        s.workspace.program = after(kubeconfig)
        steps: dict[str, str] = {}

        def event(e: auto.EngineEvent) -> None:
            pre = e.resource_pre_event
            op = pre.metadata.op.name.lower().replace("_", "-") if pre is not None else ""
            if op not in STEPS:
                return
            urn = pre.metadata.urn
            if op == "delete-replaced" and urn not in steps:  # the old object goes before the new one exists
                steps[urn] = "replace (delete first)"
            elif urn not in steps:
                steps[urn] = STEPS[op]

        s.preview(on_event=event)
        return steps
    finally:
        s.destroy(on_output=lambda _line: None)
        s.workspace.remove_stack(stack)


def predicted_steps(stack: str, before: Program, after: Program) -> dict[str, str]:
    """What `diff` predicts for the same programs, from the mock engine's recordings."""
    old, new = (offline.run(program("{}"), {}, stack=stack, project=PROJECT) for program in (before, after))
    return {c.urn: c.action + (" (delete first)" if c.action == "replace" and c.delete_before_replace else "")
            for c in diff.compare(old, new) if c.type.startswith("kubernetes:")}


def _kubeconfig_text(plane: ControlPlane) -> str:
    return plane.kubeconfig.read_text()


def _relevant(steps: dict[str, str]) -> dict[str, str]:
    return {urn: op for urn, op in steps.items()
            if urn.split("::")[2].split("$")[-1].startswith("kubernetes:")}


AUTO = {"gpu": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"}},
        "big": {"instanceTypes": ["g6e.12xlarge"], "devices": {"nvidia": "dra", "efa": "none"}}}
CLAIM = {"one-gpu": {"pools": ["big"], "namespace": "ml", "gpus": {"count": 1}}}
KARPENTER = {"cpu-gpu": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "none"}}}


def auto_mode(pools: dict[str, Any], claims: dict[str, Any] | None = None, name: str = "e2e-auto") -> dict[str, Any]:
    return stacks.config("auto-mode", "1.36", pools, name=name, **({"claims": claims} if claims else {}))


def karpenter(pools: dict[str, Any], name: str = "e2e-karp", **sections: Any) -> dict[str, Any]:
    return stacks.config("karpenter", "1.36", pools, name=name, **sections)


def _renamed(pools: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    out = copy.deepcopy(pools)
    out[new] = {**out.pop(old), "renamedFrom": old}
    return out


CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "claim-spec-changes": (auto_mode(AUTO, CLAIM), auto_mode(AUTO, {"one-gpu": {**CLAIM["one-gpu"],
                                                                              "gpus": {"count": 2}}})),
    "claim-added": (auto_mode(AUTO), auto_mode(AUTO, CLAIM)),
    "claim-removed": (auto_mode(AUTO, CLAIM), auto_mode(AUTO)),
    "auto-pool-renamed-with-renamedFrom": (auto_mode(AUTO), auto_mode(_renamed(AUTO, "big", "large"))),
    "auto-pool-renamed-without-renamedFrom": (
        auto_mode(AUTO), auto_mode({"gpu": AUTO["gpu"], "large": AUTO["big"]})),
    "auto-manager-flips": (auto_mode(AUTO), auto_mode({**AUTO, "big": {**AUTO["big"],
                                                                      "devices": {"nvidia": "device-plugin", "efa": "none"}}})),
    "auto-instance-type-added": (auto_mode(AUTO), auto_mode({**AUTO, "big": {
        **AUTO["big"], "instanceTypes": ["g6e.12xlarge", "g6e.24xlarge"]}})),
    "karpenter-pool-renamed-with-renamedFrom": (karpenter(KARPENTER),
                                                karpenter(_renamed(KARPENTER, "cpu-gpu", "gpu-l40s"))),
    "karpenter-label-added": (karpenter(KARPENTER), karpenter({"cpu-gpu": {**KARPENTER["cpu-gpu"],
                                                                          "labels": {"team": "ml"}}})),
    "auto-pool-added": (auto_mode(AUTO), auto_mode({**AUTO, "g6": {"instanceTypes": ["g6.xlarge"],
                                                                   "devices": {"nvidia": "dra"}}})),
    "auto-pool-removed": (auto_mode(AUTO), auto_mode({"gpu": AUTO["gpu"]})),
    "claim-namespace-changes": (auto_mode(AUTO, CLAIM), auto_mode(AUTO, {"one-gpu": {**CLAIM["one-gpu"],
                                                                                   "namespace": "ml2"}})),
    "karpenter-limits-change": (karpenter(KARPENTER), karpenter({"cpu-gpu": {**KARPENTER["cpu-gpu"],
                                                                            "limits": {"cpu": 64}}})),
}


def test_cases_build_without_device_software() -> None:
    for name, (before, after) in CASES.items():
        for cfg in (before, after):
            plan = build(parse(cfg))
            assert not plan.errors and not plan.releases, name


@pytest.mark.parametrize("case", sorted(CASES))
def test_diff_predicts_the_engines_steps(control_plane: ControlPlane, pulumi_env: dict[str, str], case: str) -> None:
    before, after = (functools.partial(components, cfg) for cfg in CASES[case])
    stack = case[:40]
    predicted = predicted_steps(stack, before, after)
    real = _relevant(real_steps(control_plane, pulumi_env, stack, before, after))
    assert real, f"{case}: the engine planned no step at all (a change the test means to make)"
    assert predicted == real


def _spare_user(kubeconfig: str) -> str:
    """The kubeconfig with a second user nothing uses: its text changes, its active cluster does not."""
    config = json.loads(kubeconfig)
    config["users"].append({"name": "spare", "user": {"token": "unused"}})
    return json.dumps(config)


def _server_name(kubeconfig: str) -> str:
    """The kubeconfig's active cluster verified under another of the server's names: the same API server,
    but another cluster entry, which is what the provider's DiffConfig compares."""
    config = json.loads(kubeconfig)
    config["clusters"][0]["cluster"]["tls-server-name"] = "kubernetes"
    return json.dumps(config)


KUBECONFIG_CASES = {"kubeconfig-credentials-only": (_spare_user, "update"),
                    "kubeconfig-another-cluster": (_server_name, "replace")}
K8S_PROVIDER = "pulumi:providers:kubernetes"


def _kubernetes_steps(steps: dict[str, str]) -> dict[str, str]:
    return {urn: op for urn, op in steps.items()
            if (kind := urn.split("::")[2].split("$")[-1]).startswith("kubernetes:") or kind == K8S_PROVIDER}


@pytest.mark.parametrize("case", sorted(KUBECONFIG_CASES))
def test_diff_predicts_the_engines_steps_when_the_kubeconfig_changes(control_plane: ControlPlane,
                                                                     pulumi_env: dict[str, str], case: str) -> None:
    """A kubeconfig whose active cluster is unchanged updates the provider and nothing it manages; one whose
    active cluster entry changes replaces the provider, and the engine then replaces every object it manages
    (`providerChanged`): `diff` predicts both from the two programs' recordings."""
    edit, provider_step = KUBECONFIG_CASES[case]
    cfg = karpenter(KARPENTER, name="e2e-kube")

    def before(kubeconfig: str) -> Callable[[], None]:
        return components(cfg, kubeconfig)

    def after(kubeconfig: str) -> Callable[[], None]:
        return components(cfg, edit(kubeconfig))

    text = _kubeconfig_text(control_plane)
    old, new = (offline.run(program(text), {}, stack=case, project=PROJECT) for program in (before, after))
    predicted = {c.urn: c.action + (" (delete first)" if c.action == "replace" and c.delete_before_replace else "")
                 for c in diff.compare(old, new) if c.type.startswith("kubernetes:") or c.type == K8S_PROVIDER}
    real = _kubernetes_steps(real_steps(control_plane, pulumi_env, case, before, after))
    assert [op for urn, op in real.items() if K8S_PROVIDER in urn] == [provider_step]
    assert (len(real) > 1) == (provider_step == "replace"), real
    assert predicted == real


def anchored(cfg: dict[str, Any], anchor: str, delete_first: bool) -> Program:
    """`components` through a provider whose kubeconfig is computed from a namespace's `status`, an output a
    preview of the namespace's creation leaves out (pulumi-kubernetes strips it from the server's dry run):
    renaming the namespace replaces it, so in preview the kubeconfig is unknown, though its text is the same."""

    def make(kubeconfig: str) -> Callable[[], None]:
        def program() -> None:
            base = k8s.Provider("anchor-k8s", kubeconfig=kubeconfig, enable_server_side_apply=True)
            namespace = k8s.core.v1.Namespace("anchor", metadata={"name": anchor}, opts=pulumi.ResourceOptions(
                provider=base, delete_before_replace=delete_first))
            components(cfg, namespace.status.apply(lambda _: kubeconfig))()

        return program

    return make


@pytest.mark.parametrize("delete_first", [False, True], ids=["created-first", "deleted-first"])
def test_diff_predicts_the_engines_steps_when_a_replacement_makes_the_kubeconfig_unknown(
        control_plane: ControlPlane, pulumi_env: dict[str, str], delete_first: bool) -> None:
    """A resource replaced (the namespace) whose outputs the provider's kubeconfig is computed from: the
    engine plans the provider replaced (DiffConfig on an unknown kubeconfig) and every object it manages
    with it; behind a delete-first replacement, every one of them is deleted first (the engine's dependent
    replacements). `diff` predicts both from the recordings' propertyDependencies."""
    cfg = auto_mode(AUTO, CLAIM, name="e2e-anchor")  # NodePools, NodeClasses, DeviceClasses, a claim template
    before, after = anchored(cfg, "anchor-one", delete_first), anchored(cfg, "anchor-two", delete_first)
    stack = f"anchor-{'deleted' if delete_first else 'created'}-first"
    text = _kubeconfig_text(control_plane)
    old, new = (offline.run(program(text), {}, stack=stack, project=PROJECT) for program in (before, after))
    predicted = {c.urn: c.action + (" (delete first)" if c.action == "replace" and c.delete_before_replace else "")
                 for c in diff.compare(old, new) if c.type.startswith("kubernetes:") or c.type == K8S_PROVIDER}
    real = _kubernetes_steps(real_steps(control_plane, pulumi_env, stack, before, after))
    assert all(step.startswith("replace") for step in real.values()), real  # objects deleted first by their own option
    assert (set(real.values()) == {"replace (delete first)"}) == delete_first, real
    assert len(real) >= 8 and any(K8S_PROVIDER in urn for urn in real), real
    assert predicted == real


CHART_TEMPLATE = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-content
data:
  content: {{ .Values.content | quote }}
"""
RELEASE = {"name": "demo", "chart": "demo", "version": "0.1.0", "namespace": "default", "values": {"content": "a"}}
RELEASE_CASES = {  # what changes between the deployed release and the next program's, and the step expected
    "release-values-change": ({"values": {"content": "b"}}, "update"),
    "release-version-change": ({"version": "0.2.0"}, "update"),
    "release-chart-change": ({"chart": "other"}, "update"),
    "release-name-change": ({"name": "demo-two"}, "replace"),
    "release-namespace-change": ({"namespace": "kube-public"}, "replace"),
}


def release(registry_host: str, settings: dict[str, Any]) -> Program:
    """A program of one Helm release, as `DeviceSoftware` makes each: its chart from the local registry."""

    def make(kubeconfig: str) -> Callable[[], None]:
        def program() -> None:
            provider = k8s.Provider("cluster", kubeconfig=kubeconfig)
            k8s.helm.v3.Release("device-software", k8s.helm.v3.ReleaseArgs(
                name=settings["name"], chart=f"oci://{registry_host}/charts/{settings['chart']}",
                version=settings["version"], namespace=settings["namespace"], values=settings["values"],
                create_namespace=False), opts=pulumi.ResourceOptions(provider=provider))

        return program

    return make


@pytest.mark.parametrize("case", sorted(RELEASE_CASES))
def test_diff_predicts_the_providers_steps_for_a_helm_release(control_plane: ControlPlane, chart_env: dict[str, str],
                                                               registry: Registry, case: str) -> None:
    """The table's `kubernetes:helm.sh/v3:Release` entry against the real provider's Diff (its embedded Helm
    pulling charts from a local registry): a new name or namespace replaces the release; new values, a new
    version or another chart upgrade it in place."""
    for chart, version in (("demo", "0.1.0"), ("demo", "0.2.0"), ("other", "0.1.0")):
        registry.push_chart(f"charts/{chart}", chart, version, {"cm.yaml": CHART_TEMPLATE})
    change, expected = RELEASE_CASES[case]
    before, after = release(registry.host, RELEASE), release(registry.host, {**RELEASE, **change})
    predicted = predicted_steps(case, before, after)
    real = _relevant(real_steps(control_plane, chart_env, case, before, after))
    assert list(real.values()) == [expected], real
    assert predicted == real


def served_locally(plan: Plan, registry: Registry) -> Plan:
    """`plan` with each release's chart a stand-in of the same name and version in the local registry (one
    ConfigMap): the values, namespace, name and options the components send are the plan's own."""
    releases = {}
    for key, r in plan.releases.items():
        registry.push_chart(f"charts/{key}", key, r.version, {"cm.yaml": CHART_TEMPLATE})
        releases[key] = dataclasses.replace(r, chart=f"oci://{registry.host}/charts/{key}", repository="")
    return dataclasses.replace(plan, releases=releases)


def software(cfg: dict[str, Any], registry: Registry) -> Program:
    """The stack's device software (`DeviceSoftware`, with its Helm releases) and claims on an existing
    cluster, the charts served locally (`served_locally`)."""

    def make(kubeconfig: str) -> Callable[[], None]:
        def program() -> None:
            plan = served_locally(build(parse(cfg)), registry)
            assert plan.releases, "these cases are about releases: choose stacks with device software"
            base = cfg["eks-devices:cluster"]["name"]
            provider = k8s.Provider(f"{base}-k8s", kubeconfig=kubeconfig, enable_server_side_apply=True)
            built = DeviceSoftware(base, DeviceSoftwareArgs(plan=plan, k8s_provider=provider))
            ClaimTemplates(base, ClaimTemplatesArgs(plan=plan, k8s_provider=provider, namespaces=built.namespaces,
                                                    device_classes=built.device_classes, releases=built.releases))

        return program

    return make


SOFTWARE = {"gpu": {"instanceTypes": ["g6e.xlarge"], "devices": {"nvidia": "dra"}},
            "trn": {"instanceTypes": ["trn2.48xlarge"], "provisioning": "static", "replicas": 1,
                    "devices": {"neuron": "dra", "efa": "dra"}}}
# before, after, and whether the releases change: a pool joining a release changes none (releases select
# their nodes by label); a pool whose manager flips brings in another release, and new values update one
SOFTWARE_CASES: dict[str, tuple[dict[str, Any], dict[str, Any], bool]] = {
    "software-unchanged": (karpenter(SOFTWARE, name="e2e-soft"), karpenter(SOFTWARE, name="e2e-soft"), False),
    "software-manager-flips": (karpenter(SOFTWARE, name="e2e-soft"), karpenter(
        {**SOFTWARE, "gpu": {**SOFTWARE["gpu"], "devices": {"nvidia": "device-plugin"}}}, name="e2e-soft"), True),
    "software-helm-values-change": (karpenter(SOFTWARE, name="e2e-soft"), karpenter(
        SOFTWARE, name="e2e-soft", helmValues={"aws-dranet": {"resources": {"requests": {"cpu": "50m"}}}}), True),
    "software-pool-joins-a-release": (karpenter(SOFTWARE, name="e2e-soft"), karpenter(
        {**SOFTWARE, "g6": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dra"}}}, name="e2e-soft"), False),
}


def test_software_cases_build_with_device_software() -> None:
    for name, (before, after, _) in SOFTWARE_CASES.items():
        for cfg in (before, after):
            plan = build(parse(cfg))
            assert not plan.errors and plan.releases, name


@pytest.mark.parametrize("case", sorted(SOFTWARE_CASES))
def test_diff_predicts_the_engines_steps_for_device_software(control_plane: ControlPlane, chart_env: dict[str, str],
                                                             registry: Registry, case: str) -> None:
    """The device software's Helm releases as the real provider takes them: the same stack again is no
    step (nothing in a release's values moves from one run to the next, nulls included), a pool joining a
    release is none either, and a pool that flips its manager, or values of the stack's, change exactly what
    `diff` says."""
    old_cfg, new_cfg, changes = SOFTWARE_CASES[case]
    before, after = software(old_cfg, registry), software(new_cfg, registry)
    predicted = predicted_steps(case, before, after)
    real = _relevant(real_steps(control_plane, chart_env, case, before, after))
    assert bool(real) == changes, real
    assert predicted == real


@pytest.mark.parametrize("cfg", [auto_mode(AUTO, CLAIM, name="e2e-again"), karpenter(KARPENTER, name="e2e-again")],
                         ids=["auto-mode-with-a-claim", "karpenter"])
def test_the_second_up_of_an_unchanged_program_is_no_step(control_plane: ControlPlane, pulumi_env: dict[str, str],
                                                           cfg: dict[str, Any]) -> None:
    """Nothing the components send changes from one run to the next (no order, digest or default that
    moves), so the engine, the real provider and the API server plan nothing for a second `up`, and
    `diff` predicts the same."""
    program = functools.partial(components, cfg)
    stack = f"again-{cfg['eks-devices:cluster']['mode']}"
    assert predicted_steps(stack, program, program) == {}
    assert real_steps(control_plane, pulumi_env, stack, program, program) == {}


def _platform(cfg: dict[str, Any], aliases: str, team: bool) -> Program:
    """`components` as the shipped program has them: under one component named after the cluster
    (`aliases` "none", as before names stopped following the cluster's), or named `platform` with
    `identity.renamed` from the cluster's name ("renamed"), or with one alias on that component alone
    ("parent"); under a team's own component when `team`."""
    cluster = cfg["eks-devices:cluster"]["name"]
    name = cluster if aliases == "none" else "platform"

    def under() -> pulumi.Resource:
        outer = pulumi.ComponentResource("team:index:Outer", "team") if team else None
        opts = {"none": pulumi.ResourceOptions(), "renamed": identity.renamed(cluster, name),
                "parent": pulumi.ResourceOptions(aliases=[pulumi.Alias(name=cluster)])}[aliases]
        return pulumi.ComponentResource("e2e:index:Platform", name, None,
                                        pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(parent=outer)))

    return lambda kubeconfig: components(cfg, kubeconfig, under, name)


def _components_moved(old: str, new: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A state as an update leaves it when it stops after moving the components from the names
    starting with `old` to those starting with `new` and before their resources: the engine then
    finds each component by its URN, not by an alias, so it has no parent alias for the resources to
    inherit and only the aliases they state themselves can find them."""

    def rewrite(deployment: dict[str, Any]) -> dict[str, Any]:
        moves = {}
        for r in deployment["resources"]:
            stem, _, name = r["urn"].rpartition("::")
            if not r.get("custom") and (now := identity.moved(name, new, old)):
                moves[r["urn"]] = f"{stem}::{now}"
        assert moves and len(moves) < len(deployment["resources"])
        text = json.dumps(deployment)
        for was, now in moves.items():
            text = text.replace(json.dumps(was), json.dumps(now))
        return json.loads(text)

    return rewrite


@pytest.mark.parametrize(("aliases", "team", "interrupted"), [
    ("renamed", False, False), ("renamed", False, True), ("renamed", True, True), ("parent", False, False)],
    ids=["under-the-stack", "under-the-stack-interrupted", "under-a-team-component-interrupted", "parent-alias-only"])
def test_the_cluster_renamed_is_no_step_for_the_engine(control_plane: ControlPlane, pulumi_env: dict[str, str],
                                                       aliases: str, team: bool, interrupted: bool) -> None:
    """Every resource of a stack deployed before names stopped following the cluster's is found by its
    alias, so `pulumi up` plans nothing: the aliases `identity.renamed` states (URNs the engine is
    given whole, or `Alias(name=...)` under a component it cannot spell) are the ones the real engine
    matches, three components deep, and `diff` predicts the same. After an interrupted update
    (`_components_moved`) the resources' own aliases are all that finds them. With an alias on the
    renamed component alone, the engine infers its descendants' (the parent's old name in place of
    its new one in theirs), and so does the mock monitor."""
    cfg = karpenter(KARPENTER, name="e2e-named")
    before, after = _platform(cfg, "none", team), _platform(cfg, aliases, team)
    stack = f"{aliases}-{'team' if team else 'stack'}{'-interrupted' if interrupted else ''}"
    old, new = (offline.run(program("{}"), {}, stack=stack, project=PROJECT) for program in (before, after))
    assert {r.urn for r in old.resources if r.type.startswith("kubernetes:")}.isdisjoint(r.urn for r in new.resources)
    assert predicted_steps(stack, before, after) == {}
    moved = _components_moved("e2e-named", "platform") if interrupted else None
    assert real_steps(control_plane, pulumi_env, stack, before, after, moved) == {}


@pytest.mark.parametrize("team", [False, True], ids=["under-the-stack", "under-a-team-component"])
def test_the_mock_engine_spells_urns_as_the_engine(control_plane: ControlPlane, pulumi_env: dict[str, str],
                                                  team: bool) -> None:
    """Every URN `preview` and `diff` show is the one the engine gives the same resource: the
    components three and four deep (the stack's left out, every parent's type in), their Kubernetes
    objects and the provider, as `pulumi up` records them in the stack's state."""
    program = _platform(karpenter(KARPENTER, name="e2e-urns"), "renamed", team)
    stack = f"urns-{'team' if team else 'stack'}"
    offline_urns = {r.urn for r in offline.run(program("{}"), {}, stack=stack, project=PROJECT).resources}
    assert max(urn.split("::")[2].count("$") for urn in offline_urns) >= (3 if team else 2)
    assert set(deployed(control_plane, pulumi_env, stack, program)) == offline_urns


def deployed(plane: ControlPlane, env: dict[str, str], stack: str, program: Program) -> dict[str, dict[str, Any]]:
    """The resources `up` with `program` leaves in the stack's state, by URN, the stack's own left out
    (the programs pass their provider: the engine adds no default one)."""
    ws = pulumi_cli.workspace(plane, env)
    s = auto.create_or_select_stack(stack_name=stack, project_name=PROJECT, program=program(_kubeconfig_text(plane)),
                                    opts=ws)
    try:
        assert s.up(on_output=lambda _line: None).summary.result == "succeeded"
        state = s.export_stack().deployment or {}
        return {r["urn"]: r for r in state["resources"] if r["type"] != "pulumi:pulumi:Stack"}
    finally:
        s.destroy(on_output=lambda _line: None)
        s.workspace.remove_stack(stack)


def _as_recorded(r: offline.Registered) -> dict[str, Any]:
    """What a recording says of a resource, in the terms of the engine's state."""
    return {"type": r.type, "custom": r.custom, "parent": r.parent, "dependencies": sorted(r.depends_on),
            "propertyDependencies": {k: sorted(v) for k, v in r.property_dependencies.items()},
            "provider": r.provider.rsplit("::", 1)[0], "protect": r.protect, "replaceOnChanges": r.replace_on_changes,
            "inputs": r.inputs}


def _as_stated(r: dict[str, Any]) -> dict[str, Any]:
    """The same of a resource in the engine's state (empty and false fields are left out there; the
    provider reference's id is the engine's own; `__internal` is the engine's bookkeeping)."""
    return {"type": r["type"], "custom": r["custom"], "parent": r["parent"],
            "dependencies": sorted(r.get("dependencies", [])),
            "propertyDependencies": {k: sorted(v) for k, v in (r.get("propertyDependencies") or {}).items() if v},
            "provider": r.get("provider", "").rsplit("::", 1)[0],
            "protect": r.get("protect", False), "replaceOnChanges": r.get("replaceOnChanges", []),
            "inputs": {k: v for k, v in r.get("inputs", {}).items() if k != "__internal"}}


STATE_CASES: dict[str, Program] = {  # the program, and whether an input is computed from another resource
    "auto-mode-with-a-claim": functools.partial(components, auto_mode(AUTO, CLAIM, name="e2e-state")),
    "karpenter": functools.partial(components, karpenter(KARPENTER, name="e2e-state")),
    "kubeconfig-from-a-namespace": anchored(karpenter(KARPENTER, name="e2e-state"), "anchor", delete_first=False),
}


@pytest.mark.parametrize("case", sorted(STATE_CASES))
def test_what_preview_records_is_what_up_writes_to_the_state(control_plane: ControlPlane, pulumi_env: dict[str, str],
                                                             case: str) -> None:
    """Per resource, `preview --json` shows what the engine keeps after `up`: the type, the parent, what it
    waits for, its provider, protection, replace-on-change paths and the inputs the provider took; and the
    recording's property dependencies (which resources each input was computed from, what `diff` follows
    from a replaced resource) are the engine's."""
    program = STATE_CASES[case]
    stack = f"state-{case}"
    recorded = offline.run(program(_kubeconfig_text(control_plane)), {}, stack=stack, project=PROJECT).resources
    state = deployed(control_plane, pulumi_env, stack, program)
    assert {r.urn for r in recorded} == set(state)
    assert any(r.depends_on for r in recorded) and any(r.replace_on_changes for r in recorded)
    assert any(r.property_dependencies for r in recorded) == (case == "kubeconfig-from-a-namespace")
    for r in recorded:
        assert _as_recorded(r) == _as_stated(state[r.urn]), r.urn


def _team_components(duplicate: bool) -> Callable[[], None]:
    """Components only (no provider): a `Leaf` under a `Middle` under each of two outer components of
    different types; with `duplicate`, a second `Leaf` of the same name under the first `Middle` too."""

    def program() -> None:
        for kind in ("A", "B"):
            outer = pulumi.ComponentResource(f"team:index:{kind}", kind.lower())
            middle = pulumi.ComponentResource("team:index:Middle", f"middle-{kind}", None,
                                              pulumi.ResourceOptions(parent=outer))
            for _ in range(2 if duplicate and kind == "A" else 1):
                pulumi.ComponentResource("team:index:Leaf", "leaf", None, pulumi.ResourceOptions(parent=middle))

    return program


def test_resources_told_apart_by_a_grandparents_type_are_two_for_both_engines(control_plane: ControlPlane,
                                                                              pulumi_env: dict[str, str]) -> None:
    program = _team_components(duplicate=False)
    offline_urns = {r.urn for r in offline.run(program, {}, stack="urns-apart", project=PROJECT).resources}
    assert len([u for u in offline_urns if u.endswith("::leaf")]) == 2
    assert set(deployed(control_plane, pulumi_env, "urns-apart", lambda _kubeconfig: program)) == offline_urns


def test_a_urn_registered_twice_fails_both_engines_with_one_message(control_plane: ControlPlane,
                                                                    pulumi_env: dict[str, str]) -> None:
    program = _team_components(duplicate=True)
    with pytest.raises(offline.DuplicateURN) as offline_failure:
        offline.run(program, {}, stack="urns-twice", project=PROJECT)
    s = auto.create_or_select_stack(stack_name="urns-twice", project_name=PROJECT, program=program,
                                    opts=pulumi_cli.workspace(control_plane, pulumi_env))
    try:
        with pytest.raises(auto.CommandError) as real_failure:
            s.up(on_output=lambda _line: None)
        assert str(offline_failure.value) in str(real_failure.value)
    finally:
        s.destroy(on_output=lambda _line: None)
        s.workspace.remove_stack("urns-twice")


PROJECT_CONFIG = ("config:\n  team: ml\n  size:\n    type: integer\n    default: 3\n  owner:\n    default: platform\n"
                  "  aws:region:\n    value: us-east-2\n  kubernetes:context: admin\n")


def _config_project(folder: Path, declared: str, stack: str = "") -> str:
    """A project folder whose Pulumi.yaml declares `declared` and whose stack `conf` sets `owner` (and
    the lines `stack`)."""
    (folder / "Pulumi.yaml").write_text(f"name: {PROJECT}\nruntime: python\n{declared}")
    (folder / "Pulumi.conf.yaml").write_text(f"config:\n  {PROJECT}:owner: ml-team\n{stack}")
    return str(folder)


def _echo_config() -> None:
    """Export every configuration value the program is given."""
    for key, value in sorted(pulumi.runtime.config.CONFIG.get().items()):
        pulumi.export(key, value)


@pytest.mark.parametrize("required", [False, True], ids=["defaults-and-values", "a-key-no-stack-sets"])
def test_pulumi_yaml_config_is_merged_as_the_pulumi_cli_merges_it(control_plane: ControlPlane,
                                                                  pulumi_env: dict[str, str], tmp_path: Path,
                                                                  required: bool) -> None:
    """The configuration a program gets from the real CLI for a stack of a project whose Pulumi.yaml
    declares `config:` is the one `stack_file.with_project_config` makes; a key of the project's own
    that nothing sets is refused by both, by name."""
    folder = _config_project(tmp_path, PROJECT_CONFIG + ("  quota:\n    type: integer\n" if required else ""))
    ws = pulumi_cli.workspace(control_plane, pulumi_env, folder)
    s = auto.create_or_select_stack(stack_name="conf", project_name=PROJECT, program=_echo_config, opts=ws)
    stack_config = stack_file.read_config(tmp_path / "Pulumi.conf.yaml")
    try:
        if required:
            with pytest.raises(ConfigError) as ours:
                stack_file.with_project_config(stack_config, tmp_path, "conf")
            with pytest.raises(auto.CommandError) as real:
                s.up(on_output=lambda _line: None)
            assert [p.path for p in ours.value.problems] == [f"{PROJECT}:quota"]
            assert "missing configuration value 'quota'" in str(real.value)
        else:
            real_config = {k: v.value for k, v in s.up(on_output=lambda _line: None).outputs.items()}
            merged = stack_file.with_project_config(stack_config, tmp_path, "conf")
            assert real_config == offline.config_strings(merged)
            assert real_config[f"{PROJECT}:size"] == "3" and real_config[f"{PROJECT}:owner"] == "ml-team"
    finally:
        s.destroy(on_output=lambda _line: None)
        s.workspace.remove_stack("conf")


@pytest.mark.parametrize(("declared", "stack", "refusal"), [
    ("  size:\n    type: integer\n", "  {project}:size: many\n", "must be of type 'integer'"),
    ("  flags:\n    type: array\n    items:\n      type: boolean\n", "  {project}:flags: [true, maybe]\n",
     "must be of type 'array<boolean>'"),
    ("  token:\n    type: string\n    secret: true\n", "  {project}:token: plain\n",
     "must be encrypted as it's secret"),
], ids=["scalar", "array", "secret-in-plain-text"])
def test_a_stack_value_pulumi_yaml_declares_otherwise_is_refused_by_both(
        control_plane: ControlPlane, pulumi_env: dict[str, str], tmp_path: Path, declared: str, stack: str,
        refusal: str) -> None:
    """A value of another type than Pulumi.yaml declares, or a plain one it declares secret: the real
    CLI runs no program, and `stack_file.with_project_config` names the key."""
    folder = _config_project(tmp_path, "config:\n" + declared, stack.format(project=PROJECT))
    ws = pulumi_cli.workspace(control_plane, pulumi_env, folder)
    stack_config = stack_file.read_config(tmp_path / "Pulumi.conf.yaml")  # removing the stack removes the file
    s = auto.create_or_select_stack(stack_name="conf", project_name=PROJECT, program=_echo_config, opts=ws)
    try:
        with pytest.raises(auto.CommandError) as real:
            s.up(on_output=lambda _line: None)
        assert refusal in str(real.value)
    finally:
        s.workspace.remove_stack("conf", force=True)
    with pytest.raises(ConfigError) as ours:
        stack_file.with_project_config(stack_config, tmp_path, "conf")
    assert [p.path for p in ours.value.problems] == [f"{PROJECT}:{declared.split(':')[0].strip()}"]


def _echo_secret_keys() -> None:
    """Export which configuration keys the program is told are secrets, and what one of them reads."""
    config = pulumi.runtime.config.CONFIG.get()
    pulumi.export("secret", sorted(k for k in config if pulumi.runtime.is_config_secret(k)))
    pulumi.export("plain", sorted(k for k in config if not pulumi.runtime.is_config_secret(k)))


def test_the_secret_config_keys_are_the_ones_the_pulumi_cli_makes_secrets(control_plane: ControlPlane,
                                                                          pulumi_env: dict[str, str],
                                                                          tmp_path: Path) -> None:
    """Values set with `pulumi config set --secret` (whole, or one inside an object by path) make their
    keys secrets for the real CLI's program and for the offline one alike (`engine.secret_config`)."""
    folder = _config_project(tmp_path, "")
    ws = pulumi_cli.workspace(control_plane, pulumi_env, folder)
    s = auto.create_or_select_stack(stack_name="conf", project_name=PROJECT, program=_echo_secret_keys, opts=ws)
    try:
        s.set_config(f"{PROJECT}:token", auto.ConfigValue("t0ken", secret=True))
        s.set_config(f"{PROJECT}:nested.a[0]", auto.ConfigValue("inner", secret=True), path=True)
        s.set_config(f"{PROJECT}:nested.b", auto.ConfigValue("plain"), path=True)
        stack_config = stack_file.read_config(tmp_path / "Pulumi.conf.yaml")
        assert {"secure"} == set(stack_config[f"{PROJECT}:token"])  # encrypted in the stack file
        real = {k: v.value for k, v in s.up(on_output=lambda _line: None).outputs.items()}
        recorded = offline.run(_echo_secret_keys, stack_config, stack="conf", project=PROJECT).exports
        assert real == recorded
        assert real["secret"] == [f"{PROJECT}:nested", f"{PROJECT}:token"]
    finally:
        s.destroy(on_output=lambda _line: None)
        s.workspace.remove_stack("conf")


def _secret_objects(kubeconfig: str) -> Callable[[], None]:
    """Kubernetes objects holding secrets: a Secret (its `data` a secret by the provider's schema; not
    `stringData`, which the provider's check turns into `data`), a ConfigMap whose `data` output the
    program asks to be secret (`additional_secret_outputs`), and a ConfigMap with one value the program
    made secret, one it took from the Secret and one from the other ConfigMap."""

    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig=kubeconfig, enable_server_side_apply=True)
        opts = pulumi.ResourceOptions(provider=provider)
        secret = k8s.core.v1.Secret("creds", metadata={"name": "creds", "namespace": "default"},
                                    data={"token": base64.b64encode(b"hunter2").decode()}, opts=opts)
        shared = k8s.core.v1.ConfigMap("shared", metadata={"name": "shared", "namespace": "default"},
                                       data={"endpoint": "https://example.com"}, opts=pulumi.ResourceOptions(
                                           provider=provider, additional_secret_outputs=["data"]))
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings", "namespace": "default"},
                              data={"plain": "a", "made": pulumi.Output.secret("b"),
                                    "taken": secret.data.apply(lambda d: (d or {}).get("token", "")),
                                    "marked": shared.data.apply(lambda d: (d or {}).get("endpoint", ""))},
                              opts=opts)

    return program


def test_preview_shows_the_secret_inputs_the_engine_shows_as_secret(control_plane: ControlPlane,
                                                                    pulumi_env: dict[str, str]) -> None:
    """Where the engine's preview shows `[secret]` in a resource's inputs, `preview --json` does, and
    nowhere else: made secret by the program, by the provider's schema, or taken from a secret output
    (one the provider makes secret, or one the program names in `additional_secret_outputs`)."""
    from eks_devices.offline.preview import resources_data

    kubeconfig = _kubeconfig_text(control_plane)
    s = auto.create_or_select_stack(stack_name="secrets", project_name=PROJECT, program=_secret_objects(kubeconfig),
                                    opts=pulumi_cli.workspace(control_plane, pulumi_env))
    real: dict[str, dict[str, Any]] = {}

    def event(e: auto.EngineEvent) -> None:
        pre = e.resource_pre_event
        if pre is not None and pre.metadata.new is not None and pre.metadata.type.startswith("kubernetes:core"):
            real[pre.metadata.urn] = dict(pre.metadata.new.inputs)

    try:
        s.preview(on_event=event)
    finally:
        s.workspace.remove_stack("secrets")
    shown = {d["urn"]: d["inputs"] for d in resources_data(offline.run(_secret_objects(kubeconfig), {},
                                                                       stack="secrets", project=PROJECT))}
    assert set(real) == {u for u in shown if "kubernetes:core" in u} and len(real) == 3
    for urn, inputs in real.items():
        assert _secret_places(inputs) == _secret_places(shown[urn]), urn
    assert any(_secret_places(inputs) for inputs in real.values())


def _secret_places(value: Any, path: str = "") -> set[str]:
    """Where a value reads `[secret]`, or is a secret as the engine's events carry one (`ciphertext`
    `[secret]` under the secret signature)."""
    if isinstance(value, dict) and value.get(SIG) == SECRET_SIG:
        return {path}
    if isinstance(value, dict):
        return {p for k, v in value.items() for p in _secret_places(v, f"{path}.{k}")}
    if isinstance(value, list):
        return {p for i, v in enumerate(value) for p in _secret_places(v, f"{path}[{i}]")}
    return {path} if value == offline.SECRET else set()


def test_the_engine_is_real(control_plane: ControlPlane, pulumi_env: dict[str, str]) -> None:
    """The CLI and the provider are the ones built from Go modules, not anything on PATH."""
    done = subprocess.run([str(control_plane.bin_dir / "pulumi"), "plugin", "ls"], env={**os.environ, **pulumi_env},
                          capture_output=True, text=True, check=True)
    assert "kubernetes" in done.stdout and pulumi_cli.provider_version() in done.stdout
    version = subprocess.run([str(control_plane.bin_dir / "pulumi"), "version"], capture_output=True, text=True,
                             check=True).stdout.strip()
    assert version.startswith("v3.") and tuple(map(int, version[1:].split(".")[:2])) >= (3, 272)
