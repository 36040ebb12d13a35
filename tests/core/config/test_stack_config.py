"""Stack configuration: valid stacks parse; bad input reports every problem with path, given, accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from eks_devices.core.config import stack as spec_module
from eks_devices.core.config import stack_file
from eks_devices.core.config.stack import ConfigError, parse
from support import stacks


def problems(cfg: dict) -> dict[str, spec_module.ConfigProblem]:
    with pytest.raises(ConfigError) as info:
        parse(cfg)
    return {p.path: p for p in info.value.problems}


def test_defaults_and_camel_case_keys() -> None:
    s = stacks.spec(pools={"gpu": {"instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}}})
    pool = s.node_pools["gpu"]
    assert pool.efa.align_with == "gpu"
    assert pool.devices.nvidia == "auto"
    assert pool.capacity == "on-demand"
    assert s.provisioning(pool) == "dynamic"
    assert s.network.nat_gateways == "one-per-az"
    assert s.cluster.endpoint.public_access_cidrs == []  # public endpoint off by default
    assert set(s.cluster.logging) == set(spec_module.LOG_TYPES)


def test_spec_is_immutable() -> None:
    s = stacks.spec()
    with pytest.raises(Exception, match="frozen"):
        s.cluster.name = "other"  # type: ignore[misc]


def test_managed_node_groups_default_to_static() -> None:
    s = stacks.spec("managed-node-groups", pools={"a": {"instanceTypes": ["g6e.2xlarge"], "replicas": 1}})
    assert s.provisioning(s.node_pools["a"]) == "static"


def test_every_problem_reported_at_once() -> None:
    cfg = stacks.config(pools={
        "a": {"instanceTypes": ["p5.48xlarg"], "devices": {"nvidia": "yes"}, "bogus": 1},
        "b": {"instanceTypes": []},
    })
    cfg["eks-devices:cluster"]["version"] = 1.3
    cfg["eks-devices:cluster"]["mode"] = "fargate"
    cfg["eks-devices:nope"] = {}
    found = problems(cfg)
    assert set(found) == {
        "eks-devices:nope", "cluster.version", "cluster.mode", "nodePools.a.instanceTypes.0",
        "nodePools.a.devices.nvidia", "nodePools.a.bogus", "nodePools.b.instanceTypes",
    }
    assert "p5.48xlarge" in found["nodePools.a.instanceTypes.0"].accepted  # did-you-mean
    assert found["nodePools.a.devices.nvidia"].given == "'yes'"
    assert "'dra', 'device-plugin', 'none', 'auto' or 'inferred'" in found["nodePools.a.devices.nvidia"].accepted
    assert "quoted" in found["cluster.version"].accepted
    assert found["nodePools.a.bogus"].given == "unknown key 'bogus'"


def test_an_unknown_key_is_answered_with_the_keys_of_its_section() -> None:
    """Not every key of the configuration: the ones the section it sits in takes. A pool named like a
    pool's own key (`efa`) is a name, not that key."""
    cfg = stacks.config(pools={"efa": {"instanceTypes": ["p5.48xlarge"], "efa": {"enabled": True},
                                       "gpuSharing": {"mig": "1g.10gb"}}},
                        cluster={"karpenter": {"verison": "1.15.0"}})
    found = problems(cfg)
    assert found["nodePools.efa.efa.enabled"].accepted == "the keys of this section: alignWith, networkInterfaces"
    assert found["nodePools.efa.gpuSharing.mig"].accepted.endswith(
        "claimName, claimNamespace, profile, replicas, strategy")
    assert found["cluster.karpenter.verison"].accepted == (
        "did you mean 'version'? the keys of this section: reuseValues, settings, version")


@pytest.mark.parametrize(("version", "ok"), [("1.36", True), ("1.3x", False), ("latest", False), ("136", False)])
def test_kubernetes_version_must_be_a_minor(version: str, ok: bool) -> None:
    cfg = stacks.config(version=version)
    if ok:
        assert parse(cfg).cluster.kubernetes == (1, 36)
    else:
        assert "cluster.version" in problems(cfg)


