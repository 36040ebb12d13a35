"""The pulumi-eks contract: `eks:` inputs are recorded as the engine sends them (output values on),
every shipped stack and a spread of generated ones pass pulumi-eks's types and construct-time rules
and leave pulumi-eks to create only what the toolkit means it to, and each check fires on input built
to break it."""

from __future__ import annotations

import copy
import inspect
import re
from typing import Any

import pulumi
import pulumi_eks as eks
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pulumi.runtime.proto import resource_pb2

from eks_devices.offline import output_values
from support import eks_contract as contract
from support import eks_types, engine, stacks

SIG, OUTPUT, SECRET = output_values.SIG, output_values.OUTPUT, output_values.SECRET
CLUSTER = "eks:index:Cluster"
OFFICE = "203.0.113.0/24"
BROUGHT = {"vpcId": "vpc-00000123", "privateSubnetIds": ["subnet-000000a1", "subnet-000000a2", "subnet-000000a3"],
           "publicSubnetIds": ["subnet-000000b1"]}


def cluster_wire(rec: engine.Recording) -> dict[str, Any]:
    """The one `eks:index:Cluster`'s inputs as sent."""
    (cluster,) = rec.of_type(CLUSTER)
    return rec.sent[cluster.urn]


def output(value: Any) -> dict[str, Any]:
    return {SIG: OUTPUT, "value": value, "dependencies": ["urn:pulumi:test::eks-devices::aws:iam/role:Role::r"]}


@pytest.fixture(scope="module")
def auto() -> engine.Recording:
    return engine.main(stacks.config("auto-mode"))


@pytest.fixture(scope="module")
def karpenter() -> engine.Recording:
    return engine.main(stacks.config("karpenter"))


# --- what is recorded ----------------------------------------------------------------------------------------


def test_remote_component_inputs_are_recorded_with_output_values(auto: engine.Recording) -> None:
    """As the real engine receives them: `autoMode` is a plain object (so pulumi-eks reads `enabled`
    and `createNodeRole: false`), the node role's ARN inside it an output value depending on the role."""
    wire = cluster_wire(auto)
    assert SIG not in wire["autoMode"] and wire["autoMode"]["createNodeRole"] is False
    arn = wire["autoMode"]["computeConfig"]["nodeRoleArn"]
    assert arn[SIG] == OUTPUT and arn["value"].startswith("arn:aws:iam::")
    role = engine.one(r for r in auto.of_type("aws:iam/role:Role") if r.name == "platform-auto-node")
    assert arn["dependencies"] == [role.urn]
    assert wire["vpcId"][SIG] == OUTPUT and wire["skipDefaultNodeGroup"] is True


def test_mocks_and_preview_still_see_plain_inputs(auto: engine.Recording) -> None:
    """The mocks (and `preview --json`, which prints `inputs`) get the values, as before."""
    (cluster,) = auto.of_type(CLUSTER)
    assert cluster.inputs["autoMode"]["computeConfig"]["nodeRoleArn"].startswith("arn:aws:iam::")
    assert cluster.inputs["vpcId"] == cluster_wire(auto)["vpcId"]["value"]
    assert cluster.outputs["autoModeNodeRoleName"] == ""


def test_the_mocks_get_each_output_value_as_an_engine_without_them_would() -> None:
    """Its value; a secret stays a secret; no value is unknown; nested ones too. Other registrations
    (never sent output values) pass through untouched."""

    wire = {"a": output("x"), "b": {"c": [{SIG: OUTPUT, "secret": True, "value": 1}]}, "d": {SIG: OUTPUT}, "e": 2}
    request = resource_pb2.RegisterResourceRequest(type=CLUSTER, name="c", remote=True)
    json_format.ParseDict(wire, request.object)
    assert output_values.sent(output_values.for_mocks(request).object) == {
        "a": "x", "b": {"c": [{SIG: SECRET, "value": 1}]}, "d": output_values.UNKNOWN, "e": 2}
    assert output_values.sent(request.object) == wire  # the original is left as sent
    custom = resource_pb2.RegisterResourceRequest(type="aws:iam/role:Role", name="r", custom=True)
    assert output_values.for_mocks(custom) is custom


# --- the toolkit keeps the contract ---------------------------------------------------------------------------


