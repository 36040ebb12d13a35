"""The policy pack run as the Pulumi CLI runs it: `python -m pulumi.policy <engine> <pack dir>`
prints the port of its Analyzer gRPC service; the engine then asks for the pack's policies
(GetAnalyzerInfo) and sends the stack's resources (AnalyzeStack)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from eks_devices.core.rules import resource_rules
from eks_devices.offline.engine import Recording
from support.engine import main, run
from support.programs import foreign_program
from support.stacks import ROOT, shipped


@pytest.fixture(scope="module")
def analyzer() -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    with subprocess.Popen([sys.executable, "-m", "pulumi.policy", "127.0.0.1:0", str(ROOT / "policypack")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT / "policypack") as pack:
        try:  # leaving the `with` closes the pipes and waits for the pack
            port = pack.stdout.readline().decode().strip() if pack.stdout else ""
            assert port.isdigit(), (f"the pack printed {port!r}; "
                                    f"stderr: {pack.stderr.read().decode() if pack.stderr else ''}")
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                grpc.channel_ready_future(channel).result(timeout=30)
                yield analyzer_pb2_grpc.AnalyzerStub(channel)
        finally:
            pack.terminate()
            pack.wait(timeout=30)


def engine_form(value: Any) -> Any:
    """Properties as the engine sends them to an analyzer: a resource reference becomes its id
    (a component's URN), as the engine marshals them without keeping resources."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_resource_sig:
            return value.get("id") or value["urn"]
        return {k: engine_form(v) for k, v in value.items()}
    if isinstance(value, list):
        return [engine_form(v) for v in value]
    return value


def request(rec: Recording) -> analyzer_pb2.AnalyzeStackRequest:
    """The engine's AnalyzeStack request for a recorded program: each resource with its properties
    (inputs, outputs over them) and its parent."""
    resources = []
    for r in rec.resources:
        props = struct_pb2.Struct()
        props.update(engine_form({**r.inputs, **r.outputs}))
        resources.append(analyzer_pb2.AnalyzerResource(type=r.type, name=r.name, urn=r.urn, properties=props,
                                                       parent=r.parent))
    return analyzer_pb2.AnalyzeStackRequest(resources=resources)


def test_the_pack_describes_its_policies_as_mandatory(analyzer: analyzer_pb2_grpc.AnalyzerStub) -> None:
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=30)
    assert info.name == "eks-devices"
    assert {p.name for p in info.policies} == {r.slug for r in resource_rules()}
    levels = {p.name: p.enforcementLevel for p in info.policies}
    assert levels == {r.slug: analyzer_pb2.MANDATORY if r.severity == "error" else analyzer_pb2.ADVISORY
                      for r in resource_rules()}
    assert levels["one-manager-per-node"] == analyzer_pb2.MANDATORY
    assert levels["efa-partial-interfaces"] == analyzer_pb2.ADVISORY


def test_a_shipped_stack_passes(analyzer: analyzer_pb2_grpc.AnalyzerStub) -> None:
    response = analyzer.AnalyzeStack(request(main(shipped("staging"))), timeout=60)
    assert list(response.diagnostics) == []


def test_a_foreign_program_is_refused(analyzer: analyzer_pb2_grpc.AnalyzerStub) -> None:
    rec = run(foreign_program, {"aws:region": "us-west-2"}, project="team")
    response = analyzer.AnalyzeStack(request(rec), timeout=60)
    by_urn = {r.urn: r.name for r in rec.resources}
    blamed = {by_urn[d.urn] for d in response.diagnostics if d.policyName == "one-manager-per-node"}
    assert blamed == {"gpu", "gpu-pool", "dra-driver", "device-plugin"}
    assert {d.enforcementLevel for d in response.diagnostics} == {analyzer_pb2.MANDATORY}
    assert all(d.policyPackName == "eks-devices" for d in response.diagnostics)


def test_the_enforcement_level_is_configurable(analyzer: analyzer_pb2_grpc.AnalyzerStub) -> None:
    """What `--policy-pack-config` sends: the policy advisory, then disabled."""
    rec = run(foreign_program, {"aws:region": "us-west-2"}, project="team")
    found = {}
    try:
        for level in (analyzer_pb2.ADVISORY, analyzer_pb2.DISABLED):
            config = {"one-manager-per-node": analyzer_pb2.PolicyConfig(enforcementLevel=level)}
            analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=config), timeout=30)
            response = analyzer.AnalyzeStack(request(rec), timeout=60)
            found[level] = {(d.policyName, d.enforcementLevel) for d in response.diagnostics}
    finally:
        analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(), timeout=30)
    assert found == {analyzer_pb2.ADVISORY: {("one-manager-per-node", analyzer_pb2.ADVISORY)},
                     analyzer_pb2.DISABLED: set()}


def pins(path: Path) -> dict[str, str]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return dict(line.split("==") for line in lines if "==" in line)


def test_the_pack_pins_what_the_project_pins() -> None:
    """The pack's own environment runs the same Pulumi SDK and pulumi-policy the tests run here,
    and installs the core from this repository."""
    pack, project = pins(ROOT / "policypack" / "requirements.txt"), pins(ROOT / "constraints.txt")
    assert pack == {name: project[name] for name in ("pulumi-policy", "pulumi")}
    assert ".." in (ROOT / "policypack" / "requirements.txt").read_text().splitlines()


@pytest.mark.parametrize("asset", ["file", "string"])
def test_value_yaml_files_reach_the_rules_as_the_engine_sends_them(analyzer: analyzer_pb2_grpc.AnalyzerStub,
                                                                   tmp_path: Path, asset: str) -> None:
    """A Helm release's valueYamlFiles arrive as assets (a FileAsset's path, a StringAsset's text):
    the pack reads them, so the plugin scoped only in its file passes and unscoped there fails."""
    rec = main(shipped("staging"))
    [plugin] = [r for r in rec.resources if r.name == "platform-nvidia-device-plugin"]
    found = {}
    for scope, text in (("scoped", "nodeSelector:\n  eks-devices.io/device-manager-nvidia: device-plugin\n"),
                        ("unscoped", "nodeSelector: {}\n")):
        path = tmp_path / f"{scope}.yaml"
        path.write_text(text)
        wire = {rpc._special_sig_key: rpc._special_asset_sig, **({"path": str(path)} if asset == "file"
                                                                  else {"text": text})}
        for props in (plugin.inputs, plugin.outputs):
            props["values"] = {k: v for k, v in props["values"].items() if k != "nodeSelector"}
            props["valueYamlFiles"] = [wire]
        response = analyzer.AnalyzeStack(request(rec), timeout=60)
        found[scope] = {d.policyName for d in response.diagnostics}
    assert found == {"scoped": set(), "unscoped": {"one-manager-per-node"}}
