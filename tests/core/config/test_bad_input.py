"""A platform engineer's mistakes in a stack file, answered all at once: a problem in one pool, claim or
chart entry sets that item aside and the rest is still checked (by shape and across fields); a key given
twice is named at its config path with the rest of the file checked; and each problem says what is
accepted in the stack file's words, not the validator's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eks_devices.cli.check import Checked, StackCheck, github_annotations
from eks_devices.core.config import stack_file
from eks_devices.core.config.stack import ConfigError, ConfigProblem, parse
from support import stacks


def problems(cfg: dict[str, Any]) -> dict[str, ConfigProblem]:
    with pytest.raises(ConfigError) as info:
        parse(cfg)
    found = [p.path for p in info.value.problems]
    assert len(found) == len(set(found)), found  # one problem per path
    return {p.path: p for p in info.value.problems}


# --- every section at once -----------------------------------------------------------------------

def test_a_pool_refused_by_shape_leaves_the_other_sections_checked_across_fields() -> None:
    found = problems(stacks.config(
        pools={"a": {"instanceTypes": ["g6.xlarge"], "capacity": "huge"},
               "b": {"instanceTypes": ["g6.xlarge"], "provisioning": "static"}},
        chartVersions={"nvidia-dra-driver": "latest", "karpenter": "1.15.0"},
        claims={"c1": {"pools": ["a", "zz"], "gpus": {"count": 1}}, "c2": {"pools": ["a"], "gpus": 1}}))
    assert set(found) == {"nodePools.a.capacity", "claims.c2.gpus",  # shapes
                          "nodePools.b.replicas", "chartVersions.nvidia-dra-driver", "chartVersions.karpenter",
                          "claims.c1.pools.1"}  # across fields, beside them
    # the claim naming the refused pool a is not told that a is no pool: a is declared
    assert found["claims.c1.pools.1"].given == "'zz'" and "(a, b)" in found["claims.c1.pools.1"].accepted


def test_a_value_json_cannot_carry_leaves_the_rest_checked() -> None:
    cfg = stacks.config(pools={123: {"instanceTypes": ["p5.48xlarge"]}, "ok": {"instanceTypes": ["g6.xlarge"],
                                                                              "capacity": "huge"}},
                        helmValues={"nvidia-dra-driver": [1]})
    found = problems(cfg)
    assert set(found) == {"nodePools.123", "nodePools.ok.capacity", "helmValues.nvidia-dra-driver"}
    assert found["nodePools.123"].given == "an int mapping key"


def test_an_unreadable_cluster_still_lets_the_other_sections_shapes_be_checked() -> None:
    cfg = stacks.config(pools={"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "dar"}}})
    cfg["eks-devices:cluster"]["mode"] = "automode"
    assert set(problems(cfg)) == {"cluster.mode", "nodePools.a.devices.nvidia"}
    del cfg["eks-devices:cluster"]
    assert set(problems(cfg)) == {"eks-devices:cluster", "nodePools.a.devices.nvidia"}


def test_checks_across_fields_wait_for_a_readable_cluster_network_and_region() -> None:
    """They read the mode, the zones and the region: on a stand-in they would blame the wrong things."""
    pools = {"a": {"instanceTypes": ["g6.xlarge"], "provisioning": "static"}}  # replicas missing: across fields
    assert "nodePools.a.replicas" in problems(stacks.config(pools=pools))
    for broken in ({"cluster": {"mode": "sideways"}}, {"network": {"cidr": "10.0.0.0"}},
                   {"overrides": {"aws:region": "moon"}}):
        assert "nodePools.a.replicas" not in problems(stacks.config(pools=pools, **broken)), broken


# --- the stack file's words ------------------------------------------------------------------------

@pytest.mark.parametrize(("cluster", "pools", "path", "accepted"), [
    ({"karpenter": {"version": 1.15}}, {}, "cluster.karpenter.version",
     "text in quotes (unquoted, YAML reads 1.15 as a number)"),
    ({"endpoint": {"privateAccess": "yes please"}}, {}, "cluster.endpoint.privateAccess", "true or false"),
    ({"systemNodeGroup": {"size": 0}}, {}, "cluster.systemNodeGroup.size", "a number of at least 1"),
    ({"name": "bad name!"}, {}, "cluster.name", "an EKS cluster name: a letter, then up to 99 letters, digits, '-' "
                                                "and '_'"),
    ({"mode": "automode"}, {}, "cluster.mode",
     "did you mean 'auto-mode'? 'auto-mode', 'karpenter' or 'managed-node-groups'"),
    ({}, {"a": {"instanceTypes": []}}, "nodePools.a.instanceTypes", "a list of at least 1 item"),
    ({}, {"a": {"instanceTypes": "g6.xlarge"}}, "nodePools.a.instanceTypes", "a list (in brackets: [a, b])"),
    ({}, {"a": {"instanceTypes": ["g6.xlarge"], "limits": {"memory": "10GB"}}}, "nodePools.a.limits.memory",
     "a memory quantity such as 256Gi (Ki, Mi, Gi or Ti)"),
    ({}, {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"efa": "device_plugin"}}}, "nodePools.a.devices.efa",
     "did you mean 'device-plugin'? 'dra', 'device-plugin', 'none', 'auto' or 'inferred'"),
    ({}, {"a": {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "DRA"}}}, "nodePools.a.devices.nvidia",
     "did you mean 'dra'? 'dra', 'device-plugin', 'none', 'auto' or 'inferred'"),
    ({}, {"a": {"instanceTypes": ["g6.xlarge"], "labels": {"tier": 1}}}, "nodePools.a.labels.tier",
     "text in quotes (unquoted, YAML reads 1 as a number)"),
])
def test_what_is_accepted_is_said_in_the_stack_files_words(cluster: dict[str, Any], pools: dict[str, Any], path: str,
                                                            accepted: str) -> None:
    assert problems(stacks.config(pools=pools, cluster=cluster))[path].accepted == accepted


def test_a_union_of_shapes_is_one_problem_accepting_either() -> None:
    found = problems(stacks.config(network={"availabilityZones": "three"}))
    assert found["network.availabilityZones"].accepted == "a whole number, or a list (in brackets: [a, b])"


def test_a_chart_key_that_does_not_exist_is_named_at_its_path() -> None:
    found = problems(stacks.config(helmValues={"nvidia-dra": {}}, chartVersions={"gpu-operator": "1.0.0"}))
    assert set(found) == {"helmValues.nvidia-dra", "chartVersions.gpu-operator"}  # no pydantic `[key]`
    assert found["helmValues.nvidia-dra"].given == "unknown key 'nvidia-dra'"
    assert found["helmValues.nvidia-dra"].accepted.startswith("did you mean 'nvidia-dra-driver'?")


def test_a_section_given_as_a_scalar_names_its_keys() -> None:
    found = problems(stacks.config(pools={"a": {"instanceTypes": ["g6.xlarge"]}},
                                   claims={"c": {"pools": ["a"], "gpus": 2}}))
    assert found["claims.c.gpus"].accepted == "a mapping of keys to values (keys: count, model, minMemoryGiB)"


@pytest.mark.parametrize(("given", "suggested"), [
    ("p5.48xlage", "p5.48xlarge"), ("P5.48xlarge", "p5.48xlarge"), ("g7.2xlarge", "g7e.2xlarge"),
    ("m7i.large", None), ("c5n.18xlarge", None),  # no accelerator: a nearby GPU type would be a wrong fix
])
def test_an_unknown_instance_type_is_offered_only_near_types(given: str, suggested: str | None) -> None:
    accepted = problems(stacks.config(pools={"a": {"instanceTypes": [given]}}))["nodePools.a.instanceTypes.0"].accepted
    if suggested is None:
        assert "did you mean" not in accepted and "no catalogued family is near it" in accepted
    else:
        assert f"did you mean {suggested}" in accepted


def test_an_unknown_instance_type_is_blamed_at_its_entry_not_the_list() -> None:
    """The entry to edit, in the index notation of every other list problem (`instanceTypes.1`)."""
    found = problems(stacks.config(pools={"a": {"instanceTypes": ["p5.48xlarge", 5, "p5.48xlage", "g6.xlarge"]}}))
    assert set(found) == {"nodePools.a.instanceTypes.1", "nodePools.a.instanceTypes.2"}
    assert found["nodePools.a.instanceTypes.2"].given == "'p5.48xlage'"
    assert found["nodePools.a.instanceTypes.2"].accepted.startswith("did you mean p5.48xlarge, p5.4xlarge? a catalogued")


# --- the file as YAML ----------------------------------------------------------------------------------

def write(folder: Path, text: str) -> Path:
    (folder / "Pulumi.t.yaml").write_text(text)
    return folder


def test_a_key_given_twice_is_named_at_its_config_path_and_the_rest_is_checked(tmp_path: Path) -> None:
    text = """config:
  eks-devices:cluster:
    name: x
    name: y
    version: "1.36"
    mode: automode
  eks-devices:nodePools:
    gpu: {instanceTypes: [g6.xlarge]}
    gpu: {instanceTypes: [g6e.xlarge], capacity: huge}
