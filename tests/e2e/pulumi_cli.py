"""The real Pulumi CLI for the e2e tier: a Pulumi home holding the `pulumi-resource-kubernetes` built
from its Go module (installed under the version the Python SDK asks for, so nothing is downloaded), a
local file backend, and Automation API workspace options that use the CLI from the engines' folder."""

from __future__ import annotations

import os
import subprocess
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml
from pulumi import automation as auto

from e2e.controlplane import ControlPlane

PROJECT = "eks-devices-e2e"

# Auto Mode's NodeClass has no published CRD; the engine only needs the API server to store it.
AUTO_MODE_NODE_CLASS_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "nodeclasses.eks.amazonaws.com"},
    "spec": {"group": "eks.amazonaws.com", "scope": "Cluster",
             "names": {"kind": "NodeClass", "plural": "nodeclasses", "singular": "nodeclass", "listKind": "NodeClassList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def provider_version() -> str:
    """The `pulumi-resource-kubernetes` version the pinned Python SDK asks the engine for."""
    return version("pulumi_kubernetes")


def prepare(plane: ControlPlane, home: Path, backend: Path) -> dict[str, str]:
    """The environment of a Pulumi home with the built provider and a file backend; Karpenter's and
    Auto Mode's CRDs installed on the control plane."""
    env = {"PULUMI_HOME": str(home), "PULUMI_BACKEND_URL": f"file://{backend}",
           "PULUMI_CONFIG_PASSPHRASE": "e2e", "PULUMI_SKIP_UPDATE_CHECK": "true",
           "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true", "PULUMI_DISABLE_REGISTRY_RESOLVE": "true"}
    subprocess.run([str(plane.bin_dir / "pulumi"), "plugin", "install", "resource", "kubernetes",
                    provider_version(), "--file", str(plane.bin_dir / "pulumi-resource-kubernetes")],
                   env={**os.environ, **env}, check=True, capture_output=True)
    crds = [yaml.safe_load(p.read_text()) for p in sorted(plane.crds.glob("karpenter.*.yaml"))]
    plane.install_crds([*crds, AUTO_MODE_NODE_CLASS_CRD])
    return env


def workspace(plane: ControlPlane, env: dict[str, str], folder: str | None = None) -> auto.LocalWorkspaceOptions:
    """Automation API options: the project on the file backend, run by the CLI built from Go modules;
    with `folder`, the project its Pulumi.yaml and stack files describe, secrets by passphrase."""
    command = auto.PulumiCommand(root=str(plane.bin_dir.parent))
    if folder is not None:
        return auto.LocalWorkspaceOptions(env_vars=env, pulumi_home=env["PULUMI_HOME"], work_dir=folder,
                                          secrets_provider="passphrase", pulumi_command=command)
    return auto.LocalWorkspaceOptions(
        env_vars=env, pulumi_home=env["PULUMI_HOME"],
        project_settings=auto.ProjectSettings(name=PROJECT, runtime="python",
                                              backend=auto.ProjectBackend(url=env["PULUMI_BACKEND_URL"])),
        pulumi_command=command)
