"""The preview (text and --json) says when Auto Mode infers a pool's device manager per node."""

from __future__ import annotations

from rich.console import Console

from eks_devices.cli.report import plan_data, print_plan
from support import stacks

POOLS = {"p": {"instanceTypes": ["p5.48xlarge"], "devices": {"nvidia": "inferred", "efa": "dra"}},
         "q": {"instanceTypes": ["g6.xlarge"]}}


def test_json_records_the_inferred_manager_and_why() -> None:
    data = plan_data(stacks.plan("auto-mode", pools=POOLS))
    nvidia = data["pools"]["p"]["managers"]["nvidia"]
    assert (nvidia["manager"], nvidia["requested"], nvidia["release"]) == ("inferred", "inferred", "auto-mode")
    assert "per node" in nvidia["reason"] and "serves DRA Pods and device-plugin Pods" in nvidia["reason"]
    assert "eks.amazonaws.com/device-manager-nvidia" not in data["pools"]["p"]["labels"]
    assert data["pools"]["p"]["labels"]["eks.amazonaws.com/device-manager-efa"] == "dra"


def test_text_names_the_inferred_pools_and_what_auto_mode_does() -> None:
    console = Console(record=True, width=400)
    print_plan(console, stacks.plan("auto-mode", pools=POOLS), "preview")
    text = console.export_text()
    assert "Inferred device managers: p (nvidia)." in text
    assert "one pool serves both kinds of Pods" in text
    console = Console(record=True, width=400)
    print_plan(console, stacks.plan("auto-mode", pools={"q": POOLS["q"]}), "preview")
    assert "Inferred" not in console.export_text()
