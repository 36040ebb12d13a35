"""The `eks-devices` command as a user runs it: a subprocess per exit code, JSON for machines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.cli import run
from support.stacks import ROOT


def project(tmp_path: Path, stacks: dict[str, str]) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: eks-devices\nruntime: python\nstackConfigDir: stacks\n")
    shutil.copy(ROOT / "__main__.py", tmp_path / "__main__.py")
    (tmp_path / "stacks").mkdir()
    for name, text in stacks.items():
        (tmp_path / "stacks" / f"Pulumi.{name}.yaml").write_text(text)
    return tmp_path


def test_preview_dev_json_lists_every_pool_with_managers_and_reasons() -> None:
    result = run("preview", "dev", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data["pools"]) == {"gpu-dra", "gpu-plugin", "inference-neuron", "train-efa"}
    for pool in data["pools"].values():
        assert set(pool["managers"]) == {"nvidia", "efa", "neuron"}
        for res in pool["managers"].values():
            assert res["manager"] in {"dra", "device-plugin", "none"} and res["reason"]
    assert data["pools"]["gpu-plugin"]["managers"]["nvidia"]["manager"] == "device-plugin"
    assert data["summary"] == {"errors": 0, "warnings": 0}


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_preview_text_for_shipped_stacks(stack: str) -> None:
    result = run("preview", stack)
    assert result.returncode == 0, result.stdout + result.stderr
    # staging leaves its static pools on @latest: only those warnings (tests/cli/test_check.py)
    assert "Device plan" in result.stdout and ("No findings." in result.stdout) == (stack != "staging")


def test_error_findings_exit_1(tmp_path: Path) -> None:
    text = """config:
  eks-devices:cluster: {name: x, version: "1.35", mode: auto-mode}
  eks-devices:nodePools:
    gpu: {instanceTypes: [g6.xlarge], devices: {nvidia: dra}}
"""
    result = run("preview", "bad", "--project-dir", str(project(tmp_path, {"bad": text})))
    assert result.returncode == 1
    assert "auto-mode-dra-version" in result.stdout
    assert "fix:" in result.stdout


def test_invalid_config_exits_2_with_every_problem_and_no_traceback(tmp_path: Path) -> None:
    text = """config:
  eks-devices:cluster: {name: x, version: 1.30, mode: fargate}
  eks-devices:nodePools:
    gpu: {instanceTypes: [p9.huge]}
"""
    result = run("preview", "bad", "--project-dir", str(project(tmp_path, {"bad": text})))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    for path in ("cluster.version", "cluster.mode", "nodePools.gpu.instanceTypes"):
        assert path in result.stderr
    as_json = run("preview", "bad", "--json", "--project-dir", str(tmp_path))
    assert as_json.returncode == 2
    assert {p["path"] for p in json.loads(as_json.stdout)["problems"]} >= {"cluster.version", "cluster.mode"}


def test_missing_stack_exits_2_listing_stacks() -> None:
    result = run("preview", "qa")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "dev, prod, staging" in result.stderr


def test_empty_stack_file_exits_2(tmp_path: Path) -> None:
    result = run("preview", "empty", "--project-dir", str(project(tmp_path, {"empty": ""})))
    assert result.returncode == 2
    assert "an empty file" in result.stderr


def test_rules_and_catalog_listings() -> None:
    rules = json.loads(run("rules", "--json").stdout)
    assert "one-manager-per-node" in {r["slug"] for r in rules}
    types = json.loads(run("catalog", "--json").stdout)
    p5 = next(t for t in types if t["name"] == "p5.48xlarge")
    assert (p5["gpu_count"], p5["max_efa_interfaces"], p5["karpenterDraMetadata"]) == (8, 32, True)


@pytest.mark.parametrize("verb", ["preview", "render", "preflight", "diff"])
def test_help_names_the_stack_file(verb: str) -> None:
    result = run(verb, "--help")
    assert result.returncode == 0
    assert "Pulumi.<STACK>.yaml" in result.stdout and "stackConfigDir" in result.stdout


def test_version_names_the_installed_package() -> None:
    from importlib.metadata import version

    result = run("--version")
    assert (result.returncode, result.stdout) == (0, f"eks-devices {version('eks-devices')}\n")


def test_a_program_failure_is_one_line_with_exit_1(tmp_path: Path) -> None:
    """A zone the region does not offer fails the program as it would fail `pulumi up`: one line."""
    stack = ("config:\n  aws:region: us-west-2\n"
             "  eks-devices:cluster: {name: z, version: '1.36', mode: managed-node-groups}\n"
             "  eks-devices:nodePools:\n"
             "    gpu: {instanceTypes: [p5.48xlarge], replicas: 1, availabilityZone: us-west-2z}\n")
    result = run("preview", "z", "--json", cwd=project(tmp_path, {"z": stack}))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "pinned to us-west-2z, which the region does not offer" in json.loads(result.stdout)["error"]


@pytest.mark.parametrize("verb", [(), ("preview",), ("render",), ("preflight",), ("diff",), ("rules",), ("catalog",)])
def test_help_shows_flags_as_flags(verb: tuple[str, ...]) -> None:
    result = run(*verb, "--help")
    assert result.returncode == 0 and "--help" in result.stdout
    assert "<bool>" not in result.stdout
