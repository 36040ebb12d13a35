"""The plugin folder as the Python language host reads it: `runtime: python`, and run-time
requirements pinned like the repository's."""

from __future__ import annotations

import yaml

from support.stacks import ROOT

COMPONENTS = ROOT / "components"


def pins(path) -> dict[str, str]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return dict(line.split("==") for line in lines if "==" in line)


def test_plugin_runs_on_the_python_runtime() -> None:
    assert yaml.safe_load((COMPONENTS / "PulumiPlugin.yaml").read_text()) == {"runtime": "python"}
    assert (COMPONENTS / "__main__.py").is_file()
    assert not (ROOT / "PulumiPlugin.yaml").exists()  # at the root it would run the project's program


def test_plugin_requirements_pin_what_the_repository_pins() -> None:
    plugin, repository = pins(COMPONENTS / "requirements.txt"), pins(ROOT / "constraints.txt")
    assert {"pulumi", "pulumi-aws", "pulumi-eks", "pulumi-kubernetes", "pydantic"} <= set(plugin)
    assert {k: repository.get(k) for k in plugin} == plugin
