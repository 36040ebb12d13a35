"""The components as a platform team reuses them: the public surface, each component alone on a
cluster the team already runs, and input errors raised before any resource is registered."""

from __future__ import annotations

import copy
import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

import eks_devices
from eks_devices import (
    ClaimTemplates,
    ClaimTemplatesArgs,
    ClusterDevices,
    ClusterDevicesArgs,
    DeviceSoftware,
    DeviceSoftwareArgs,
    Network,
    NetworkArgs,
    NodePools,
    NodePoolsArgs,
    Platform,
    PlatformArgs,
    build,
    parse,
)
from support import engine, stacks
from support.cli import fresh

ROOT = stacks.ROOT
EXISTING = ROOT / "examples" / "existing-cluster"
# An Auto Mode stack whose Neuron pool asks for DRA, which Auto Mode does not offer: one error finding.
ERROR_STACK: dict[str, Any] = {
    "aws:region": "us-west-2",
    "eks-devices:cluster": {"name": "ml", "version": "1.36", "mode": "auto-mode"},
    "eks-devices:nodePools": {"trn": {"instanceTypes": ["trn1.32xlarge"], "devices": {"neuron": "dra"}},
                              "gpu": {"instanceTypes": ["g6e.xlarge"]}},
}


def refused(program: Callable[[], None], config: dict[str, Any] | None = None) -> tuple[
        pulumi.InputPropertiesError, engine.Recording]:
    """Run `program` under the mock engine; it must raise InputPropertiesError."""
    recording, exc = engine.raising(program, config or {}, pulumi.InputPropertiesError)
    assert isinstance(exc, pulumi.InputPropertiesError)
    return exc, recording


def paths(exc: pulumi.InputPropertiesError) -> list[str]:
    return [e["property_path"] for e in exc.errors or []]


def test_public_surface_is_explicit_and_importable() -> None:
    assert "Platform" in eks_devices.__all__ and "PlatformArgs" in eks_devices.__all__
    for name in eks_devices.__all__:
        assert getattr(eks_devices, name) is not None, name
    with pytest.raises(AttributeError):
        _ = eks_devices.NoSuchThing  # type: ignore[attr-defined]


def test_a_program_with_its_own_components_package_imports_both(tmp_path: Path) -> None:
    (tmp_path / "components").mkdir()
    (tmp_path / "components" / "__init__.py").write_text("TEAM = 'ours'\n")
    script = ("import components\nfrom eks_devices import Platform, PlatformArgs\n"
              "print(components.TEAM, Platform.__module__, PlatformArgs.__name__)")
    assert fresh(script, cwd=tmp_path).stdout.split() == ["ours", "eks_devices.platform", "PlatformArgs"]


# --- each component alone, on a cluster the team already runs ----------------------------------

def existing_cluster_config(example: Path = EXISTING, **overrides: Any) -> dict[str, Any]:
    config = yaml.safe_load((example / "Pulumi.example.yaml").read_text())["config"]
    return {**config, "existing:kubeconfig": "{}", **{f"existing:{k}": v for k, v in overrides.items()}}


def run_example(example: Path, **overrides: Any) -> engine.Recording:
    return engine.run(lambda: runpy.run_path(str(example / "__main__.py")), existing_cluster_config(example, **overrides),
                      stack="example", project=example.name)


CREATED_BY_PLATFORM = ("aws:ec2/vpc", "aws:ec2/subnet", "aws:eks/cluster", "eks:index:", "aws:ec2/natGateway",
                       "aws:kms", "aws:sqs", "eks-devices:index:Karpenter", "aws:iam/role:Role")


def test_existing_cluster_example_adds_pools_software_and_claims_and_nothing_else() -> None:
    recording = engine.run(lambda: runpy.run_path(str(EXISTING / "__main__.py")), existing_cluster_config(),
                            stack="example", project="existing-cluster-gpus")
    counts = recording.counts()
    assert counts["aws:eks/nodeGroup:NodeGroup"] == 2
    assert counts["kubernetes:helm.sh/v3:Release"] == 3  # NVIDIA DRA driver, NVIDIA plugin, EFA manager
    assert counts["kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"] == 1
    assert not {t for t in counts if t.startswith(CREATED_BY_PLATFORM)}
    groups = recording.of_type("aws:eks/nodeGroup:NodeGroup")
    assert {g.inputs["clusterName"] for g in groups} == {"platform-prod"}
    assert {g.inputs["nodeRoleArn"] for g in groups} == {"arn:aws:iam::123456789012:role/platform-prod-nodes"}
    assert recording.exports["claims"]["two-gpus"]["nodeSelector"] == {"eks-devices.io/device-manager-nvidia": "dra"}