"""
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, text))
    found = {p.path: p for p in info.value.problems}
    assert list(found) == ["cluster.name", "nodePools.gpu", "cluster.mode", "nodePools.gpu.capacity"]
    assert found["cluster.name"].given == "'name' a second time, on line 4 (first on line 3)"
    assert "node pool" not in found["cluster.name"].accepted  # only a pool's name is its identity
    assert "a node pool's name is its identity" in found["nodePools.gpu"].accepted
    annotations = github_annotations(Checked([StackCheck("t", tmp_path / "Pulumi.t.yaml",
                                                         problems=tuple(info.value.problems))]), tmp_path)
    assert [a.split(",line=")[1].split(",")[0] for a in annotations[:2]] == ["4", "9"]  # the second time's line


def test_a_key_given_twice_outside_config_or_in_a_list_is_named_where_it_is(tmp_path: Path) -> None:
    text = """config:
  eks-devices:cluster: {name: x, version: "1.36", mode: karpenter}
  eks-devices:nodePools:
    gpu:
      instanceTypes: [g6.xlarge]
      taints:
      - {key: a, key: b, effect: NoSchedule}
environment: [a]
environment: [b]
"""
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, text))
    assert [p.path for p in info.value.problems][:2] == ["nodePools.gpu.taints.0.key", "environment"]


def test_a_tab_in_the_indentation_is_named_as_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, "config:\n  eks-devices:cluster:\n    name: x\n\tversion: '1.36'\n"))
    [problem] = info.value.problems
    assert problem.path == "line 4" and problem.given.startswith("invalid YAML (")
    assert problem.accepted == "well-formed YAML: indent with spaces (YAML refuses tabs)"


def test_lines_are_counted_as_editors_count_them(tmp_path: Path) -> None:
    """YAML also breaks lines at NEL and the Unicode line separator; a problem's line counts line feeds, as
    editors and GitHub's annotations do."""
    text = 'config:\n  aws:region: us-west-2 # \u2028 \x85\n  eks-devices:cluster:\n    name: x\n    name: y\n'
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, text))
    assert info.value.problems[0].line == 5 and "on line 5 (first on line 4)" in info.value.problems[0].given
    with pytest.raises(ConfigError) as info:
        stack_file.load("t", write(tmp_path, text.replace("name: y", "name: 'y")))
    assert info.value.problems[0].path == "line 6"  # the end of the stream: after the last line feed
