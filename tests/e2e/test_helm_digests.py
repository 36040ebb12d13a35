"""The real Helm as the oracle for `eks-devices:digests` on charts: a Helm release whose chart reference
the toolkit pins (`derive.digests.pinned_reference`), applied by the real Pulumi CLI and the real
`pulumi-resource-kubernetes` (whose embedded Helm pulls it) from a local OCI registry, against the real
API server. The pinned chart installs; a digest that is not the version's, or a version whose tag was
moved to other content after it was pinned, is refused and nothing is installed."""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pulumi import automation as auto

from e2e import pulumi_cli
from e2e.controlplane import ApiError, ControlPlane
from e2e.oci_registry import Registry
from e2e.pulumi_cli import PROJECT
from eks_devices.core.derive.digests import pinned_reference

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-chart
  namespace: default
data:
  content: "%s"
"""


def up(plane: ControlPlane, env: dict[str, str], name: str, chart: str, seen: Callable[[], str]) -> str:
    """`pulumi up` of one Helm release of `chart` at 0.1.0: what `seen` reads of it before the stack is
    destroyed, or the engine's error."""
    kubeconfig = plane.kubeconfig.read_text()

    def program() -> None:
        provider = k8s.Provider("cluster", kubeconfig=kubeconfig)
        k8s.helm.v3.Release(name, k8s.helm.v3.ReleaseArgs(name=name, chart=chart, version="0.1.0",
                                                         namespace="default"),
                            opts=pulumi.ResourceOptions(provider=provider))

    ws = pulumi_cli.workspace(plane, env)
    s = auto.create_or_select_stack(stack_name=name, project_name=PROJECT, program=program, opts=ws)
    try:
        s.up(on_output=lambda _line: None)
        return seen()
    except auto.CommandError as exc:
        return f"failed: {exc}"
    finally:
        s.destroy(on_output=lambda _line: None)
        s.workspace.remove_stack(name)


def test_a_pinned_chart_installs_and_a_wrong_or_moved_digest_is_refused(
        control_plane: ControlPlane, chart_env: dict[str, str], registry: Registry) -> None:
    reference = f"oci://{registry.host}/charts/demo"
    pinned = registry.push_chart("charts/demo", "demo", "0.1.0", {"cm.yaml": CONFIGMAP % "pinned"})
    other = registry.push_chart("charts/other", "other", "0.1.0", {"cm.yaml": CONFIGMAP % "other"})

    def content(name: str) -> Callable[[], str]:
        return lambda: control_plane.get("v1", "ConfigMap", f"{name}-chart", "default")["data"]["content"]

    def pin(name: str, digest: str) -> str:
        return up(control_plane, chart_env, name, pinned_reference(reference, f"0.1.0@{digest}"), content(name))

    assert pin("right", pinned) == "pinned"  # the version's digest: Helm installs that content
    wrong = pin("wrong", other)  # another chart's digest: refused when the version's tag resolves elsewhere
    assert wrong.startswith("failed:") and "digest mismatch" in wrong, wrong
    registry.push_chart("charts/demo", "demo", "0.1.0", {"cm.yaml": CONFIGMAP % "moved"})  # the tag moves
    moved = pin("moved", pinned)
    assert moved.startswith("failed:") and "digest mismatch" in moved, moved
    for name in ("wrong", "moved"):
        with pytest.raises(ApiError):
            content(name)()
    # without the pin the moved tag's content is what installs: the pin is what stopped it
    assert up(control_plane, chart_env, "unpinned", reference, content("unpinned")) == "moved"
