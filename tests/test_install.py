"""How the project installs: users get the toolkit as a normal package (pip compiles its bytecode at
install time) at the tested pins; developers get it editable. constraints.txt is the one home of the
pins."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import distributions

from support.stacks import ROOT


def _lines(name: str) -> list[str]:
    return [line.split("#")[0].strip() for line in (ROOT / name).read_text().splitlines() if line.split("#")[0].strip()]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


PINS = {_name(line): line.split("==")[1] for line in _lines("constraints.txt")}


def test_every_line_of_the_constraints_is_an_exact_pin() -> None:
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+==[0-9][0-9A-Za-z.+-]*", line) for line in _lines("constraints.txt"))


def test_every_dependency_of_the_toolkit_is_pinned() -> None:
    """A user's install resolves every run-time dependency to the version the suite ran with."""
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert {_name(d) for d in dependencies} - set(PINS) == set()


def test_every_distribution_the_tests_run_with_is_pinned_at_its_version() -> None:
    """Not only the direct dependencies: a transitive one left free resolves to whatever is newest on the
    day of each install (protobuf 6 for users while the suite ran 5.29), so users would run versions no test
    ran. The environment the suite runs in was installed from requirements-dev.txt under the constraints."""
    own = {"eks-devices", "pip", "setuptools"}  # the project and the virtual environment's own tools
    installed = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower(): d.version for d in distributions()}
    unpinned = {name: version for name, version in installed.items() if name not in own and PINS.get(name) != version}
    assert unpinned == {}, f"pin these in constraints.txt (installed: {unpinned})"


def test_users_install_the_toolkit_non_editable_and_developers_editable() -> None:
    users, developers = _lines("requirements.txt"), _lines("requirements-dev.txt")
    assert users == ["-c constraints.txt", "."]
    assert developers[:2] == ["-c constraints.txt", "-e ."]
    assert all("==" not in line for line in developers)  # versions only in constraints.txt
    assert {_name(line) for line in developers[2:]} <= set(PINS)


def test_the_readme_installs_users_and_developers_as_ci_does() -> None:
    first, second = (ROOT / "README.md").read_text().split("```sh\n", 1)[1].splitlines()[:2]
    assert "-r requirements.txt " in first and "eks-devices preview" in first
    assert "-r requirements-dev.txt " in second and "pytest" in second