# the shipped stacks cover each mode with a created VPC and generated key (dev and staging with the
# public endpoint, prod private only); these add a brought VPC, the public endpoint alone, a brought
# key, an AWS profile, no control-plane logs and tags in every mode (and Auto Mode's general-purpose pool)
VARIANTS = {f"{mode}-brought-public-kms-profile": stacks.config(
    mode, pools={}, network=BROUGHT, cluster={
        "endpoint": {"privateAccess": False, "publicAccessCidrs": [OFFICE]},
        "kmsKeyArn": "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab", "logging": [], "tags": {"team": "ml"},
        **({"autoMode": {"generalPurposePool": True}} if mode == "auto-mode" else {})},
    overrides={"aws:profile": "ml-prod"}) for mode in stacks.VERSIONS}


def assert_keeps_contract(rec: engine.Recording, mode: str) -> None:
    """Every `eks:` resource passes the checks, and pulumi-eks creates only what the toolkit leaves to it."""
    eks_resources = [r for r in rec.resources if r.type.startswith("eks:")]
    assert [r.type for r in eks_resources] == [CLUSTER]
    for r in eks_resources:
        wire = rec.sent[r.urn]
        assert [str(p) for p in contract.check(r.type, wire)] == []
        assert contract.effects(contract.as_constructed(wire)) == contract.LEFT_TO_PULUMI_EKS[mode]


@pytest.mark.parametrize("stack", stacks.SHIPPED)
def test_shipped_stacks_keep_the_pulumi_eks_contract(stack: str) -> None:
    cfg = stacks.shipped(stack)
    assert_keeps_contract(engine.main(cfg, stack=stack), cfg["eks-devices:cluster"]["mode"])


def test_the_own_program_example_keeps_the_pulumi_eks_contract() -> None:
    """docs/reuse.md's example of a platform team's own program (a Platform in karpenter mode)."""
    rec = engine.main(stacks.example_config("own-program"), path=stacks.ROOT / "examples" / "own-program" / "__main__.py", stack="research",
                      project="research-gpus")
    assert_keeps_contract(rec, "karpenter")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_generated_stacks_keep_the_pulumi_eks_contract(variant: str) -> None:
    rec = engine.main(VARIANTS[variant])
    assert_keeps_contract(rec, variant.removesuffix("-brought-public-kms-profile"))
    wire = cluster_wire(rec)  # the variant reached the inputs it is about
    assert wire["publicAccessCidrs"] == [OFFICE] and wire["endpointPublicAccess"] is True
    assert wire["endpointPrivateAccess"] is False
    constructed = contract.as_constructed(wire)
    assert contract.resolved(constructed.get("subnetIds")) == BROUGHT["privateSubnetIds"]
    assert wire["providerCredentialOpts"] == {"profileName": "ml-prod"}
    assert wire["enabledClusterLogTypes"] == [] and wire["tags"] == {"team": "ml"}
    if variant.startswith("auto-mode"):
        assert wire["autoMode"]["computeConfig"]["nodePools"] == ["system", "general-purpose"]
    assert contract.resolved(constructed.get("encryptionConfigKeyArn")) == "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def test_default_stacks_keep_the_pulumi_eks_contract(auto: engine.Recording, karpenter: engine.Recording) -> None:
    assert_keeps_contract(auto, "auto-mode")
    assert_keeps_contract(karpenter, "karpenter")


def test_a_plain_only_input_sent_as_an_output_is_caught_end_to_end() -> None:
    """Run through the recorder: `autoMode` as an Output is what made pulumi-eks create a node role."""

    def program() -> None:
        auto_mode = pulumi.Output.from_input(eks.AutoModeOptionsArgs(enabled=True, create_node_role=False))
        eks.Cluster("c", auto_mode=auto_mode, authentication_mode=eks.AuthenticationMode.API,
                    skip_default_node_group=True, create_instance_role=False)

    wire = cluster_wire(engine.run(program, stacks.config("auto-mode")))
    problems = contract.check(CLUSTER, wire)
    assert [p.path for p in problems] == ["Cluster.autoMode"]
    assert "plain-only" in problems[0].message and "an Output" in problems[0].message
    assert "auto-mode-node-role" in contract.effects(contract.as_constructed(wire))


# --- each check fires ----------------------------------------------------------------------------------------