def test_karpenter_version_must_be_semver() -> None:
    found = problems(stacks.config(cluster={"karpenter": {"version": "one.fifteen"}}))
    assert "cluster.karpenter.version" in found


def test_wrong_shapes_say_what_shape_is_accepted() -> None:
    cfg = stacks.config(pools={"p": {"instanceTypes": "p5.48xlarge", "labels": ["a"]}})
    cfg["eks-devices:cluster"] = "ml"
    found = problems(cfg)
    # a section names its keys, the required ones first; a free-form mapping names none
    assert found["cluster"].accepted == ("a mapping of keys to values (keys: name, version, mode, endpoint, logging, "
                                         "logRetentionDays, ...)")
    assert found["nodePools.p.instanceTypes"].accepted == "a list (in brackets: [a, b])"
    assert found["nodePools.p.labels"].accepted == "a mapping of keys to values"


def test_taint_keys_and_values_are_kubernetes_shaped() -> None:
    found = problems(stacks.config(pools={"p": {"instanceTypes": ["g6.xlarge"], "taints": [
        {"key": "bad key", "effect": "NoSchedule"}, {"key": "ok", "value": "no spaces!", "effect": "NoSchedule"}]}}))
    assert {"nodePools.p.taints.0.key", "nodePools.p.taints.1.value"} <= set(found)
    s = stacks.spec(pools={"p": {"instanceTypes": ["g6.xlarge"],
                                     "taints": [{"key": "dedicated", "value": "", "effect": "NoSchedule"}]}})
    assert s.node_pools["p"].taints[0].value is None  # empty means absent, as Kubernetes reads it


def test_missing_cluster_section() -> None:
    assert set(problems({"aws:region": "us-west-2"})) == {"eks-devices:cluster"}


def test_missing_required_fields() -> None:
    found = problems({"eks-devices:cluster": {"name": "x"}})
    assert {"cluster.version", "cluster.mode"} <= set(found)
    assert found["cluster.mode"].given == "nothing"


