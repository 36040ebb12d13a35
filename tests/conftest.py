"""Fixtures shared by the test modules: a moto-mocked AWS account per preflight module; the e2e folder left
uncollected when the run deselects the e2e tier."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from hypothesis import settings

from support import aws

# every property test repeatable: its examples drawn from the test's own name, none replayed from a
# database a local run left behind (a test that pins its own `@seed` keeps it)
settings.register_profile("repeatable", derandomize=True, database=None)
settings.load_profile("repeatable")

E2E = Path(__file__).parent / "e2e"
WITHOUT_E2E = "not e2e"  # the marker expression of the fast tier (README, Development)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Every test under `e2e/` carries the e2e marker (`e2e/conftest.py`), so `-m "not e2e"` deselects all of
    them: not importing their modules spares each worker the seconds they spend drawing and rendering stacks."""
    if collection_path == E2E and config.getoption("markexpr", "").strip() == WITHOUT_E2E:
        return True
    return None


@pytest.fixture(scope="module")
def account() -> Iterator[None]:
    """One mocked AWS account for the whole module (tests add what they need to it)."""
    with aws.mocked():
        yield


@pytest.fixture
def session(account: None) -> boto3.Session:
    return aws.new_session()
