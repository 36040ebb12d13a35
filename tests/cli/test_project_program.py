"""The verbs that run a project's program run it as the Pulumi CLI would: where Pulumi.yaml's `main`
points, in its folder, as the project Pulumi.yaml names (in every URN, and the namespace of the
program's own config, with Pulumi.yaml's `config:` merged in); two resources with one URN fail the
program as `pulumi up` fails it, and resources told apart only by a grandparent's type are two."""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.cli import git, run
from support.stacks import ROOT

# a team's program after the platform's (the project's own program, then the lines given)
THINGS = """
import pulumi
outer_a = pulumi.ComponentResource("team:index:A", "a")
outer_b = pulumi.ComponentResource("team:index:B", "b")
for name, outer in (("a", outer_a), ("b", outer_b)):
    middle = pulumi.ComponentResource("team:index:Middle", f"middle-{name}",
                                      opts=pulumi.ResourceOptions(parent=outer))
    pulumi.ComponentResource("team:index:Leaf", "leaf", opts=pulumi.ResourceOptions(parent=middle))
"""


def _project(tmp_path: Path, extra: str, name: str = "eks-devices", config: str = "", declared: str = "") -> Path:
    (tmp_path / "Pulumi.yaml").write_text(f"name: {name}\nruntime: python\nstackConfigDir: stacks\n{declared}")
    (tmp_path / "__main__.py").write_text((ROOT / "__main__.py").read_text() + extra)
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text((ROOT / "stacks" / "Pulumi.dev.yaml").read_text() + config)
    return tmp_path


def test_the_program_runs_in_the_project_pulumi_yaml_names(tmp_path: Path) -> None:
    """A team's project reads its own config (`pulumi.Config()`, namespaced by the project's name),
    and every URN names that project, as under `pulumi up`."""
    extra = ('\nimport pulumi\npulumi.export("team", pulumi.Config().require("team"))\n'
             'pulumi.export("project", pulumi.get_project())\n')
    result = run("preview", "dev", "--json", "--project-dir",
                 str(_project(tmp_path, extra, name="research-gpus", config="  research-gpus:team: ml\n")))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    urns = [r["urn"] for r in data["resources"]]
    assert len(urns) > 50 and all(u.startswith("urn:pulumi:dev::research-gpus::") for u in urns)


def test_a_pulumi_yaml_without_a_project_name_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path, "")
    (project / "Pulumi.yaml").write_text("runtime: python\nstackConfigDir: stacks\n")
    result = run("preview", "dev", "--project-dir", str(project))
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (f"{project.resolve() / 'Pulumi.yaml'}: name None (accepted: a project name of "
                                     "letters, digits, '-', '_' and '.', at most 100 characters, as the Pulumi CLI "
                                     "requires)")


def test_two_resources_with_one_urn_fail_the_program_as_the_engine_does(tmp_path: Path) -> None:
    extra = '\nimport pulumi\npulumi.ComponentResource("team:index:Thing", "x")\npulumi.ComponentResource("team:index:Thing", "x")\n'
    result = run("preview", "dev", "--project-dir", str(_project(tmp_path, extra)))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "the Pulumi program failed for stack dev: Duplicate resource URN "
        "'urn:pulumi:dev::eks-devices::team:index:Thing::x'; try giving it a unique name "
        "(EKS_DEVICES_TRACEBACK=1 shows where)")
    assert result.stdout == ""


def test_a_grandparents_type_tells_two_resources_apart(tmp_path: Path) -> None:
    result = run("preview", "dev", "--json", "--project-dir", str(_project(tmp_path, THINGS)))
    assert result.returncode == 0, result.stderr
    leaves = sorted(r["urn"] for r in json.loads(result.stdout)["resources"] if r["type"] == "team:index:Leaf")
    assert leaves == [f"urn:pulumi:dev::eks-devices::team:index:{outer}$team:index:Middle$team:index:Leaf::leaf"
                      for outer in ("A", "B")]