@pytest.mark.parametrize(("pool", "path"), [
    ({"instanceTypes": ["p5.48xlarge"], "provisioning": "static"}, "nodePools.p.replicas"),
    ({"instanceTypes": ["p5.48xlarge"], "replicas": 2}, "nodePools.p.replicas"),
    ({"instanceTypes": ["p5.48xlarge"], "capacity": "capacity-block"}, "nodePools.p.capacityReservationIds"),
    ({"instanceTypes": ["p5.48xlarge"], "capacityReservationIds": ["cr-0123456789abcdef0"]},
     "nodePools.p.capacityReservationIds"),
    ({"instanceTypes": ["p5.48xlarge"], "capacity": "reserved", "capacityReservationIds": ["r-1"]},
     "nodePools.p.capacityReservationIds.0"),
    ({"instanceTypes": ["p5.48xlarge"], "gpuSharing": {"strategy": "time-slicing"}}, "nodePools.p.gpuSharing.replicas"),
    ({"instanceTypes": ["p5.48xlarge"], "gpuSharing": {"strategy": "mig"}}, "nodePools.p.gpuSharing.profile"),
    ({"instanceTypes": ["p5.48xlarge"], "labels": {"bad key!": "x"}}, "nodePools.p.labels.bad key!"),
    ({"instanceTypes": ["p5.48xlarge"], "efa": {"networkInterfaces": [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa-only"}]}},
     "nodePools.p.efa.networkInterfaces.0.interfaceType"),
    ({"instanceTypes": ["p5.48xlarge"], "efa": {"networkInterfaces": [
        {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}]}}, "nodePools.p.efa.networkInterfaces"),
])
def test_pool_cross_field_problems(pool: dict, path: str) -> None:
    assert path in problems(stacks.config(pools={"p": pool}))


def test_static_pools_take_only_a_node_limit() -> None:
    found = problems(stacks.config(pools={"p": {"instanceTypes": ["g6.xlarge"], "provisioning": "static",
                                                    "replicas": 1, "limits": {"cpu": 8}}}))
    assert "nodePools.p.limits" in found


def test_node_classes_take_no_efa_interface_type() -> None:
    layout = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
              {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa"}]
    pool = {"instanceTypes": ["p5.48xlarge"], "provisioning": "static", "replicas": 1, "efa": {"networkInterfaces": layout}}
    assert "nodePools.p.efa.networkInterfaces.1.interfaceType" in problems(stacks.config(pools={"p": pool}))
    parse(stacks.config("managed-node-groups", pools={"p": pool}))  # launch templates take 'efa'


@pytest.mark.parametrize(("itype", "card"), [("p6-b300.48xlarge", 0), ("g6e.24xlarge", 2)])
def test_layout_cards_must_exist_and_take_efa(itype: str, card: int) -> None:
    """p6-b300's card 0 is ENA-only; g6e.24xlarge has two cards."""
    layout = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
              {"networkCardIndex": card, "deviceIndex": 1 if card == 0 else 0, "interfaceType": "efa-only"}]
    pool = {"instanceTypes": [itype], "replicas": 1, "efa": {"networkInterfaces": layout}}
    assert "nodePools.p.efa.networkInterfaces.1.networkCardIndex" in problems(
        stacks.config("managed-node-groups", pools={"p": pool}))


def test_dynamic_pool_rejected_for_managed_node_groups() -> None:
    found = problems(stacks.config("managed-node-groups", pools={
        "p": {"instanceTypes": ["g6e.2xlarge"], "provisioning": "dynamic"}}))
    assert "nodePools.p.provisioning" in found


def test_pool_name_must_be_a_kubernetes_name() -> None:
    assert "nodePools.Bad_Name" in problems(stacks.config(pools={"Bad_Name": {"instanceTypes": ["g6.xlarge"]}}))


def test_brought_vpc_needs_private_subnets() -> None:
    assert "network.privateSubnetIds" in problems(stacks.config(network={"vpcId": "vpc-00000123"}))


def test_bad_cidrs() -> None:
    found = problems(stacks.config(network={"cidr": "10.0.0.0/8"},
                                       cluster={"endpoint": {"publicAccessCidrs": ["nope"]}}))
    assert {"network.cidr", "cluster.endpoint.publicAccessCidrs.0"} <= set(found)


@pytest.mark.parametrize(("tags", "reserved"), [
    ({"aws:createdBy": "me"}, "reserved: aws:createdBy"),
    ({"kubernetes.io/cluster/test": "owned"}, "reserved: kubernetes.io/cluster/test"),
    ({"Karpenter.sh/nodepool": "x", "eks-devices.io/pool": "y"}, "reserved: Karpenter.sh/nodepool, eks-devices.io/pool"),
    ({"k" * 129: "v"}, None),
    ({"": "v"}, None),
    ({"team": "v" * 257}, None),
    ({f"tag-{i}": "v" for i in range(41)}, None),
])
def test_cluster_tags_follow_aws_rules_and_leave_reserved_keys_alone(tags: dict[str, str],
                                                                     reserved: str | None) -> None:
    accepted = problems(stacks.config(cluster={"tags": tags}))["cluster.tags"].accepted
    assert "at most 40 tags, keys of 1-128 and values of up to 256 characters" in accepted
    assert (reserved in accepted) if reserved else "reserved:" not in accepted
    ok = {"team": "ml", "cost-center": "4711", "k" * 128: "v" * 256}
    assert stacks.spec(cluster={"tags": ok}).cluster.tags == ok


def test_helm_values_keys_are_chart_keys() -> None:
    found = problems(stacks.config(helmValues={"gpu-operator": {}}))
    assert any(path.startswith("helmValues") for path in found)


def test_chart_versions_must_be_versions() -> None:
    assert "chartVersions.nvidia-dra-driver" in problems(stacks.config(chartVersions={"nvidia-dra-driver": "latest"}))


@pytest.mark.parametrize("version", ["1.14.1", "1.15.0"])
def test_the_karpenter_version_has_one_key(version: str) -> None:
    """`chartVersions.karpenter: 1.14.1` installed a chart without DRA while the rules checked
    cluster.karpenter.version: the Karpenter version is set in one place only."""
    found = problems(stacks.config(chartVersions={"karpenter": version}))
    assert "cluster.karpenter.version" in found["chartVersions.karpenter"].accepted
    plan = stacks.plan("karpenter", pools={"p": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "dra"}}},
                       cluster={"karpenter": {"version": "1.14.1"}})
    assert plan.karpenter is not None and plan.karpenter.version == "1.14.1"
    assert "karpenter-dra-version" in stacks.slugs(plan, "error")


# --- stack files ------------------------------------------------------------------------------

def write(tmp_path: Path, text: str, name: str = "t") -> Path:
    (tmp_path / f"Pulumi.{name}.yaml").write_text(text)
    return tmp_path


def test_duplicate_pool_name_reported_with_line(tmp_path: Path) -> None:
    text = """config:
  eks-devices:cluster: {name: x, version: "1.36", mode: karpenter}
  eks-devices:nodePools:
    gpu:
      instanceTypes: [g6.xlarge]
    gpu:
      instanceTypes: [g6e.xlarge]
"""
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, text))
    [problem] = info.value.problems
    assert (problem.path, problem.line) == ("nodePools.gpu", 6)  # the config path, and the second one's line
    assert problem.given == "'gpu' a second time, on line 6 (first on line 4)"
    assert "a node pool's name is its identity" in problem.accepted


