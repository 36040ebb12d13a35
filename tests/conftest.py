"""Fixtures shared by the test modules: a moto-mocked AWS account per preflight module."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest

from support import aws


@pytest.fixture(scope="module")
def account() -> Iterator[None]:
    """One mocked AWS account for the whole module (tests add what they need to it)."""
    with aws.mocked():
        yield


@pytest.fixture
def session(account: None) -> boto3.Session:
    return aws.new_session()