def broken(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """`base` with top-level inputs replaced (None removes one)."""
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


TYPE_CASES = {
    "unknown input": ({"skipDefaultNodegroup": True}, "Cluster.skipDefaultNodegroup", "not an input of"),
    "plain-only as Output": ({"createInstanceRole": output(False)}, "Cluster.createInstanceRole", "plain-only"),
    "plain-only as secret": ({"skipDefaultNodeGroup": {SIG: SECRET, "value": True}}, "Cluster.skipDefaultNodeGroup",
                             "a secret"),
    "not a boolean": ({"skipDefaultNodeGroup": "yes"}, "Cluster.skipDefaultNodeGroup", "not a boolean"),
    "enum": ({"authenticationMode": "IAM"}, "Cluster.authenticationMode",
             "accepted: CONFIG_MAP, API, API_AND_CONFIG_MAP"),
    "nested list": ({"autoMode": {"enabled": True, "createNodeRole": False, "computeConfig": {"nodePools": "system"}}},
                    "Cluster.autoMode.computeConfig.nodePools", "not a list"),
    "nested required": ({"autoMode": {"createNodeRole": False}}, "Cluster.autoMode.enabled", "required"),
    "nested unknown": ({"corednsAddonOptions": {"enable": False}}, "Cluster.corednsAddonOptions.enable",
                       "not an input of pulumi_eks.CoreDnsAddonOptionsArgs"),
    "list items": ({"enabledClusterLogTypes": ["api", 3]}, "Cluster.enabledClusterLogTypes[1]", "not a string"),
}


@pytest.mark.parametrize("case", sorted(TYPE_CASES))
def test_each_type_check_fires(case: str, karpenter: engine.Recording) -> None:
    changes, path, words = TYPE_CASES[case]
    problems = contract.check(CLUSTER, broken(cluster_wire(karpenter), **changes))
    assert [p.path for p in problems if p.path == path] == [path], [str(p) for p in problems]
    assert words in str(next(p for p in problems if p.path == path))


RULE_CASES = {
    "authenticationMode.ts:25-39": {"roleMappings": [{"roleArn": "arn:aws:iam::1:role/x", "username": "x",
                                                      "groups": ["g"]}]},
    "authenticationMode.ts:41-54": {"authenticationMode": "CONFIG_MAP", "accessEntries": {"x": {
        "principalArn": "arn:aws:iam::1:role/x"}}},
    "cluster.ts:426-430": {"authenticationMode": "API_AND_CONFIG_MAP",
                           "instanceRole": {SIG: output_values.RESOURCE, "urn": "urn:r"},
                           "instanceRoles": [{SIG: output_values.RESOURCE, "urn": "urn:s"}]},
    "cluster.ts:432-436": {"privateSubnetIds": ["subnet-0000000e"]},
    "cluster.ts:438-456": {"nodeGroupOptions": {"minSize": 1}, "instanceType": "m7i.large"},
    "cluster.ts:458-463": {"authenticationMode": None},
    "cluster.ts:708-716": {"endpointPublicAccess": False, "publicAccessCidrs": []},
    "cluster.ts:2273-2278": {"creationRoleProvider": {"role": {SIG: output_values.RESOURCE, "urn": "urn:r"},
                                                      "provider": {SIG: output_values.RESOURCE, "urn": "urn:p"}}},
}


@pytest.mark.parametrize("where", sorted(RULE_CASES))
def test_each_pulumi_eks_rule_fires(where: str, auto: engine.Recording) -> None:
    base = cluster_wire(auto)
    assert not [p for p in contract.check(CLUSTER, base) if p.source.endswith(where)]
    problems = contract.check(CLUSTER, broken(base, **RULE_CASES[where]))
    assert [p.source for p in problems if p.source.endswith(where)] == [f"{contract.SOURCE}/{where}"], problems


EFFECT_CASES = {
    "auto-mode-node-role": ("auto", {"autoMode": {"enabled": True}}),
    "auto-mode-node-role ": ("auto", {"autoMode": output({"enabled": True, "createNodeRole": False})}),
    "default-node-group": ("karpenter", {"skipDefaultNodeGroup": None}),
    "default-instance-role": ("karpenter", {"skipDefaultNodeGroup": False, "createInstanceRole": None}),
    "coredns-addon": ("auto", {"corednsAddonOptions": None}),
    "default-security-groups": ("karpenter", {"skipDefaultSecurityGroups": None}),
    "kube-proxy-addon": ("auto", {"kubeProxyAddonOptions": {"enabled": True}}),
    "vpc-cni-addon": ("auto", {"useDefaultVpcCni": False}),
}


@pytest.mark.parametrize("effect", sorted(EFFECT_CASES))
def test_what_pulumi_eks_creates_on_its_own(effect: str, auto: engine.Recording, karpenter: engine.Recording) -> None:
    mode, changes = EFFECT_CASES[effect]
    base = cluster_wire(auto if mode == "auto" else karpenter)
    assert effect.strip() not in contract.effects(contract.as_constructed(base))
    assert effect.strip() in contract.effects(contract.as_constructed(broken(base, **changes)))


def test_the_sdk_types_are_read_from_the_installed_pulumi_eks() -> None:
    props = eks_types.properties(eks.ClusterArgs)
    assert not props["autoMode"].shape.output_ok and props["autoMode"].shape.args is eks.AutoModeOptionsArgs
    assert props["subnetIds"].shape.output_ok and props["subnetIds"].shape.item.kind == "str"
    assert props["authenticationMode"].shape.values == ("CONFIG_MAP", "API", "API_AND_CONFIG_MAP")
    assert eks_types.properties(eks.AutoModeOptionsArgs)["enabled"].required
    assert eks_types.args_class("eks:index:Nope") is None
    assert contract.check("eks:index:Nope", {})[0].path == "eks:index:Nope"


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from([*sorted(eks_types.properties(eks.ClusterArgs)), "extra"]), value=JSON,
       wrap=st.sampled_from(["plain", "output", "secret"]))