@pytest.mark.parametrize(("text", "given"), [
    ("", "an empty file"),
    ("config: [1, 2]\n", "config: a list"),
    ("- config: {}\n", "a list as the whole file"),
    ("secretsprovider: passphrase\n", "no config: section"),
    ("config:\n  a: [unclosed\n", "invalid YAML (did not find expected ',' or ']')"),
])
def test_unusable_files(tmp_path: Path, text: str, given: str) -> None:
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, text))
    assert info.value.problems[0].given == given


def test_missing_stack_lists_existing(tmp_path: Path) -> None:
    write(tmp_path, "config: {}\n", "dev")
    with pytest.raises(stack_file.StackNotFound) as info:
        stack_file.load("qa", tmp_path)
    assert info.value.existing == ["dev"]
    assert "dev" in str(info.value)


def test_shipped_stacks_parse() -> None:
    assert stack_file.stack_names(stacks.STACKS) == ["dev", "prod", "staging"]
    modes = {name: stack_file.load(name, stacks.STACKS).mode for name in stacks.SHIPPED}
    assert modes == {"dev": "auto-mode", "staging": "karpenter", "prod": "managed-node-groups"}


@pytest.mark.parametrize("config", [[{"eks-devices:cluster": {}}], "eks-devices:cluster", None])
def test_config_that_is_not_a_mapping_is_a_config_error(config: object) -> None:
    with pytest.raises(ConfigError) as info:
        parse(config)  # type: ignore[arg-type]
    [problem] = info.value.problems
    assert problem.path == "config"
    assert problem.given == f"a {type(config).__name__}"
    assert "mapping" in problem.accepted


def test_bytes_that_are_not_utf8_are_a_config_error_with_their_line(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.t.yaml").write_bytes(b"config:\n  aws:region: us-west-2\n  # \xff\xfe\n")
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", tmp_path)
    [problem] = info.value.problems
    assert (problem.path, problem.given, problem.accepted) == ("line 3", "byte 0xff, which is not UTF-8 text",
                                                               "a UTF-8 text file")


def test_control_characters_are_a_config_error_with_their_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, "config:\n  aws:region: us-west-2\x00\n"))
    [problem] = info.value.problems
    assert (problem.path, problem.given) == ("line 2", "character #x0000")
    assert problem.accepted.startswith("printable text")


def test_yaml_nested_too_deeply_is_a_config_error(tmp_path: Path) -> None:
    text = "config:\n  eks-devices:helmValues:\n    karpenter: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, text))
    [problem] = info.value.problems
    assert problem.given == "YAML nested too deeply to read"


