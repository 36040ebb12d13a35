"""`eks-devices preview` checks what the program sends pulumi-eks (`offline.eks_contract`): a violation
is an error line in the text, `eksContract.violations` in JSON, and exit 1. (The shipped stacks keep
the contract: tests/offline/test_preview.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pulumi_eks as eks
import yaml
from rich.console import Console

from eks_devices.offline import preview
from support import engine, stacks
from support.cli import run as cli

CLUSTER = "eks:index:Cluster"

# a program that hands pulumi-eks `autoMode` as an Output: pulumi-eks reads every field of it as truthy
BROKEN = '''\
import pulumi
import pulumi_eks as eks

auto_mode = pulumi.Output.from_input(eks.AutoModeOptionsArgs(enabled=True, create_node_role=False))
eks.Cluster("c", auto_mode=auto_mode, authentication_mode=eks.AuthenticationMode.API,
            skip_default_node_group=True, create_instance_role=False)
'''


def _broken() -> None:
    auto_mode = pulumi.Output.from_input(eks.AutoModeOptionsArgs(enabled=True, create_node_role=False))
    eks.Cluster("c", auto_mode=auto_mode, authentication_mode=eks.AuthenticationMode.API,
                skip_default_node_group=True, create_instance_role=False)


def test_a_broken_input_and_what_pulumi_eks_would_then_create_are_reported() -> None:
    data = preview.contract_data(engine.run(_broken, stacks.config("auto-mode")), "auto-mode")
    found = [(v["path"], v["message"].split(",")[0]) for v in data["violations"]]
    assert found == [("Cluster.autoMode", "plain-only in pulumi_eks (AutoModeOptionsArgs) but sent as an Output;"
                                          " pulumi-eks then reads an Output"),
                     ("Cluster", "pulumi-eks would create its own auto-mode-node-role"),
                     ("Cluster", "pulumi-eks would create its own coredns-addon")]
    assert all(v["urn"] == data["checked"][0] and v["type"] == CLUSTER and v["source"] for v in data["violations"])
    console = Console(record=True, width=400)
    preview.print_contract(console, data)
    text = console.export_text()
    assert "error pulumi-eks contract at Cluster.autoMode: plain-only" in text
    assert "3 pulumi-eks contract violation(s): a bug in the Pulumi program" in text


def test_what_pulumi_eks_would_not_create_is_reported() -> None:
    """Outside Auto Mode the toolkit leaves the VPC CNI and kube-proxy add-ons to pulumi-eks."""
    data = preview.contract_data(engine.run(_broken, stacks.config("auto-mode")), "karpenter")
    missing = [v["message"] for v in data["violations"] if "would not create" in v["message"]]
    assert missing == [f"pulumi-eks would not create the {e} the toolkit leaves to it with cluster.mode karpenter"
                       for e in ("kube-proxy-addon", "vpc-cni-addon")]


def test_preview_reports_violations_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text((stacks.ROOT / "Pulumi.yaml").read_text())
    (tmp_path / "__main__.py").write_text(BROKEN)
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": stacks.shipped("dev")}))
    result = cli("preview", "dev", "--json", "--project-dir", str(tmp_path))
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["summary"]["errors"] == 0  # the stack's configuration is fine: the program is not
    assert [v["path"] for v in data["eksContract"]["violations"]] == ["Cluster.autoMode", "Cluster", "Cluster"]
    result = cli("preview", "dev", "--project-dir", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert "error pulumi-eks contract at Cluster.autoMode" in result.stdout
    assert "No findings." in result.stdout
