"""The multi-language provider driven as the engine drives it: started as the Python language host
starts a plugin (`python <components dir> <engine address>`, printing its port), then called over
gRPC (GetSchema, Construct) while an in-process engine and resource monitor — the offline mock
engine's recording monitor, served over gRPC — answer its registrations, invokes and logs."""

from __future__ import annotations

import contextvars
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    errors_pb2,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
    status_pb2,
)

from eks_devices.offline.engine import OfflineMocks, Recording, RecordingMonitor, _Workers, config_strings
from support.stacks import ROOT

PLUGIN_DIR = ROOT / "components"
PROJECT = "eks-devices"


def stack_urn(stack: str, project: str = PROJECT) -> str:
    return f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"


class MonitorServicer(resource_pb2_grpc.ResourceMonitorServicer):
    """The recording mock monitor over gRPC. Calls run one at a time, in a copy of the context the
    mocks were set up in (the mock monitor reads the stack and project from Pulumi's settings)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.monitor: RecordingMonitor | None = None
        self.context = contextvars.copy_context()

    def use(self, stack: str, region: str, project: str) -> Recording:
        """Answer for `stack` from now on, recording into a new Recording."""
        recording = Recording()
        mocks = OfflineMocks(region)
        with self.lock:
            self.monitor = RecordingMonitor(mocks, recording)
            pulumi_settings.ROOT.set(None)
            pulumi_mocks.set_mocks(mocks, project=project, stack=stack, preview=False, monitor=self.monitor)
            self.context = contextvars.copy_context()
            pulumi_settings.ROOT.set(None)
        return recording

    def _call(self, method: str, request: Any) -> Any:
        with self.lock:
            return self.context.copy().run(getattr(self.monitor, method), request)

    def SupportsFeature(self, request, context):  # gRPC method names
        answer = self._call("SupportsFeature", request)
        return resource_pb2.SupportsFeatureResponse(hasSupport=bool(answer.hasSupport))

    def GetDeploymentInfo(self, request, context):
        return self._call("GetDeploymentInfo", request)

    def Invoke(self, request, context):
        return self._call("Invoke", request)

    def ReadResource(self, request, context):
        return self._call("ReadResource", request)

    def RegisterResource(self, request, context):
        return self._call("RegisterResource", request)

    def RegisterResourceOutputs(self, request, context):
        return self._call("RegisterResourceOutputs", request)

    def RegisterPackage(self, request, context):
        return self._call("RegisterPackage", request)

    def SignalAndWaitForShutdown(self, request, context):
        return empty_pb2.Empty()


class EngineServicer(engine_pb2_grpc.EngineServicer):
    """The engine's logging and root-resource service, keeping the log messages."""

    def __init__(self) -> None:
        self.root = ""
        self.logs: list[tuple[int, str]] = []

    def Log(self, request, context):
        self.logs.append((request.severity, request.message))
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):
        return engine_pb2.GetRootResourceResponse(urn=self.root)

    def SetRootResource(self, request, context):
        return engine_pb2.SetRootResourceResponse()


@dataclass
class Engine:
    """An in-process engine and resource monitor on one local port."""

    address: str
    monitor: MonitorServicer
    engine: EngineServicer

    def use(self, stack: str, region: str, project: str = PROJECT) -> Recording:
        """Serve `stack` from now on: a fresh recording, an empty log."""
        self.engine.root = stack_urn(stack, project)
        self.engine.logs.clear()
        return self.monitor.use(stack, region, project)

    @property
    def logs(self) -> list[tuple[int, str]]:
        return self.engine.logs