def test_a_list_as_a_mapping_key_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, "config:\n  aws:region: us-west-2\n  ? [a, b]\n  : c\n"))
    [problem] = info.value.problems
    assert (problem.path, problem.given) == ("line 3", "a list as a mapping key")
    assert "keys that are text or numbers" in problem.accepted


def test_yaml_merge_keys_are_read_not_reported_as_invalid(tmp_path: Path) -> None:
    text = """base: &base {name: x, version: "1.36", mode: karpenter}
config:
  eks-devices:cluster:
    <<: *base
    name: merged
"""
    spec = stack_file.load("t", write(tmp_path, text))
    assert (spec.cluster.name, spec.cluster.version) == ("merged", "1.36")


@pytest.mark.parametrize("settings", [{"motd": None}, {"kernel": {"sysctl": [{"a": 1}]}}, {"kernel": {1: "x"}}])
def test_bottlerocket_settings_without_a_toml_form_are_config_errors(settings: dict) -> None:
    pool = {"instanceTypes": ["g6.xlarge"], "ami": "bottlerocket", "bottlerocketSettings": settings}
    found = problems(stacks.config(pools={"g": pool}))
    (path, problem), = found.items()
    assert path.startswith("nodePools.g.bottlerocketSettings")
    assert any(words in problem.accepted for words in ("TOML form", "not text", "text keys"))


@pytest.mark.parametrize(("chart", "values", "path"), [
    ("aws-dranet", {"nodeSelector": 5}, "nodeSelector"),
    ("nvidia-device-plugin", {"tolerations": [None]}, "tolerations"),
    ("neuron-dra-driver", {"draDriver": {"tolerations": "x"}}, "draDriver.tolerations"),
    ("nvidia-device-plugin", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": ["k"], "operator": "In"}]}]}}}}, "affinity"),
    ("aws-efa-k8s-device-plugin", {"supportedInstanceLabels": {"values": 5}}, "supportedInstanceLabels.values"),
    ("aws-dranet", {"supportedInstanceLabels": {"values": []}}, "supportedInstanceLabels.values"),
    ("aws-dranet", {"deviceClass": {"name": True}}, "deviceClass.name"),
    ("nvidia-dra-driver", {"kubeletPlugin": "v1"}, "kubeletPlugin"),
    ("karpenter", {"settings": ["x"]}, "settings"),
])
def test_helm_values_the_toolkit_reads_must_have_their_shape(chart: str, values: dict, path: str) -> None:
    found = problems(stacks.config(pools={"p": {"instanceTypes": ["p5.48xlarge"]}}, helmValues={chart: values}))
    assert set(found) == {f"helmValues.{chart}.{path}"}
    problem = found[f"helmValues.{chart}.{path}"]
    assert problem.given and problem.accepted


def test_neuron_affinity_overrides_are_read_and_may_carry_the_charts_placeholders() -> None:
    """The proof reads `draDriver.affinity` / `devicePlugin.affinity`: their shape is checked, and the
    chart's own default form (an instance-list placeholder for `values`) is accepted."""
    own = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "__INSTANCE_TYPE_KEY__", "operator": "In", "values": "__NEURON_INSTANCES__"}]}]}}}
    assert stacks.spec(helmValues={"neuron-dra-driver": {"draDriver": {"affinity": own}}})
    bad = stacks.config(helmValues={"neuron-device-plugin": {"devicePlugin": {"affinity": "trn only"}}})
    assert "helmValues.neuron-device-plugin.devicePlugin.affinity" in problems(bad)


@pytest.mark.parametrize("key", ["eks-devices.io/device-manager-nvidia", "eks-devices.io/pool",
                                 "nvidia.com/gpu.present", "nvidia.com/device-plugin.config"])
