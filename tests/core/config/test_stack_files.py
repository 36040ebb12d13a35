"""Stack files are found where Pulumi finds them, under names Pulumi accepts; every problem of a
stack is reported at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from eks_devices import ConfigError, parse
from eks_devices.core.config import stack_file

ROOT = Path(__file__).resolve().parents[3]
STACK = "config:\n  eks-devices:cluster: {name: ml, version: '1.36', mode: auto-mode}\n"


def project(tmp_path: Path, settings: str, folder: str | None) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(f"name: p\nruntime: python\n{settings}")
    (tmp_path / "__main__.py").write_text((ROOT / "__main__.py").read_text())  # the project's program
    where = tmp_path / folder if folder else tmp_path
    where.mkdir(exist_ok=True)
    (where / "Pulumi.dev.yaml").write_text(STACK)
    return tmp_path


@pytest.mark.parametrize(("settings", "folder"), [("stackConfigDir: envs\n", "envs"), ("config: envs\n", "envs"), ("", None)])
def test_stack_files_are_read_from_stack_config_dir_or_beside_pulumi_yaml(
        tmp_path: Path, settings: str, folder: str | None) -> None:
    root = project(tmp_path, settings, folder)
    assert stack_file.stacks_dir(root) == (root / folder if folder else root)
    result = subprocess.run([sys.executable, "-m", "eks_devices", "preview", "dev", "--json", "--project-dir",
                             str(root)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", ["research-gpus", "a.b_c-1", "x" * 100])
def test_the_project_is_the_one_pulumi_yaml_names(tmp_path: Path, name: str) -> None:
    (tmp_path / "Pulumi.yaml").write_text(f"name: {name}\nruntime: python\n")
    assert stack_file.project_name(tmp_path) == name


@pytest.mark.parametrize(("text", "given"), [
    ("runtime: python\n", "name None"), ("name: 'my project'\n", "name 'my project'"), ("name: ''\n", "name ''"),
    (f"name: {'x' * 101}\n", f"name '{'x' * 101}'"), ("name: [a]\n", "name ['a']"), ("name: 7\n", "name 7"),
    ("- a list\n", "name None"), (None, "no readable Pulumi.yaml")])
def test_a_project_name_pulumi_refuses_is_an_error_naming_the_file(tmp_path: Path, text: str | None,
                                                                   given: str) -> None:
    if text is not None:
        (tmp_path / "Pulumi.yaml").write_text(text)
    with pytest.raises(stack_file.ProjectInvalid) as caught:
        stack_file.project_name(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'Pulumi.yaml'}: {given} (accepted: a project name of ")


@pytest.mark.parametrize("name", ["my stack!", "", "a/b", "x" * 101, "dev\n"])
def test_stack_names_pulumi_refuses_are_problems(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_file.load(name, tmp_path)
    assert caught.value.problems[0].path == "stack"


def test_the_cli_refuses_a_stack_name_pulumi_refuses() -> None:
    result = subprocess.run([sys.executable, "-m", "eks_devices", "preview", "my stack!"], capture_output=True,
                            text=True)
    assert result.returncode == 2 and "Pulumi stack name" in result.stderr


def test_an_unknown_instance_type_does_not_hide_an_invalid_pool_name() -> None:
    with pytest.raises(ConfigError) as caught:
        parse({"eks-devices:cluster": {"name": "ml", "version": "1.36", "mode": "karpenter"},
               "eks-devices:nodePools": {"Bad_Name": {"instanceTypes": ["p9.huge"]}}})
    assert {p.path for p in caught.value.problems} == {"nodePools.Bad_Name", "nodePools.Bad_Name.instanceTypes.0"}


@pytest.mark.parametrize("environment", ["environment: [platform-defaults, aws-creds]\n", ""])
def test_a_problem_in_a_stack_importing_esc_environments_says_they_are_not_read(tmp_path: Path,
                                                                                environment: str) -> None:
    """A key a Pulumi ESC environment would set is missing offline: the problems say so, rather than
    only that the key is missing."""
    (tmp_path / "Pulumi.dev.yaml").write_text(f"{environment}config:\n  aws:region: us-west-2\n")
    with pytest.raises(ConfigError) as caught:
        stack_file.load("dev", tmp_path)
    said = [(p.path, p.given) for p in caught.value.problems if p.path == "environment"]
    assert said == ([("environment", "imports platform-defaults, aws-creds")] if environment else [])
    assert len(caught.value.problems) > len(said)  # the missing keys themselves are still listed
