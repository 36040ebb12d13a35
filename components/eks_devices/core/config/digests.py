"""`eks-devices:digests`: charts and container images pinned by digest, so that what runs is what was
reviewed even if a tag is moved or a registry serves something else.

Each pin reads `<version or tag>@sha256:<64 hex digits>`: the version or tag stays for people (and is
checked against what the stack installs), the digest is what is pulled.

- `charts`: OCI charts by key, the chart's manifest digest at that version (what `helm pull` prints as
  `Digest:`). Helm 3.18 (the Pulumi Kubernetes provider embeds 3.18.6) takes `oci://…/chart@sha256:…`
  with a version, refuses it when the version's tag resolves to another digest, and pulls by digest
  (helm v3.18.6 pkg/registry/client.go `ValidateReference`, pkg/getter/ocigetter.go `get`). A chart
  from an HTTP Helm repository cannot be pinned: Helm checks no digest there.
- `images`: container images by repository (as the release runs it: the region's EKS registry for the
  EFA charts, a mirror if `helmValues` moves the repository), written into the chart's tag value as
  `<tag>@sha256:…` (Karpenter: its `controller.image.digest`), which the kubelet pulls by digest.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from eks_devices.core.config.base import Model
from eks_devices.core.knowledge import charts

PIN = re.compile(r"(?P<label>[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127})@(?P<digest>sha256:[0-9a-f]{64})")
PIN_ACCEPTED = "<version or tag>@sha256:<64 lower-case hex digits>, e.g. 1.15.0@sha256:7231…ae23"
# a repository as an image reference names it (OCI distribution spec: lower-case path components, an
# optional registry host with port)
REPOSITORY = re.compile(r"[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)+")


def split(pin: str) -> tuple[str, str]:
    """A pin's version or tag, and its digest."""
    found = PIN.fullmatch(pin)
    if found is None:
        raise ValueError(pin)
    return found["label"], found["digest"]


class Digests(Model):
    """Charts and images pinned by digest (none unless listed)."""

    charts: dict[str, str] = Field(default_factory=dict)
    """OCI charts by key: `<version>@sha256:…`, the chart's manifest digest at the version the stack installs."""
    images: dict[str, str] = Field(default_factory=dict)
    """Container images by repository: `<tag>@sha256:…`, the image's manifest (or index) digest."""

    @field_validator("charts")
    @classmethod
    def _charts(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(key for key in value if key not in charts.CHARTS)
        if unknown:
            raise ValueError(f"chart keys: {', '.join(charts.CHARTS)} (not {', '.join(unknown)})")
        http = sorted(key for key in value if not charts.CHARTS[key].is_oci)
        if http:
            oci = ", ".join(key for key, chart in charts.CHARTS.items() if chart.is_oci)
            raise ValueError(f"OCI charts ({oci}); {', '.join(http)} come from an HTTP Helm repository, where Helm "
                             "checks no digest: pin their images instead")
        _pins(value)
        return value

    @field_validator("images")
    @classmethod
    def _images(cls, value: dict[str, str]) -> dict[str, str]:
        bad = sorted(repository for repository in value if not REPOSITORY.fullmatch(repository))
        if bad:
            raise ValueError(f"image repositories such as public.ecr.aws/karpenter/controller, without tag or "
                             f"digest (not {', '.join(repr(b) for b in bad)})")
        _pins(value)
        return value


def _pins(value: dict[str, str]) -> None:
    bad = sorted(key for key, pin in value.items() if not (isinstance(pin, str) and PIN.fullmatch(pin)))
    if bad:
        raise ValueError(f"{PIN_ACCEPTED} (not for {', '.join(bad)})")
