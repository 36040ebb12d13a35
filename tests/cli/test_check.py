"""`eks-devices check`: parse, plan and rules without the program; exit codes as preview's, JSON,
and GitHub workflow annotations at the stack file's line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from eks_devices.cli.app import app
from support.cli import fresh
from support.stacks import ROOT

BAD = """config:
  eks-devices:cluster: {name: ml, version: "1.36", mode: auto-mode}
  eks-devices:nodePools:
    trn:
      instanceTypes: [trn1.32xlarge]
      devices: {neuron: dra}
"""
WORSE = 'config:\n  eks-devices:cluster: {name: ml, version: "1.36", mode: sideways}\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: ck\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text(BAD)
    (tmp_path / "stacks" / "Pulumi.worse.yaml").write_text(WORSE)
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    return tmp_path


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["check", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def test_the_shipped_stacks_check_clean() -> None:
    """No error anywhere; the one warning kind is staging's static and capacity-block pools left on
    @latest (a pre-production stack, where Karpenter's docs accept it)."""
    code, stdout = check("--project-dir", str(ROOT), "--json")
    assert code == 0
    found = {s["stack"]: [(f["slug"], f["path"]) for f in s["findings"]] for s in json.loads(stdout)["stacks"]}
    assert found == {"dev": [], "prod": [], "staging": [
        ("karpenter-ami-latest", "nodePools.gpu-mig.amiVersion"),
        ("karpenter-ami-latest", "nodePools.trn-static.amiVersion")]}


@pytest.mark.parametrize(("stacks", "code"), [(["dev"], 0), (["bad"], 1), (["worse"], 2), (["dev", "bad"], 1),
                                              ([], 2), (["nope"], 2)])
def test_exit_code_is_the_worst_over_the_stacks(project: Path, stacks: list[str], code: int) -> None:
    assert check(*stacks, "--project-dir", str(project))[0] == code


def test_json_lists_each_stack_with_its_findings_or_problems(project: Path) -> None:
    code, stdout = check("--json", "--project-dir", str(project))
    data = json.loads(stdout)
    by_name = {s["stack"]: s for s in data["stacks"]}
    assert code == data["exitCode"] == 2 and set(by_name) == {"bad", "dev", "worse"}
    assert {f["slug"] for f in by_name["bad"]["findings"]} >= {"auto-mode-neuron-plugin-only"}
    assert [p["path"] for p in by_name["worse"]["problems"]] == ["cluster.mode"]
    assert by_name["dev"]["exitCode"] == 0


def test_github_format_annotates_the_stack_file_line(project: Path) -> None:
    code, stdout = check("bad", "worse", "--format", "github", "--project-dir", str(project))
    lines = stdout.splitlines()
    assert code == 2 and lines and all(line.startswith(("::error ", "::warning ")) for line in lines)
    assert ("::error file=stacks/Pulumi.bad.yaml,line=6,title=auto-mode-neuron-plugin-only::"
            "nodePools.trn.devices.neuron: ") in stdout
    assert "::error file=stacks/Pulumi.worse.yaml,line=2,title=config cluster.mode::given 'sideways'" in stdout


FINE = """config:
  eks-devices:cluster: {name: ml, version: "1.36", mode: auto-mode}
  eks-devices:nodePools:
    p5:
      instanceTypes: [p5.48xlarge]
      provisioning: static
      replicas: 1
      labels:
        eks.amazonaws.com/device-manager-efa: device-plugin
  eks-devices:claims:
    x:
      pools: [p5]
      requests:
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com}
        - name: mig
          exactly:
            deviceClassName: mig.nvidia.com
"""
TYPO = """config:
  eks-devices:cluster: {name: ml, version: "1.36", mode: karpenter}
  eks-devices:nodePools:
    gpu:
      instanceTypes:
        - p5.48xlarge
        - p5.48xlage
"""
SETTINGS = """config:
  eks-devices:cluster:
    name: ml
    version: "1.35"
    mode: karpenter
    existing: true
    karpenter:
      version: 1.15.0
      settings:
        batchMaxDuration: 10s
        enable_dra: true
  eks-devices:nodePools:
    h100: {instanceTypes: [p5.48xlarge]}
"""


@pytest.mark.parametrize(("text", "annotation"), [
    # a key that holds dots (a label), and a list entry's key inside a claim's requests
    (FINE, "::error file=stacks/Pulumi.fine.yaml,line=9,title=static-pool-device-manager-label::"
           "nodePools.p5.labels.eks.amazonaws.com/device-manager-efa: "),
    (FINE, "::error file=stacks/Pulumi.fine.yaml,line=18,title=claim-device-class-missing::"
           "claims.x.requests.1.exactly.deviceClassName: "),
    (TYPO, "::error file=stacks/Pulumi.fine.yaml,line=7,title=config nodePools.gpu.instanceTypes.1::"
           "given 'p5.48xlage'"),
    (SETTINGS, "::error file=stacks/Pulumi.fine.yaml,line=11,title=config cluster.karpenter.settings.enable_dra::"
               "given unknown key 'enable_dra'; accepted: did you mean 'enableDRA'?"),
])
def test_github_annotations_land_on_the_line_of_the_key_to_edit(project: Path, text: str, annotation: str) -> None:
    (project / "stacks" / "Pulumi.fine.yaml").write_text(text)
    code, stdout = check("fine", "--format", "github", "--project-dir", str(project))
    assert code in (1, 2) and annotation in stdout, stdout


def test_check_does_not_load_pulumi() -> None:
    """The fast path: parse, plan and rules only (the program, and with it the Pulumi SDK, never loads)."""
    script = ("import sys\nfrom eks_devices.cli.app import app\nfrom typer.testing import CliRunner\n"
              f"r = CliRunner().invoke(app, ['check', '--project-dir', {str(ROOT)!r}])\n"
              "print(r.exit_code, 'pulumi' in sys.modules)")
    assert fresh(script).stdout.split() == ["0", "False"]


def test_check_loads_cel_only_for_a_stack_with_selectors() -> None:
    """CEL (celpy, ~40 ms of imports) loads when a claim or a DeviceClass expression is checked; dev has neither."""
    script = ("import sys\nfrom eks_devices.cli.app import app\nfrom typer.testing import CliRunner\n"
              f"r = CliRunner().invoke(app, ['check', 'dev', '--project-dir', {str(ROOT)!r}])\n"
              "print(r.exit_code, 'celpy' in sys.modules)")
    assert fresh(script).stdout.split() == ["0", "False"]


def test_the_pre_commit_hook_runs_check() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "eks-devices-check" and hook["entry"] == "eks-devices check"
    assert hook["language"] == "python" and hook["pass_filenames"] is False


EXISTING = """config:
  aws:region: us-west-2
  eks-devices:cluster: {name: research, version: "1.35", mode: karpenter, existing: true,
                        karpenter: {version: 1.15.0, settings: {}}}
  eks-devices:nodePools:
    h100: {instanceTypes: [p5.48xlarge]}
"""


def test_an_existing_cluster_stack_is_checked_against_its_karpenter_and_neither_previewed_nor_rendered(
        project: Path) -> None:
    """`check` judges the pools against the Karpenter the cluster states; `preview` and `render` would run
    the program that creates a cluster, so they refuse the stack with the way to go (exit 2)."""
    (project / "stacks" / "Pulumi.existing.yaml").write_text(EXISTING)
    code, stdout = check("existing", "--project-dir", str(project), "--json")
    found = json.loads(stdout)["stacks"][0]
    assert code == 1 and [(f["slug"], f["path"]) for f in found["findings"]] == [
        ("karpenter-dra-gates-match-drivers", "cluster.karpenter.settings.enableDRA")]
    assert "--reset-then-reuse-values" in found["findings"][0]["fix"]
    (project / "stacks" / "Pulumi.existing.yaml").write_text(EXISTING.replace("settings: {}", "settings: {enableDRA: true}"))
    assert check("existing", "--project-dir", str(project))[0] == 0
    for verb in (["preview"], ["render", "--out", str(project / "out")]):
        result = CliRunner().invoke(app, [verb[0], "existing", *verb[1:], "--project-dir", str(project)])
        assert result.exit_code == 2 and "ClusterDevices" in result.stderr, (verb, result.output)
    assert not (project / "out").exists()


def test_the_plan_report_says_the_karpenter_is_the_cluster_s_own_with_its_stated_settings() -> None:
    import io

    from rich.console import Console

    from eks_devices import build, parse
    from eks_devices.cli import report

    plan = build(parse(yaml.safe_load(EXISTING.replace("settings: {}", "settings: {enableDRA: true}"))["config"]))
    assert report.plan_data(plan)["karpenter"]["installed"] is False
    text = io.StringIO()
    report.print_plan(Console(file=text, width=300), plan, "existing")
    assert ('Karpenter 1.15.0, the cluster\'s own release: settings {"enableDRA": true} stated; the pools need DRA '
            'settings {"enableDRA": true}') in text.getvalue()


def test_text_says_clean_only_when_nothing_is_reported(project: Path) -> None:
    """A stack with warnings only is not called clean; errors and problems are counted."""
    assert check("dev", "--project-dir", str(project))[1].splitlines()[-1] == "dev: clean"
    assert check("staging", "--project-dir", str(ROOT))[1].splitlines()[-1] == "staging: no errors, 2 warnings"
    assert check("worse", "--project-dir", str(project))[1].splitlines()[-1] == "worse: 1 configuration problem"
    last = check("bad", "--project-dir", str(project))[1].splitlines()[-1]
    assert last.startswith("bad: ") and " error" in last and "clean" not in last


def test_text_cites_upstream_sources_only_when_verbose() -> None:
    """The staging warning's reason cites Karpenter's docs: shown with --verbose, dropped without; the
    finding itself (rule, path, fix) is in both."""
    source = "karpenter-provider-aws website/content/en/docs/tasks/managing-amis.md"
    plain = check("staging", "--project-dir", str(ROOT))[1]
    verbose = check("staging", "--project-dir", str(ROOT), "--verbose")[1]
    for text in (plain, verbose):
        assert "warning karpenter-ami-latest at nodePools.trn-static.amiVersion" in " ".join(text.split())
        assert "fix: pin the AMI" in " ".join(text.split())
    assert source not in " ".join(plain.split()) and source in " ".join(verbose.split())


def test_configuration_problems_wrap_at_spaces_like_findings(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A problem longer than the line wraps at spaces, continued four columns in; a path longer than the
    line stays whole (it is copied into the stack file), as findings do."""
    long = "pool-" + "x" * 60
    (project / "stacks" / "Pulumi.long.yaml").write_text(
        f'config:\n  eks-devices:cluster: {{name: ml, version: "1.99", mode: karpenter}}\n'
        f"  eks-devices:nodePools:\n    {long}: {{instanceTypes: [p5.48xlarge]}}\n")
    monkeypatch.setenv("COLUMNS", "40")
    code, stdout = check("long", "--project-dir", str(project))
    lines = stdout.splitlines()
    assert code == 2 and f"nodePools.{long}:" in stdout.split()
    assert all(len(line) <= 40 or len(line.split()) == 1 for line in lines), lines
    assert all(line.startswith(("long:", "    ")) and line == line.rstrip() for line in lines), lines