def test_pool_labels_cannot_replace_the_toolkit_s_own(key: str) -> None:
    """The plan derives these from devices.* / gpuSharing and the device software is scoped by them."""
    found = problems(stacks.config(pools={"p": {"instanceTypes": ["p5.48xlarge"], "labels": {key: "x"}}}))
    assert "a label the toolkit does not set itself" in found[f"nodePools.p.labels.{key}"].accepted
    assert stacks.spec(pools={"p": {"instanceTypes": ["p5.48xlarge"], "labels": {"team": "x"}}})


@pytest.mark.parametrize(("profile", "ok"), [("1g.10gb", True), ("1g.10gb+me", True), ("7g.80gb", True),
                                             ("1g.10gb+xx", False), ("1c.10gb", False)])
def test_mig_profiles_as_nvml_names_them(profile: str, ok: bool) -> None:
    pool = {"instanceTypes": ["p5.48xlarge"], "provisioning": "static", "replicas": 1,
            "gpuSharing": {"strategy": "mig", "profile": profile}}
    if ok:
        assert stacks.spec(pools={"p": pool}).node_pools["p"].gpu_sharing.profile == profile
    else:
        assert "nodePools.p.gpuSharing.profile" in problems(stacks.config(pools={"p": pool}))


@pytest.mark.parametrize(("zone", "network", "ok"), [
    ("us-west-2b", {}, True),
    ("us-west-2-lax-1a", {}, False),                                # a counted VPC has no Local Zone
    ("us-west-2-lax-1a", {"availabilityZones": ["us-west-2a", "us-west-2-lax-1a"]}, True),
    ("us-east-1a", {}, False),                                      # another region: no subnet, no node
    ("us-west-2", {}, False),
    ("us-west-2d", {"availabilityZones": ["us-west-2a", "us-west-2b"]}, False),  # not a zone of the VPC
    ("us-west-2b", {"availabilityZones": ["us-west-2a", "us-west-2b"]}, True),
    ("us-west-2d", {"vpcId": "vpc-00000001", "privateSubnetIds": ["subnet-00000001"]}, True),  # brought: preflight checks
])
def test_pool_zone_is_a_zone_of_the_region_and_vpc(zone: str, network: dict, ok: bool) -> None:
    pools = {"a": {"instanceTypes": ["g6.xlarge"], "replicas": 1, "availabilityZone": zone}}
    cfg = stacks.config("managed-node-groups", pools=pools, network=network)
    if ok:
        parse(cfg)
    else:
        assert set(problems(cfg)) == {"nodePools.a.availabilityZone"}


def test_network_zone_list_names_zones_of_the_region() -> None:
    cfg = stacks.config(network={"availabilityZones": ["us-west-2a", "eu-west-1b"]})
    assert problems(cfg)["network.availabilityZones.1"].given == "'eu-west-1b'"


def test_pools_pinned_to_more_zones_than_the_vpc_has() -> None:
    pools = {f"p{z}": {"instanceTypes": ["g6.xlarge"], "availabilityZone": f"us-west-2{z}"} for z in "abc"}
    found = problems(stacks.config(pools=pools, network={"availabilityZones": 2}))
    assert "us-west-2a, us-west-2b, us-west-2c" in found["network.availabilityZones"].accepted
    assert stacks.spec(pools=pools, network={"availabilityZones": 3})


def test_aws_profile_is_read_with_the_region() -> None:
    assert parse({**stacks.config(), "aws:profile": "ml-prod"}).aws_profile == "ml-prod"
    assert parse(stacks.config()).aws_profile is None
    found = problems({**stacks.config(), "aws:profile": "two words", "aws:region": "mars"})
    assert found["aws:profile"].accepted.startswith("an AWS profile name")
    assert found["aws:region"].accepted == "an AWS region such as us-west-2"


def test_yaml_nested_within_the_limit_is_read(tmp_path: Path) -> None:
    """The depth limit refuses only what no stack needs: chart values nested 150 levels deep are read."""
    text = ("config:\n  eks-devices:cluster: {name: c, version: '1.36', mode: karpenter}\n"
            "  eks-devices:helmValues:\n    karpenter: " + "{a: " * 150 + "1" + "}" * 150 + "\n")
    config = stack_file.read_config(write(tmp_path, text) / "Pulumi.t.yaml")
    node = config["eks-devices:helmValues"]["karpenter"]
    for _ in range(150):
        node = node["a"]
    assert node == 1


