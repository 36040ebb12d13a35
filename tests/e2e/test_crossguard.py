"""CrossGuard through the real Pulumi CLI: `pulumi preview --policy-pack` with the project's policy pack.

The CLI runs a Python policy pack through the Python language host (`pulumi-language-python`), which
the Go module proxy does not serve (every version of
`github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3` answers 403 "This module version is
not available"). The next-best real path is the CLI's own: a `--policy-pack` that is an executable file
is launched as an analyzer plugin with the engine's address (pkg/resource/plugin/analyzer_plugin.go),
and the executable here starts the pack exactly as the language host does, `python -m pulumi.policy
<engine> <pack>`. Everything else is real: the CLI built from Go modules plans a Kubernetes-only program
(an Automation API inline program) with the real provider against the real API server, sends the
resources to the pack, and fails the preview on a mandatory violation.
"""

from __future__ import annotations

import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pulumi import automation as auto

from e2e import pulumi_cli
from e2e.controlplane import ControlPlane
from support.stacks import ROOT

LABEL = "example.com/gpu-manager"
IMAGES = {"device-plugin": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
          "dra-driver": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"}


@pytest.fixture(scope="module")
def policy_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An executable analyzer that starts the project's policy pack as the Python language host would."""
    launcher = tmp_path_factory.mktemp("policy") / "eks-devices-policy"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pulumi.policy "$1" "{ROOT / "policypack"}"\n')
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    return launcher


def program(kubeconfig: str, scoped: bool) -> Callable[[], None]:
    """A team's Kubernetes-only program, no eks-devices: a Karpenter GPU NodePool and the NVIDIA device
    plugin and DRA driver as raw DaemonSets. Unscoped, both managers land on the pool's nodes; scoped,
    each DaemonSet selects its own label value and the pool carries the DRA one."""

    def run() -> None:
        provider = k8s.Provider("cluster", kubeconfig=kubeconfig, enable_server_side_apply=True)
        opts = pulumi.ResourceOptions(provider=provider)
        labels = {"metadata": {"labels": {LABEL: "dra"}}} if scoped else {}
        k8s.apiextensions.CustomResource("gpu-pool", api_version="karpenter.sh/v1", kind="NodePool",
                                         metadata={"name": "gpu-pool"}, spec={"template": {**labels, "spec": {
                                             "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                              "name": "default"},
                                             "requirements": [{"key": "karpenter.k8s.aws/instance-family",
                                                               "operator": "In", "values": ["g6e"]}]}}}, opts=opts)
        ns = k8s.core.v1.Namespace("nvidia", metadata={"name": "nvidia"}, opts=opts)
        for name, image in IMAGES.items():
            selector = {LABEL: "dra" if name == "dra-driver" else "plugin"} if scoped else None
            k8s.apps.v1.DaemonSet(name, metadata={"name": name, "namespace": "nvidia"}, spec={
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                             "spec": {"nodeSelector": selector, "containers": [{"name": name, "image": image}]}}},
                opts=pulumi.ResourceOptions(provider=provider, depends_on=[ns]))

    return run


def preview(plane: ControlPlane, env: dict[str, str], pack: Path, stack: str, scoped: bool) -> tuple[bool, str]:
    """Whether the real CLI's preview with the pack succeeded, and everything it printed."""
    lines: list[str] = []
    s = auto.create_or_select_stack(stack_name=stack, project_name=pulumi_cli.PROJECT,
                                    program=program(plane.kubeconfig.read_text(), scoped),
                                    opts=pulumi_cli.workspace(plane, env))
    try:
        s.preview(policy_packs=[str(pack)], on_output=lines.append)
        return True, "\n".join(lines)
    except auto.errors.CommandError as exc:
        return False, "\n".join(lines) + str(exc)
    finally:
        s.workspace.remove_stack(stack)


def test_a_double_managed_node_shape_fails_the_preview(control_plane: ControlPlane, pulumi_env: dict[str, str],
                                                       policy_pack: Path) -> None:
    ok, out = preview(control_plane, pulumi_env, policy_pack, "crossguard-unscoped", scoped=False)
    assert not ok, out
    assert "one-manager-per-node" in out and "mandatory" in out, out
    assert "gpu-pool" in out and "nvidia device managers" in out, out


def test_the_scoped_program_passes(control_plane: ControlPlane, pulumi_env: dict[str, str], policy_pack: Path) -> None:
    ok, out = preview(control_plane, pulumi_env, policy_pack, "crossguard-scoped", scoped=True)
    assert ok, out
    assert "✅ eks-devices@" in out, f"the pack did not run: {out}"