KARPENTER_EXAMPLE = ROOT / "examples" / "existing-karpenter"
AUTO_MODE_EXAMPLE = ROOT / "examples" / "existing-auto-mode"


def test_existing_karpenter_example_adds_nodepools_and_drivers_but_no_karpenter() -> None:
    recording = run_example(KARPENTER_EXAMPLE)
    counts = recording.counts()
    assert not {t for t in counts if t.startswith(CREATED_BY_PLATFORM)}
    assert counts["kubernetes:karpenter.sh/v1:NodePool"] == 2
    releases = {r.inputs["name"] for r in recording.of_type("kubernetes:helm.sh/v3:Release")}
    assert releases >= {"nvidia-dra-driver", "aws-dranet", "nvidia-device-plugin"} and "karpenter" not in releases
    assert recording.exports["claims"]["gpu-and-efa"]["nodeSelector"] == {
        "eks-devices.io/device-manager-nvidia": "dra", "eks-devices.io/device-manager-efa": "dra"}


@pytest.mark.parametrize(("version", "settings", "paths_"), [
    ("1.15.0", {}, ["cluster.karpenter.settings.enableDRA"]),  # enableDRA off: Karpenter never launches for the claims
    ("1.15.0", {"awsFeatureGates": {"draNVIDIAGPU": True}},
     ["cluster.karpenter.settings.awsFeatureGates.draEFA"]),  # no EFA gate: the one to add beside the other
    ("1.14.2", {"enableDRA": True}, ["cluster.karpenter.version"]),  # no DRA provisioning before 1.15
])
def test_existing_karpenter_that_cannot_serve_the_dra_pools_is_refused_with_the_upgrade_advice(
        version: str, settings: dict[str, Any], paths_: list[str]) -> None:
    def program() -> None:
        ClusterDevices("research", ClusterDevicesArgs(
            cluster={"name": "research", "version": "1.35", "mode": "karpenter",
                     "karpenter": {"version": version, "settings": settings}},
            node_pools={"h100": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra", "efa": "dra"}}},
            k8s_provider=None, node_role_name="n", node_role_arn="arn:n",  # type: ignore[arg-type]
            private_subnet_ids=[], private_subnets_by_zone={}, cluster_security_group_id="sg-0c"))

    exc, recording = refused(program)
    assert recording.resources == []
    assert paths(exc) == paths_
    reason = (exc.errors or [])[0]["reason"]
    assert "--reset-then-reuse-values" in reason and "Helm 3.14" in reason and "--reuse-values keeps" in reason


def test_existing_auto_mode_example_adds_nodepools_and_device_classes_and_no_device_software() -> None:
    recording = run_example(AUTO_MODE_EXAMPLE)
    counts = recording.counts()
    assert not {t for t in counts if t.startswith(CREATED_BY_PLATFORM)}
    assert counts["kubernetes:karpenter.sh/v1:NodePool"] == 2
    assert "kubernetes:helm.sh/v3:Release" not in counts
    assert "gpu.nvidia.com" in {c.inputs["metadata"]["name"] for c in recording.of_type(
        "kubernetes:resource.k8s.io/v1:DeviceClass")}  # Auto Mode's classes are the toolkit's to create


def test_an_existing_cluster_states_what_it_runs_and_nothing_the_toolkit_would_create() -> None:
    def program() -> None:
        ClusterDevices("x", ClusterDevicesArgs(
            cluster={"name": "ml", "version": "1.35", "mode": "karpenter", "logging": ["api"]},
            node_pools={"h100": {"instanceTypes": ["p5.48xlarge"]}}, helm_values={"karpenter": {}},
            k8s_provider=None, node_role_name="n", node_role_arn="arn:n",  # type: ignore[arg-type]
            private_subnet_ids=[], private_subnets_by_zone={}, cluster_security_group_id="sg-0c"))

    exc, recording = refused(program)
    assert recording.resources == []
    assert sorted(paths(exc)) == ["cluster.karpenter.settings", "cluster.karpenter.version", "cluster.logging",
                                  "helmValues.karpenter"]


def test_cluster_devices_refuses_what_its_pools_lack_before_registering_itself() -> None:
    """An EFA pool without the EFA security group and Karpenter pools without a provider are the
    ClusterDevices' input problems, all at once, before it registers (not NodePools' after it has)."""
    def program() -> None:
        ClusterDevices("research", ClusterDevicesArgs(
            cluster={"name": "research", "version": "1.35", "mode": "karpenter",
                     "karpenter": {"version": "1.15.0", "settings": {"enableDRA": True}}},
            node_pools={"h100": {"instanceTypes": ["p5.48xlarge"]}},
            k8s_provider=None, node_role_name="n", node_role_arn="arn:n",  # type: ignore[arg-type]
            private_subnet_ids=[], private_subnets_by_zone={}, cluster_security_group_id="sg-0c"))

    exc, recording = refused(program)
    assert recording.resources == []
    assert str(exc).startswith("ClusterDevices: 2 input problem(s)")
    assert sorted(paths(exc)) == ["k8sProvider", "nodePools.h100.efa"]


def test_a_node_group_pinned_to_a_zone_without_a_given_subnet_is_refused_before_registering() -> None:
    """Not a ValueError inside the SDK at the node group's registration, after the others registered."""
    def program() -> None:
        ClusterDevices("prod", ClusterDevicesArgs(
            cluster={"name": "prod", "version": "1.35", "mode": "managed-node-groups"},
            node_pools={"l4": {"instanceTypes": ["g6.xlarge"], "replicas": 1, "availabilityZone": "us-west-2c"},
                        "a10g": {"instanceTypes": ["g5.2xlarge"], "replicas": 1, "availabilityZone": "us-west-2a"}},
            k8s_provider=None, node_role_name="n", node_role_arn="arn:n",  # type: ignore[arg-type]
            private_subnet_ids=["subnet-0a", "subnet-0b"],
            private_subnets_by_zone={"us-west-2a": "subnet-0a", "us-west-2b": "subnet-0b"},
            cluster_security_group_id="sg-0c", efa_security_group_id="sg-0e"))

    exc, recording = refused(program)
    assert recording.resources == []
    assert paths(exc) == ["nodePools.l4.availabilityZone", "k8sProvider"]
    assert (exc.errors or [])[0]["reason"].startswith(
        "given 'us-west-2c'; accepted: a zone of the privateSubnetsByZone given (us-west-2a, us-west-2b)")


@pytest.mark.parametrize(("provider", "given"), [(None, "given None"), ('{"apiVersion": "v1"}', "given a str")])
def test_cluster_devices_needs_a_kubernetes_provider_in_every_mode(provider: Any, given: str) -> None:
    """Node groups need none, but the device software and claims do: without one the releases would go to
    whatever cluster the ambient kubeconfig names; a kubeconfig given instead is refused at its path too."""
    def program() -> None:
        ClusterDevices("prod", ClusterDevicesArgs(
            cluster={"name": "prod", "version": "1.35", "mode": "managed-node-groups"},
            node_pools={"l4": {"instanceTypes": ["g6.xlarge"], "replicas": 1}},
            k8s_provider=provider, node_role_name="n", node_role_arn="arn:n",
            private_subnet_ids=["subnet-0a"], private_subnets_by_zone={"us-west-2a": "subnet-0a"},
            cluster_security_group_id="sg-0c"))

    exc, recording = refused(program)
    assert recording.resources == []
    assert paths(exc) == ["k8sProvider"] and (exc.errors or [])[0]["reason"].startswith(given)
    assert "pulumi_kubernetes.Provider(name, kubeconfig=...)" in (exc.errors or [])[0]["reason"]


def test_cluster_devices_given_a_mapping_for_its_args_names_the_args_class() -> None:
    exc, recording = refused(lambda: ClusterDevices("prod", {"cluster": {"name": "prod"}}))  # type: ignore[arg-type]
    assert recording.resources == []
    assert paths(exc) == ["args"] and "ClusterDevicesArgs(" in (exc.errors or [])[0]["reason"]


def test_cluster_devices_from_a_plan_with_error_findings_registers_nothing() -> None:
    plan = build(parse({**ERROR_STACK, "eks-devices:cluster": {**ERROR_STACK["eks-devices:cluster"], "existing": True}}))
    assert plan.errors
    args = ClusterDevicesArgs(cluster={}, k8s_provider=None, node_role_name="n", node_role_arn="arn:n",  # type: ignore[arg-type]
                              private_subnet_ids=[], private_subnets_by_zone={}, cluster_security_group_id="sg-0c",
                              efa_security_group_id="sg-0e")
    exc, recording = refused(lambda: ClusterDevices.from_plan("ml", plan, args), ERROR_STACK)
    assert recording.resources == []
    assert paths(exc)[:len(plan.errors)] == [f.path for f in plan.errors] and "k8sProvider" in paths(exc)


def test_platform_refuses_an_existing_cluster_and_names_cluster_devices() -> None:
    args = PlatformArgs(cluster={"name": "ml", "version": "1.36", "mode": "managed-node-groups", "existing": True})
    exc, recording = refused(lambda: Platform("ml", args))
    assert recording.resources == [] and paths(exc) == ["cluster.existing"]
    assert "eks_devices.ClusterDevices" in (exc.errors or [])[0]["reason"]


def test_karpenter_settings_are_stated_only_for_an_existing_cluster() -> None:
    stack = copy.deepcopy(ERROR_STACK)
    stack["eks-devices:cluster"] = {"name": "ml", "version": "1.36", "mode": "karpenter",
                                    "karpenter": {"settings": {"enableDRA": True}}}
    with pytest.raises(eks_devices.ConfigError) as caught:
        parse(stack)
    assert [p.path for p in caught.value.problems] == ["cluster.karpenter.settings"]


# --- input errors before any registration ------------------------------------------------------

def test_platform_from_a_plan_with_error_findings_registers_nothing() -> None:
    plan = build(parse(ERROR_STACK))
    assert plan.errors
    exc, recording = refused(lambda: Platform.from_plan("ml", plan), ERROR_STACK)
    assert recording.resources == []
    assert paths(exc) == [f.path for f in plan.errors]
    assert all(f.slug in e["reason"] for f, e in zip(plan.errors, exc.errors or [], strict=True))


def test_platform_args_with_error_findings_register_nothing() -> None:
    args = PlatformArgs(region="us-west-2", cluster=ERROR_STACK["eks-devices:cluster"],
                        node_pools=ERROR_STACK["eks-devices:nodePools"])
    exc, recording = refused(lambda: Platform("ml", args))
    assert recording.resources == []
    assert "nodePools.trn.devices.neuron" in paths(exc)


@pytest.mark.parametrize("name", ["", "  ", None])
def test_a_platform_without_a_name_is_an_input_error(name: Any) -> None:
    args = PlatformArgs(region="us-west-2", cluster={"name": "ml", "version": "1.36", "mode": "karpenter"})
    exc, recording = refused(lambda: Platform(name, args))
    assert recording.resources == [] and paths(exc) == ["name"]
    exc, _ = refused(lambda: Platform.from_plan(name, build(parse(ERROR_STACK))), ERROR_STACK)
    assert paths(exc) == ["name"]


KARPENTER_STACK: dict[str, Any] = {**ERROR_STACK, "eks-devices:cluster": {"name": "ml", "version": "1.36",
                                                                          "mode": "karpenter"},
                                   "eks-devices:nodePools": {"gpu": {"instanceTypes": ["g6e.xlarge"]}}}


def component_named(component: str, name: Any) -> Callable[[], None]:
    """A program building `component` alone, named `name`, with arguments it accepts otherwise."""
    plan = build(parse(KARPENTER_STACK))
    assert not plan.errors and plan.karpenter is not None

    def program() -> None:
        if component == "Network":
            Network(name, NetworkArgs(cluster_name="ml", config={"availabilityZones": ["us-west-2a", "us-west-2b"]}))
        elif component == "Cluster":
            eks_devices.Cluster(name, eks_devices.ClusterArgs(plan=plan, network=None))  # type: ignore[arg-type]
        elif component == "Karpenter":
            eks_devices.Karpenter(name, eks_devices.KarpenterArgs(
                plan=plan.karpenter, cluster_name="ml", physical_cluster_name="ml", region="us-west-2",
                k8s_provider=None))  # type: ignore[arg-type]
        elif component == "NodePools":
            NodePools(name, NodePoolsArgs(
                plan=plan, cluster_name="ml", k8s_provider=None, node_role_name="n", node_role_arn="arn:n",
                private_subnet_ids=[], private_subnets_by_zone={}, cluster_security_group_id="sg-0c",
                discovery_tag="ml", efa_security_group_id="sg-0e"))
        elif component == "DeviceSoftware":
            DeviceSoftware(name, DeviceSoftwareArgs(plan=plan, k8s_provider=None))
        elif component == "ClaimTemplates":
            ClaimTemplates(name, ClaimTemplatesArgs(plan=plan, k8s_provider=None))
        else:
            ClusterDevices(name, ClusterDevicesArgs(
                cluster={"name": "ml", "version": "1.35", "mode": "managed-node-groups"},
                node_pools={"gpu": {"instanceTypes": ["g6e.xlarge"], "replicas": 1}},
                k8s_provider=None, node_role_name="n", node_role_arn="arn:n",  # type: ignore[arg-type]
                private_subnet_ids=[], private_subnets_by_zone={}, cluster_security_group_id="sg-0c",
                efa_security_group_id="sg-0e"))

    return program


@pytest.mark.parametrize("component", ["Network", "Cluster", "Karpenter", "NodePools", "DeviceSoftware",
                                       "ClaimTemplates", "ClusterDevices"])
@pytest.mark.parametrize("name", ["", None])
def test_each_component_without_a_name_is_an_input_error_not_the_sdks_type_error(component: str, name: Any) -> None:
    exc, recording = refused(component_named(component, name), KARPENTER_STACK)
    assert recording.resources == []
    assert str(exc).startswith(f"{component}: ") and "name" in paths(exc)


def test_platform_args_config_problems_are_all_reported_at_their_property_paths() -> None:
    args = PlatformArgs(region="moon-1", cluster={"name": "ml", "version": "1.36", "mode": "sideways"},
                        node_pools={"gpu": {"instanceTypes": ["p9.huge"]}}, network={"cidr": "10.0.0.0/8"})
    exc, recording = refused(lambda: Platform("ml", args))
    assert recording.resources == []
    found = paths(exc)
    assert "cluster.mode" in found and "network.cidr" in found
    assert len(found) >= 3 and all(not p.startswith("eks-devices:") for p in found)


def test_platform_args_refuse_unknown_keys_and_outputs() -> None:
    def program() -> None:
        Platform("ml", {"cluster": pulumi.Output.from_input({"name": "ml"}), "nodePools": {}})  # type: ignore[typeddict-item]

    exc, recording = refused(program)
    assert recording.resources == []
    assert sorted(paths(exc)) == ["cluster", "nodePools"]  # an Output is refused once, not also as missing


def test_an_unknown_argument_is_reported_with_the_problems_of_the_others_and_the_nearest_argument() -> None:
    """A misspelt argument does not hide the problems of the rest: every problem comes at once."""
    args = {"cluster": {"name": "ml", "version": "1.36", "mode": "karpentr"},
            "node_pools": {"gpu": {"instanceType": ["p5.48xlarge"]}}, "nodepools": {}}
    exc, recording = refused(lambda: Platform("ml", args))  # type: ignore[arg-type]
    assert recording.resources == []
    assert sorted(paths(exc)) == ["cluster.mode", "nodePools.gpu.instanceType", "nodePools.gpu.instanceTypes",
                                  "nodepools"]
    reason = next(e["reason"] for e in exc.errors or [] if e["property_path"] == "nodepools")
    assert reason.startswith("unknown argument; accepted: did you mean 'node_pools'?")


@pytest.mark.parametrize("component", ["NodePools", "DeviceSoftware", "ClaimTemplates"])
def test_a_component_alone_refuses_a_plan_with_error_findings(component: str) -> None:
    plan = build(parse(ERROR_STACK))

    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        if component == "NodePools":
            NodePools("pools", NodePoolsArgs(
                plan=plan, cluster_name="ml", k8s_provider=provider, node_role_name="ml-node",
                node_role_arn="arn:aws:iam::123456789012:role/ml-node", private_subnet_ids=["subnet-0000000a"],
                private_subnets_by_zone={"us-west-2a": "subnet-0000000a"}, cluster_security_group_id="sg-0c",
                discovery_tag="ml"))
        elif component == "DeviceSoftware":
            DeviceSoftware("devices", DeviceSoftwareArgs(plan=plan, k8s_provider=provider))
        else:
            ClaimTemplates("claims", ClaimTemplatesArgs(plan=plan, k8s_provider=provider))

    exc, recording = refused(program, ERROR_STACK)
    assert [r.type for r in recording.resources] == ["pulumi:providers:kubernetes"]  # the test's own provider
    assert paths(exc)[:len(plan.errors)] == [f.path for f in plan.errors]  # findings first, then the inputs


def test_node_pools_alone_need_the_inputs_their_pools_use() -> None:
    config = copy.deepcopy(ERROR_STACK)
    config["eks-devices:cluster"]["mode"] = "karpenter"
    config["eks-devices:nodePools"] = {"p5": {"instanceTypes": ["p5.48xlarge"], "subnets": "private"},
                                       "web": {"instanceTypes": ["g6e.xlarge"], "subnets": "public"}}
    plan = build(parse(config))
    assert not plan.errors
    exc, recording = refused(lambda: NodePools("pools", NodePoolsArgs(
        plan=plan, cluster_name="ml", k8s_provider=None, node_role_name="n", node_role_arn="arn:n",
        private_subnet_ids=[], private_subnets_by_zone={}, cluster_security_group_id="sg-0c", discovery_tag="ml")))
    assert recording.resources == []
    assert sorted(paths(exc)) == ["k8sProvider", "nodePools.p5.efa", "nodePools.web.subnets"]


def test_network_alone_reports_bad_settings_at_their_paths() -> None:
    exc, recording = refused(lambda: Network("net", NetworkArgs(
        cluster_name="", config={"cidr": "10.0.0.0/8", "natGateways": "some", "zones": 3})))
    assert recording.resources == []
    assert sorted(paths(exc)) == ["clusterName", "config.cidr", "config.natGateways", "config.zones"]


def test_pulumi_component_analyzer_reads_platform_args_as_the_stack_configuration() -> None:
    """The multi-language host infers its schema from PlatformArgs: one property per stack section,
    named as the stack file names it, only `cluster` required, each with its description."""
    from pulumi.provider.experimental.analyzer import Analyzer

    from eks_devices.core.config.stack import Spec

    inputs, _ = Analyzer("eks-devices").analyze_type(PlatformArgs, is_component_output=False)
    sections = {f.alias for name, f in Spec.model_fields.items() if name not in ("region", "aws_profile")}
    assert set(inputs) == sections | {"region", "profile"}
    assert [k for k, v in inputs.items() if not v.optional] == ["cluster"]
    assert all(v.description for v in inputs.values())


def test_a_platform_plans_for_the_aws_providers_region_and_refuses_another() -> None:
    """PlatformArgs without a region are planned for `aws:region`, where the AWS provider deploys (not for
    the configuration's default, us-west-2); a region that differs from it is refused at `region` with the
    provider's, before anything registers."""
    args: dict[str, Any] = {"cluster": {"name": "ml", "version": "1.36", "mode": "karpenter"},
                            "node_pools": {"l40s": {"instanceTypes": ["g6e.xlarge"]}}}
    built: list[Platform] = []
    recording = engine.run(lambda: built.append(Platform("ml", args)), {"aws:region": "us-east-2"})  # type: ignore[arg-type]
    assert built[0].plan.spec.region == "us-east-2"
    zones = {r.inputs.get("availabilityZone") for r in recording.resources if r.type == "aws:ec2/subnet:Subnet"}
    assert zones and all(str(zone).startswith("us-east-2") for zone in zones)
    exc, refused_run = refused(lambda: Platform("ml", {**args, "region": "us-west-2"}),  # type: ignore[arg-type]
                               {"aws:region": "us-east-2"})
    assert refused_run.resources == [] and paths(exc) == ["region"]
    assert (exc.errors or [{}])[0]["reason"].startswith("given 'us-west-2'; accepted: 'us-east-2', the AWS provider's")


def test_problems_in_every_section_are_reported_at_once_and_one_entry_per_path() -> None:
    """A shape problem in one pool, a check across fields in another section and two problems at one path:
    every one reported, the two at one path in one entry, and nothing registered."""
    args = PlatformArgs(cluster={"name": "ml", "version": "1.36", "mode": "karpenter"},
                        node_pools={"a": {"instanceTypes": ["g6.xlarge"], "capacity": "huge"},
                                    "b": {"instanceTypes": ["g6.xlarge"], "provisioning": "static",
                                          "labels": {"eks-devices.io/x": "bad value!"}}},
                        chart_versions={"nvidia-dra-driver": "latest"})
    exc, recording = refused(lambda: Platform("ml", args))
    assert recording.resources == []
    assert paths(exc) == ["nodePools.a.capacity", "nodePools.b.replicas", "nodePools.b.labels.eks-devices.io/x",
                          "chartVersions.nvidia-dra-driver"]
    reason = (exc.errors or [])[2]["reason"]
    assert "a label the toolkit does not set itself" in reason and "a Kubernetes label value" in reason


def test_an_output_inside_a_section_is_named_at_its_path() -> None:
    def program() -> None:
        Platform("ml", PlatformArgs(cluster={"name": pulumi.Output.from_input("ml"), "version": "1.36",
                                             "mode": "karpenter"}))

    exc, recording = refused(program)
    assert recording.resources == [] and paths(exc) == ["cluster.name"]
    assert (exc.errors or [])[0]["reason"].startswith("given an Output; accepted: a plain value")


def test_a_stack_files_key_given_to_platform_args_names_the_argument() -> None:
    def program() -> None:
        Platform("ml", {"cluster": {"name": "ml", "version": "1.36", "mode": "karpenter"},  # type: ignore[typeddict-unknown-key]
                        "nodePools": {}})

    exc, recording = refused(program)
    assert recording.resources == [] and paths(exc) == ["nodePools"]
    assert "did you mean 'node_pools'?" in (exc.errors or [])[0]["reason"]


def cluster_devices_args(**changes: Any) -> ClusterDevicesArgs:
    fields: dict[str, Any] = dict(cluster={"name": "ml", "version": "1.36", "mode": "auto-mode"}, k8s_provider=None,
                                  node_role_name="n", node_role_arn="arn:n", private_subnet_ids=[],
                                  private_subnets_by_zone={}, cluster_security_group_id="sg-0c")
    return ClusterDevicesArgs(**{**fields, **changes})


@pytest.mark.parametrize(("name", "args", "path"), [
    ("", cluster_devices_args(), "name"),
    (None, cluster_devices_args(), "name"),
    ("ml", {"cluster": {"name": "ml", "version": "1.36", "mode": "auto-mode"}}, "args"),
])
def test_cluster_devices_refuses_a_bad_name_or_args_before_registering(name: Any, args: Any, path: str) -> None:
    exc, recording = refused(lambda: ClusterDevices(name, args))
    assert recording.resources == [] and paths(exc) == [path]



@pytest.mark.parametrize("component", ["DeviceSoftware", "ClaimTemplates"])
def test_device_software_and_claims_alone_need_a_kubernetes_provider(component: str) -> None:
    """Without a provider, Pulumi's default one would apply the releases and claims to whatever cluster the
    ambient kubeconfig names: refused at k8sProvider before anything registers."""
    plan = build(parse(KARPENTER_STACK))

    def program() -> None:
        if component == "DeviceSoftware":
            DeviceSoftware("devices", DeviceSoftwareArgs(plan=plan, k8s_provider=None))  # type: ignore[arg-type]
        else:
            ClaimTemplates("claims", ClaimTemplatesArgs(plan=plan, k8s_provider=None))  # type: ignore[arg-type]

    exc, recording = refused(program, KARPENTER_STACK)
    assert recording.resources == [] and paths(exc) == ["k8sProvider"]
    assert (exc.errors or [{}])[0]["reason"].startswith("given None; accepted: the cluster's Kubernetes provider")