# --- the settings of a Karpenter release: keys its chart reads ---------------------------------------------

EXISTING_DRA_POOL = {"p": {"instanceTypes": ["p5.48xlarge"]}}  # dynamic: needs Karpenter's DRA gates


@pytest.mark.parametrize(("settings", "path", "nearest"), [
    ({"enable_dra": True}, "cluster.karpenter.settings.enable_dra", "enableDRA"),
    ({"enableDra": True}, "cluster.karpenter.settings.enableDra", "enableDRA"),
    ({"awsFeatureGates": {"draNvidiaGpu": True}}, "cluster.karpenter.settings.awsFeatureGates.draNvidiaGpu",
     "draNVIDIAGPU"),
    ({"enableDRA": True, "featureGates": {"static_capacity": True}},
     "cluster.karpenter.settings.featureGates.static_capacity", "staticCapacity"),
    # a gate one level up is named in its mapping
    ({"enableDRA": True, "staticCapacity": True}, "cluster.karpenter.settings.staticCapacity",
     "featureGates.staticCapacity"),
])
def test_a_misspelled_karpenter_setting_is_named_with_the_key_its_chart_reads(settings: dict, path: str,
                                                                              nearest: str) -> None:
    """Karpenter's chart drops a key it does not read: the misspelling is the problem, at its own key, not
    a finding that DRA (or static capacity) is off."""
    found = problems(stacks.config(pools=EXISTING_DRA_POOL, cluster={
        "existing": True, "karpenter": {"version": "1.15.0", "settings": settings}}))
    assert list(found) == [path]
    assert found[path].given == f"unknown key {path.rsplit('.', 1)[1]!r}"
    assert found[path].accepted.startswith(f"did you mean {nearest!r}? a key Karpenter's chart 1.15.0 reads")


def test_a_misspelled_setting_in_the_karpenter_overrides_is_named_too() -> None:
    found = problems(stacks.config(pools=EXISTING_DRA_POOL, helmValues={"karpenter": {"settings": {
        "batchMaxDuraton": "5s", "featureGates": {"spotToSpotConsolidation": True}}}}))
    assert list(found) == ["helmValues.karpenter.settings.batchMaxDuraton"]
    assert found["helmValues.karpenter.settings.batchMaxDuraton"].accepted.startswith("did you mean 'batchMaxDuration'?")


def test_every_setting_the_chart_reads_is_accepted() -> None:
    from eks_devices.core.knowledge.charts import karpenter
    top = {k: {} if k in karpenter.SETTINGS_KEYS else True for k in karpenter.SETTINGS_KEYS[""]}
    settings = {**top, **{s: dict.fromkeys(keys, False) for s, keys in karpenter.SETTINGS_KEYS.items() if s}}
    settings["enableDRA"] = None  # one of the DRA switches: the chart refuses enableDRA with the single gates
    assert parse(stacks.config(pools={}, cluster={"existing": True, "karpenter": {
        "version": "1.15.0", "settings": settings}})).cluster.karpenter.settings == settings


@pytest.mark.parametrize("version", ["1.16.0", "2.0.0"])
def test_the_settings_of_a_karpenter_minor_whose_chart_was_not_read_are_not_refused(version: str) -> None:
    """Another minor's chart may read keys 1.15's does not: its settings are not refused for them (exit 2 would
    stop a valid stack), while 1.15 patch releases are checked."""
    cfg = stacks.config(pools=EXISTING_DRA_POOL, cluster={
        "existing": True, "karpenter": {"version": version, "settings": {"enableDRA": True, "newSetting": 1}}})
    assert parse(cfg).cluster.karpenter.settings == {"enableDRA": True, "newSetting": 1}
    cfg["eks-devices:cluster"]["karpenter"]["version"] = "1.15.3"
    assert "cluster.karpenter.settings.newSetting" in problems(cfg)