def test_the_checker_reports_and_never_raises(karpenter: engine.Recording, key: str, value: Any, wrap: str) -> None:
    """Any value at any input: violations naming their paths, never an exception; an unknown input and
    a plain-only input sent as an Output or secret are always among them."""
    sent = {"plain": value, "output": output(value), "secret": {SIG: SECRET, "value": value}}[wrap]
    wire = {**cluster_wire(karpenter), key: sent}  # a null stays, as the engine would send it
    paths = [p.path for p in contract.check(CLUSTER, wire)]
    assert all(path.startswith("Cluster.") for path in paths)
    props = eks_types.properties(eks.ClusterArgs)
    if key not in props or (wrap != "plain" and not props[key].shape.output_ok):
        assert f"Cluster.{key}" in paths
    contract.effects(contract.as_constructed(wire))


def test_every_rule_and_effect_has_a_case_above() -> None:
    """A rule or effect added to the checker without a case that makes it fire fails here."""
    rules = set(re.findall(r'"((?:cluster|authenticationMode)\.ts:[\d-]+)"', inspect.getsource(contract.cluster_rules)))
    effects = set(re.findall(r'out\.add\("([a-z-]+)"\)', inspect.getsource(contract.effects)))
    assert len(rules) == 8 and rules == set(RULE_CASES)
    assert len(effects) == 7 and effects == {e.strip() for e in EFFECT_CASES}


def _broken() -> None:
    """A program that hands pulumi-eks `autoMode` as an Output: pulumi-eks reads every field of it as truthy."""
    auto_mode = pulumi.Output.from_input(eks.AutoModeOptionsArgs(enabled=True, create_node_role=False))
    eks.Cluster("c", auto_mode=auto_mode, authentication_mode=eks.AuthenticationMode.API,
                skip_default_node_group=True, create_instance_role=False)


def test_a_broken_input_and_what_pulumi_eks_would_then_create_are_reported() -> None:
    data = contract.contract_data(engine.run(_broken, stacks.config("auto-mode")), "auto-mode")
    found = [(v["path"], v["message"].split(",")[0]) for v in data["violations"]]
    assert found == [("Cluster.autoMode", "plain-only in pulumi_eks (AutoModeOptionsArgs) but sent as an Output;"
                                          " pulumi-eks then reads an Output"),
                     ("Cluster", "pulumi-eks would create its own auto-mode-node-role"),
                     ("Cluster", "pulumi-eks would create its own coredns-addon")]
    assert all(v["urn"] == data["checked"][0] and v["type"] == CLUSTER and v["source"] for v in data["violations"])


def test_what_pulumi_eks_would_not_create_is_reported() -> None:
    """Outside Auto Mode the toolkit leaves the VPC CNI and kube-proxy add-ons to pulumi-eks."""
    data = contract.contract_data(engine.run(_broken, stacks.config("auto-mode")), "karpenter")
    missing = [v["message"] for v in data["violations"] if "would not create" in v["message"]]
    assert missing == [f"pulumi-eks would not create the {e} the toolkit leaves to it with cluster.mode karpenter"
                       for e in ("kube-proxy-addon", "vpc-cni-addon")]