def test_pulumi_yaml_config_reaches_the_program_and_a_key_no_stack_sets_stops_every_verb(tmp_path: Path) -> None:
    """Pulumi.yaml's `config:` is merged into each stack's as the Pulumi CLI merges it: a default the
    stack leaves out reaches the program; a key of the project's with no value anywhere is exit 2 for
    `check` and `preview` alike, naming the key."""
    extra = '\nimport pulumi\npulumi.ComponentResource("team:index:Team", pulumi.Config().require("team"))\n'
    project = _project(tmp_path, extra, name="research-gpus", declared="config:\n  team: ml\n  aws:profile: ops\n")
    result = run("preview", "dev", "--json", "--project-dir", str(project))
    assert result.returncode == 0, result.stderr
    assert "urn:pulumi:dev::research-gpus::team:index:Team::ml" in {r["urn"] for r in json.loads(result.stdout)["resources"]}
    (project / "Pulumi.yaml").write_text((project / "Pulumi.yaml").read_text() + "  quota:\n    type: integer\n")
    for verb in ("check", "preview"):
        result = run(verb, "dev", "--project-dir", str(project), env={**os.environ, "COLUMNS": "500"})
        assert result.returncode == 2, (verb, result.stderr)
        assert "research-gpus:quota: given no value in stack dev and no default in Pulumi.yaml" in (
            result.stdout + result.stderr), verb


def test_the_program_is_where_main_points_and_runs_in_its_folder(tmp_path: Path) -> None:
    """`main: infra` runs `infra/__main__.py` with `infra/` as the working folder and first on
    sys.path, so its sibling modules import and its relative paths open, wherever the command runs."""
    project = _project(tmp_path, "")
    (project / "Pulumi.yaml").write_text((project / "Pulumi.yaml").read_text() + "main: infra\n")
    (project / "infra").mkdir()
    (project / "__main__.py").rename(project / "infra" / "__main__.py")
    (project / "infra" / "naming.py").write_text("def team() -> str:\n    return open('team.txt').read().strip()\n")
    (project / "infra" / "team.txt").write_text("ml\n")
    with (project / "infra" / "__main__.py").open("a") as main:
        main.write('\nimport naming\nimport pulumi\npulumi.ComponentResource("team:index:Team", naming.team())\n')
    result = run("preview", "dev", "--json", "--project-dir", str(project), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "urn:pulumi:dev::eks-devices::team:index:Team::ml" in {r["urn"] for r in json.loads(result.stdout)["resources"]}
    (project / "Pulumi.yaml").write_text((project / "Pulumi.yaml").read_text().replace("main: infra", "main: src"))
    result = run("preview", "dev", "--project-dir", str(project))
    assert result.returncode == 2 and f"no Pulumi program: {project / 'src'}" in result.stderr


def test_diff_runs_the_baseline_with_the_projects_config_too(tmp_path: Path) -> None:
    """The baseline's program reads a key only Pulumi.yaml sets, as the current one does: the same
    stack file against itself is no change."""
    extra = '\nimport pulumi\npulumi.ComponentResource("team:index:Team", pulumi.Config().require("team"))\n'
    project = _project(tmp_path, extra, name="research-gpus", declared="config:\n  team: ml\n")
    result = run("diff", "dev", "--against", str(project / "stacks" / "Pulumi.dev.yaml"), "--json",
                 "--project-dir", str(project))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["changes"] == []


def test_a_git_revision_baseline_runs_with_that_revisions_pulumi_yaml_config(tmp_path: Path) -> None:
    """The stack file unchanged, a default in Pulumi.yaml changed since HEAD: the next `pulumi up` renames
    what the program names from it, and the diff shows that, not the current default on both sides."""
    extra = '\nimport pulumi\npulumi.ComponentResource("team:index:Team", pulumi.Config().require("team"))\n'
    project = _project(tmp_path, extra, name="research-gpus", declared="config:\n  team: ml\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "v1")
    (project / "Pulumi.yaml").write_text((project / "Pulumi.yaml").read_text().replace("team: ml", "team: vision"))
    result = run("diff", "dev", "--against", "HEAD", "--json", "--project-dir", str(project))
    assert result.returncode == 0, result.stderr
    changes = {(c["action"], c["urn"].rpartition("::")[2]) for c in json.loads(result.stdout)["changes"]
               if c["type"] == "team:index:Team"}
    assert changes == {("create", "vision"), ("delete", "ml")}


def test_a_config_key_the_program_requires_and_nothing_sets_is_named_with_how_to_set_it(tmp_path: Path) -> None:
    extra = '\nimport pulumi\npulumi.Config().require("team")\n'
    result = run("preview", "dev", "--project-dir", str(_project(tmp_path, extra, name="research-gpus")))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "the Pulumi program failed for stack dev: Missing required configuration variable 'research-gpus:team'; "
        "please set a value using the command `pulumi config set research-gpus:team <value>` "
        "(EKS_DEVICES_TRACEBACK=1 shows where)")
