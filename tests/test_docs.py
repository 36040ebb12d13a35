"""The README stays true and short: it starts with the two commands CI runs, links the reference in docs/ (every
rule, every preflight action) and names every module in its architecture section."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from eks_devices.core.config.stack import Spec
from eks_devices.core.rules import RULES

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def test_readme_is_short_and_links_the_reference() -> None:
    assert len(README.splitlines()) <= 300
    assert "(docs/rules.md)" in README and "(docs/usage.md)" in README and "(docs/configuration.md)" in README


def test_the_rule_catalogue_lists_every_rule() -> None:
    rules = (ROOT / "docs" / "rules.md").read_text()
    missing = [slug for slug in RULES if f"`{slug}`" not in rules]
    assert not missing


def test_ci_runs_the_readme_test_command() -> None:
    test_command = README.split("```sh\n", 1)[1].splitlines()[1]
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_the_usage_guide_names_every_preflight_action() -> None:
    policy = json.loads((ROOT / "policies" / "preflight-readonly.json").read_text())
    actions = {a for statement in policy["Statement"] for a in (
        statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]])}
    usage = (ROOT / "docs" / "usage.md").read_text()
    assert actions and not [a for a in actions if f"`{a}`" not in usage]


def test_pulumi_yaml_declares_every_config_key() -> None:
    """`pulumi up` reads the same keys the spec accepts: the project file declares each of them."""
    declared = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["config"]
    accepted = {field.alias for name, field in Spec.model_fields.items() if name not in ("region", "aws_profile")}
    assert set(declared) == accepted
    # a declared key without a default must be in every stack: only the cluster section is required
    assert {key for key, decl in declared.items() if "default" not in decl} == {"cluster"}


def test_architecture_names_every_module_of_the_layers_it_describes() -> None:
    """The README's architecture section names every module of the package's top level, the core's
    top level, `core/derive`, `core/knowledge`, `core/config`, `offline` and `package`: a module added
    by a merge gets its line (rules, manifests, CLI and preflight are 'one module per concern')."""
    import re

    architecture = README.split("\n## Architecture\n", 1)[1]
    package = ROOT / "components" / "eks_devices"
    modules = [p for d in ("", "core", "core/derive", "core/knowledge", "core/config", "offline", "package")
               for p in sorted((package / d).iterdir())
               if (p.suffix == ".py" and not p.name.startswith("__")) or (p / "__init__.py").exists()]
    assert len(modules) > 40
    missing = [str(p.relative_to(package)) for p in modules
               if not re.search(rf"(?<![\w]){re.escape(p.stem)}(?![\w])", architecture)]
    assert not missing, missing


def test_every_doc_the_code_and_docs_name_exists() -> None:
    """A `docs/<page>.md` named in the package, the scripts, the examples or the docs is a page of docs/."""
    import re

    named = {(path.relative_to(ROOT), page)
             for folder in ("components", "scripts", "examples", "docs", "policypack")
             for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".md", ".yaml")
             for page in re.findall(r"docs/([A-Za-z0-9_-]+\.md)", path.read_text(encoding="utf-8"))}
    named |= {(Path("README.md"), page) for page in re.findall(r"docs/([A-Za-z0-9_-]+\.md)", README)}
    assert len(named) > 20
    assert not [(str(where), page) for where, page in named if not (ROOT / "docs" / page).is_file()]
