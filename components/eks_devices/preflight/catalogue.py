"""Refresh the committed instance catalogue from a live account's EC2 `DescribeInstanceTypes`
(read-only): the boto3 side of `eks_devices.core.knowledge.catalog_refresh`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3

from eks_devices.core.knowledge.catalog_refresh import SNAPSHOT, write


def refresh(region: str = "us-east-1", path: Path = SNAPSHOT, client: Any = None) -> int:
    """Write the snapshot from the region's EC2 endpoint (or the given client); returns the number of types."""
    return write(client or boto3.client("ec2", region_name=region), path)
