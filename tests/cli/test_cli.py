"""The `eks-devices` command as a user runs it: a subprocess per exit code, JSON for machines."""

from __future__ import annotations

import json
import os
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


@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_preview_text_fits_the_terminal_findings_first(stack: str, columns: int) -> None:
    """COLUMNS sets the width: no line is longer, label values are never broken, and the order is
    findings, the pools x families matrix, the releases, then the resource tree."""
    result = run("preview", stack, env={**os.environ, "COLUMNS": str(columns)})
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns, [line for line in lines if len(line) > columns]
    text = result.stdout
    # staging leaves its static pools on @latest: only those warnings (tests/cli/test_check.py)
    assert ("No findings." in text) == (stack != "staging")
    findings = text.index("No findings.") if stack != "staging" else text.index("Findings: 0 error(s), 2 warning(s)")
    matrix, tree = text.index("Device managers (pool x family)"), text.index(f"Stack {stack}: ")
    assert findings < matrix < tree
    plan = json.loads(run("preview", stack, "--json").stdout)
    header = next(line for line in lines if line.lstrip().startswith("pool "))
    assert header.split()[:2] == ["pool", "provisioning"] and set(header.split()[2:]) <= {"nvidia", "efa", "neuron"}
    for name, pool in plan["pools"].items():
        row = next(line.split() for line in lines if line.split()[:1] == [name])
        for family, cell in zip(header.split()[2:], row[-len(header.split()[2:]):], strict=True):
            manager = pool["managers"][family]
            assert cell.rstrip("*") == ("-" if manager["manager"] == "none" else manager["manager"])
            assert cell.endswith("*") == (manager["requested"] == manager["manager"] != "none")
    for release in plan["releases"].values():  # node scopes are label values: whole, never folded
        for key, value in release["scope"].items():
            assert f"{key}={value}" in text
    assert "{'" not in text  # values as JSON, never a Python repr


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
    g6f = next(t for t in types if t["name"] == "g6f.large")
    assert (g6f["gpu_count"], g6f["gpu_partition"]) == (1, 0.125)
    table = run("catalog", env={**os.environ, "COLUMNS": "200"}).stdout
    assert "1 x NVIDIA L4 (1/8 of one)" in table and "1 x NVIDIA H100" in table


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


def test_why_is_said_only_where_it_is_not_the_default() -> None:
    """dev: the pools resolving `auto` to DRA or to no devices get no line; the plugin pools say why, once each."""
    from rich.console import Console

    from eks_devices.cli.report import print_plan
    from support import stacks

    console = Console(record=True, width=200)
    print_plan(console, stacks.build(stacks.shipped("dev")), "Stack dev")
    text = console.export_text()
    assert "gpu-plugin nvidia: Auto Mode has no DRA device metadata for g7e.2xlarge, g7e.4xlarge" in text
    assert "inference-neuron neuron: Auto Mode runs Neuron devices with the device plugin only" in text
    assert "DRA is supported here" not in text and "have no EFA devices" not in text


@pytest.mark.parametrize("verb", [("preview", "staging"), ("render", "staging", "--out", "{out}"),
                                  ("diff", "staging", "--against", "HEAD")])
def test_the_program_does_not_repeat_the_warnings_the_verb_reports(verb: tuple[str, ...], tmp_path: Path) -> None:
    """The verbs hand their plan to the program, and print its warnings themselves (wrapped, citations only
    with --verbose): stderr carries progress only, not the program's raw one-line copies."""
    result = run(*(part.format(out=tmp_path / "out") for part in verb), env={**os.environ, "COLUMNS": "80"})
    assert result.returncode == 0, result.stdout + result.stderr
    progress = ("running the Pulumi program", "program finished")
    assert [line for line in result.stderr.splitlines() if not line.startswith(progress)] == []
    if verb[0] != "diff":  # diff compares; check and preview list the warnings
        assert "warning karpenter-ami-latest at nodePools.gpu-mig.amiVersion" in result.stdout


def test_the_command_imports_its_modules_with_the_collector_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """`eks-devices` switches the cyclic collector off before it imports the verbs' modules (each command
    is one short process; the collector's passes over the modules being imported cost 3–6% of its CPU)."""
    import gc
    import sys

    import eks_devices.cli
    import eks_devices.cli.app  # imported once, so the test can take it away and watch it come back
    from eks_devices.core.vocabulary import PluginError

    seen: list[bool] = []

    class Spy:
        """Sees the import of the verbs' module, then stops the command as a broken family would."""

        def find_spec(self, name: str, *_: object) -> None:
            if name == "eks_devices.cli.app":
                seen.append(gc.isenabled())
                raise PluginError("stopped by the test")

    monkeypatch.delitem(sys.modules, "eks_devices.cli.app")
    monkeypatch.setattr(sys, "meta_path", [Spy(), *sys.meta_path])
    try:
        with pytest.raises(SystemExit) as stopped:
            eks_devices.cli.main()
    finally:
        gc.enable()
    assert stopped.value.code == 2 and seen == [False]