@contextmanager
def engine() -> Iterator[Engine]:
    """The engine service and the mock engine's monitor, served on a local port."""
    monitor, engine_servicer = MonitorServicer(), EngineServicer()
    workers = _Workers(4)  # the mock monitor's event loops, closed with the server
    server = grpc.server(workers.executor)
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, server)
    engine_pb2_grpc.add_EngineServicer_to_server(engine_servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield Engine(f"127.0.0.1:{port}", monitor, engine_servicer)
    finally:
        server.stop(None)
        workers.close()
        pulumi_settings.ROOT.set(None)


@contextmanager
def provider(engine_address: str, cwd: Path) -> Iterator[provider_pb2_grpc.ResourceProviderStub]:
    """The plugin started as pulumi-language-python's RunPlugin starts it (`python <plugin dir>
    <engine address>`, working directory the program's, nothing on PYTHONPATH), and a stub to it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with tempfile.TemporaryFile("w+") as stderr:  # a file, not a pipe: a chatty provider never blocks on it
        proc = subprocess.Popen([sys.executable, str(PLUGIN_DIR), engine_address], cwd=cwd, env=env,
                                stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            line = proc.stdout.readline() if proc.stdout else ""
            if not line.strip().isdigit():
                proc.kill()
                proc.wait()
                stderr.seek(0)
                raise AssertionError(f"the provider did not print its port: {line!r}\n{stderr.read()}")
            with grpc.insecure_channel(f"127.0.0.1:{line.strip()}") as channel:
                yield provider_pb2_grpc.ResourceProviderStub(channel)
        finally:
            proc.kill()
            proc.wait()
            if proc.stdout:
                proc.stdout.close()


def struct(value: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(value)
    return out


def construct(stub: provider_pb2_grpc.ResourceProviderStub, eng: Engine, *, name: str, inputs: dict[str, Any],
              stack: str, config: dict[str, Any], project: str = PROJECT,
              component: str = "Platform") -> provider_pb2.ConstructResponse:
    """A Construct call of `eks-devices:index:<component>`, parented to the stack, as the engine sends it."""
    request = provider_pb2.ConstructRequest(
        project=project, stack=stack, config=config_strings(config), dryRun=False, parallel=4,
        monitorEndpoint=eng.address, type=f"eks-devices:index:{component}", name=name,
        parent=stack_urn(stack, project), inputs=struct(inputs), organization="organization")
    return stub.Construct(request, timeout=120)


# The wire form of a resource reference (pulumi/sdk `rpc.py`: `_special_resource_sig`).
SPECIAL_SIG, RESOURCE_SIG = "4dabf18193072939515e22adb298388d", "5cf8f73096256a8f31e491e813e4eb8e"


def registered_provider(eng: Engine, *, package: str, name: str, stack: str,
                        project: str = PROJECT) -> dict[str, Any]:
    """A provider the caller's program registered (as the engine records it), as a resource reference."""
    answer = eng.monitor.RegisterResource(resource_pb2.RegisterResourceRequest(
        type=f"pulumi:providers:{package}", name=name, custom=True, parent=stack_urn(stack, project),
        object=struct({})), None)
    return {SPECIAL_SIG: RESOURCE_SIG, "urn": answer.urn, "id": answer.id or "unknown", "packageVersion": ""}


def property_errors(error: grpc.RpcError) -> list[tuple[str, str]]:
    """The property errors of an INVALID_ARGUMENT answer (from its `grpc-status-details-bin`)."""
    details = dict(error.trailing_metadata() or ()).get("grpc-status-details-bin")
    if details is None:
        return []
    status = status_pb2.Status.FromString(details)
    out = []
    for detail in status.details:
        errors = errors_pb2.InputPropertiesError()
        if detail.Unpack(errors):
            out.extend((e.property_path, e.reason) for e in errors.errors)
    return out


def stack_inputs(config: dict[str, Any]) -> dict[str, Any]:
    """A stack file's configuration as the package's arguments: `eks-devices:<key>` as `<key>`,
    `aws:region` / `aws:profile` as `region` / `profile`, a zone count as `availabilityZoneCount`."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        namespace, _, name = key.partition(":")
        if namespace == "aws" and name in ("region", "profile"):
            out[name] = value
        elif namespace == PROJECT:
            out[name] = json.loads(json.dumps(value))
    zones = out.get("network", {}).get("availabilityZones")
    if isinstance(zones, int):
        out["network"]["availabilityZoneCount"] = out["network"].pop("availabilityZones")
    return out
