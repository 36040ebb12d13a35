"""Fixtures shared by the test modules: a moto-mocked AWS account per preflight module."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from hypothesis import settings

from support import aws

# every property test repeatable: its examples drawn from the test's own name, none replayed from a
# database a local run left behind (a test that pins its own `@seed` keeps it)
settings.register_profile("repeatable", derandomize=True, database=None)
settings.load_profile("repeatable")


@pytest.fixture(scope="module")
def account() -> Iterator[None]:
    """One mocked AWS account for the whole module (tests add what they need to it)."""
    with aws.mocked():
        yield


@pytest.fixture
def session(account: None) -> boto3.Session:
    return aws.new_session()
