"""Run the real Pulumi program under Pulumi's built-in mock engine, recording every resource.

This is what `eks-devices preview` and the component tests stand on: no AWS account, no Pulumi
CLI, no network. The monitor records each registration with the options the engine would see
(parent, provider, replace-on-changes, delete-before-replace, protect, dependencies), and the
mocks (`eks_devices.testing.Mocks`, the ones teams use in their own unit tests) answer provider
calls and give remote components the outputs the program reads, so the program runs exactly as it
does under `pulumi up`.
"""

from __future__ import annotations

import _thread
import asyncio
import contextvars
import functools
import inspect
import json
import threading
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import run_pulumi_func

from eks_devices import identity
from eks_devices.core.config.errors import ConfigError
from eks_devices.core.config.stack import brought_subnet_zones, parse
from eks_devices.core.vocabulary import NAMESPACE
from eks_devices.identity import PROVIDER_TYPE_PREFIX, STACK_TYPE
from eks_devices.offline import echo, output_values
from eks_devices.testing import ACCOUNT_ID, Mocks, aws_id

OfflineMocks = Mocks  # the engine's mocks are the public ones
__all__ = ["ACCOUNT_ID", "SECRET", "DuplicateURN", "OfflineMocks", "Recording", "RecordingMonitor", "Registered",
           "aws_id", "config_strings", "run", "secret_config", "wire_inputs"]


@dataclass
class Registered:
    """One resource as the engine would receive it."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    remote: bool
    provider: str
    wire: bytes = field(repr=False)  # the inputs as the program sent them: a serialized Struct (see `inputs`)
    state: Mapping[str, Any] = field(repr=False)  # the mocks' outputs, as the mock monitor keeps them
    replace_on_changes: list[str]
    delete_before_replace: bool
    protect: bool
    depends_on: list[str]
    # input key → the URNs whose outputs its value was computed from (the request's `propertyDependencies`,
    # what the engine keeps per input and reads when a replacement changes them), sorted
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)  # the old URNs this resource answers to
    retain_on_delete: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    import_id: str = ""  # the `import` option: the id of an existing cloud resource to adopt
    secrets: list[tuple[str | int, ...]] = field(default_factory=list)  # where in `inputs` the values are secrets
    plugin: dict[str, str] = field(default_factory=dict)  # a provider's `version` and `pluginDownloadURL`, if asked for

    @functools.cached_property
    def inputs(self) -> dict[str, Any]:
        """The inputs as the engine keeps them in the stack's state, a provider's with its `plugin`
        (`_plugin`): decoded when first asked for, after the program, from the bytes on the wire (2.3 MiB
        at 1,000 pools, where the decoded inputs held ~15 MiB through the program's peak)."""
        return {**_plain_struct(struct_pb2.Struct.FromString(self.wire)), **self.plugin}

    @functools.cached_property
    def outputs(self) -> dict[str, Any]:
        """The resource's outputs, plain (see `_plain`): made when first asked for, since a preview
        never asks and the monitor keeps `state` anyway (a copy per resource cost ~6 MiB at 1,000 pools)."""
        return _plain(self.state)


@dataclass
class Recording:
    resources: list[Registered] = field(default_factory=list)
    exports: dict[str, Any] = field(default_factory=dict)
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)  # remote components' inputs on the wire, by URN

    def of_type(self, type_: str) -> list[Registered]:
        return [r for r in self.resources if r.type == type_]

    def named(self, name: str) -> Registered:
        found = [r for r in self.resources if r.name == name]
        if len(found) != 1:
            raise KeyError(f"{len(found)} resources named {name!r}")
        return found[0]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.resources:
            out[r.type] = out.get(r.type, 0) + 1
        return dict(sorted(out.items()))


class DuplicateURN(Exception):
    """Two resources of one program with the same URN: the engine fails the deployment on the second
    (pulumi/pulumi v3.276.0 pkg/resource/deploy/step_generator.go `generateURN`, diagnostic 2001)."""

    def __init__(self, urn: str):
        super().__init__(f"Duplicate resource URN '{urn}'; try giving it a unique name")
        self.urn = urn


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The mock monitor, keeping the resource options that `MockResourceArgs` leaves out,
    supporting output values as the real engine does (see `output_values`), and answering plain
    registrations without the SDK's round trip (see `echo`)."""

    def __init__(self, mocks: OfflineMocks, recording: Recording):
        super().__init__(mocks)
        self.recording = recording
        self._root = ""
        self._aliases: dict[str, list[str]] = {}  # URN → the old URNs it answers to, kept as resources register
        self._registered: set[str] = set()  # every URN registered so far: the engine takes each once
        self._registering = threading.local()  # the URN being registered on this thread (the SDK calls from several)

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine gives a resource, where the SDK's mock monitor names only the nearest
        parent's type and puts the stack's type before a top-level resource's (see `_urn`)."""
        return _urn(parent, type_, name, pulumi.get_stack(), pulumi.get_project())

    def registering(self) -> str:
        """The URN of the resource whose registration this thread is answering: the parent of the
        children a remote component's mock returns references to (`testing.Mocks`)."""
        return str(self._registering.urn)

    def GetDeploymentInfo(self, request: Any) -> Any:  # gRPC method name
        return output_values.with_output_values(super().GetDeploymentInfo(request))

    def RegisterResource(self, request: Any) -> Any:  # gRPC method name
        if request.remote:
            self._registering.urn = self.make_urn(request.parent, request.type, request.name)
        for_mocks = output_values.for_mocks(request)
        plain = echo.answers(self, for_mocks)  # no special value on the wire, so no secret either
        fill_in = not pulumi.runtime.is_dry_run()  # the SDK fills a left-out output from its inputs (see echo)
        response = echo.register(self, for_mocks, fill_in) if plain else super().RegisterResource(for_mocks)
        _secret_outputs(response.object, request.additionalSecretOutputs)
        if response.urn in self._registered:
            raise DuplicateURN(response.urn)
        self._registered.add(response.urn)
        if request.type == STACK_TYPE:
            self._root = response.urn  # what "no parent" means here: the stack's resources are its children
            return response
        if request.remote:
            self.recording.sent[response.urn] = output_values.sent(request.object)
        state = self.resources[response.urn].state if response.urn in self.resources else {}
        aliases = self._aliases[response.urn] = self._alias_urns(request)
        self.recording.resources.append(Registered(
            type=request.type, name=request.name, urn=response.urn, parent=request.parent,
            custom=bool(request.custom), remote=bool(request.remote), provider=request.provider,
            wire=request.object.SerializeToString(), plugin=_plugin(request), state=state,
            replace_on_changes=list(request.replaceOnChanges),
            delete_before_replace=bool(request.deleteBeforeReplace), protect=bool(request.protect),
            depends_on=list(request.dependencies), aliases=aliases,
            property_dependencies={key: sorted(deps.urns) for key, deps in request.propertyDependencies.items()
                                   if deps.urns},  # a set to the engine: the SDK's order varies with the path
            retain_on_delete=bool(request.retainOnDelete), ignore_changes=list(request.ignoreChanges),
            import_id=request.importId, secrets=[] if plain else _secret_paths(request.object),
        ))
        return response

    def _alias_urns(self, request: Any) -> list[str]:
        """The URNs a resource's aliases stand for, as the engine
        makes them (pulumi/pulumi v3.276.0 pkg/resource/deploy/step_generator.go `generateAliases`):
        each alias (a URN, or a spec whose unset parts are the resource's own, under its parent);
        then, under each URN the parent answers to, the resource and each of its aliases again, with
        the parent's old name in place of its new one where the name starts with it
        (`inheritedChildAlias`). The engine takes the one old URN the parent was found by; a
        recording lists every URN it might have been."""
        own_parent = request.parent
        inherited = self._aliases
        stack, project = pulumi.get_stack(), pulumi.get_project()
        stated: list[str] = []
        for alias in request.aliases:
            if alias.HasField("urn"):
                stated.append(alias.urn)
                continue
            spec = alias.spec
            if spec.noParent:
                parents = [self._root]
            elif spec.parentUrn:  # a parent found by an alias stands for its old URN
                parents = [spec.parentUrn, *inherited.get(spec.parentUrn, [])]
            else:
                parents = [own_parent]
            stated += [_urn(parent, spec.type or request.type, spec.name or request.name,
                            spec.stack or stack, spec.project or project) for parent in parents]
        out = list(stated)
        for parent_alias in inherited.get(own_parent, []):  # a parent with aliases is a registered URN
            parent_name, old_name = _urn_parts(own_parent)[3], _urn_parts(parent_alias)[3]
            for type_, name in [(request.type, request.name), *(_type_and_name(urn) for urn in stated)]:
                if name.startswith(parent_name):
                    name = old_name + name[len(parent_name):]
                out.append(_urn(parent_alias, type_, name, stack, project))
        return sorted(set(out) - {self.make_urn(request.parent, request.type, request.name)})


def _secret_outputs(outputs: Any, names: Any) -> None:
    """Make the outputs a registration names in `additionalSecretOutputs` secrets, in place, as the engine
    does for the program (pulumi/pulumi v3.276.0 pkg/resource/deploy/step_executor.go: every name but
    `id`, when the resource has that output and it is not a secret already)."""
    for name in names:
        if name == "id" or name not in outputs.fields:
            continue
        value = outputs.fields[name]
        marker = value.struct_value.fields.get(output_values.SIG) if value.HasField("struct_value") else None
        if marker is not None and marker.string_value == output_values.SECRET:
            continue
        wrapped = struct_pb2.Value()
        wrapped.struct_value.fields[output_values.SIG].string_value = output_values.SECRET
        wrapped.struct_value.fields["value"].CopyFrom(value)
        value.CopyFrom(wrapped)


def _plugin(request: Any) -> dict[str, str]:
    """What the engine adds to a provider's inputs in the stack's state: the plugin the program asked
    for, its `version` and `pluginDownloadURL` (pulumi/pulumi v3.276.0 pkg/resource/deploy/source_eval.go
    `RegisterResource`); the engine's `__internal` bookkeeping is left out."""
    if not request.type.startswith(PROVIDER_TYPE_PREFIX):
        return {}
    asked = (("version", request.version), ("pluginDownloadURL", request.pluginDownloadURL))
    return {key: value for key, value in asked if value}


def _urn_parts(urn: str) -> tuple[str, str, str, str]:
    """A URN's `urn:pulumi:<stack>` head, project, qualified type (`$`-joined) and name (which may hold `::`)."""
    head, project, qualified, name = urn.split("::", 3)
    return head, project, qualified, name


def _type_and_name(urn: str) -> tuple[str, str]:
    """A URN's own type (the last of its qualified type) and its name."""
    _, _, qualified, name = _urn_parts(urn)
    return qualified.split("$")[-1], name


def _urn(parent: str, type_: str, name: str, stack: str, project: str) -> str:
    """A URN as the engine makes it (pulumi/pulumi v3.276.0 pkg/resource/deploy/deployment.go
    `generateURN`): the parent's whole qualified type, `$`, the resource's type; a resource whose
    parent is the stack (or none) has its own type alone."""
    if parent:
        qualified = _urn_parts(parent)[2]
        if qualified != STACK_TYPE:
            type_ = qualified + "$" + type_
    return identity.urn(type_, name, stack, project)


# the wire's special-value markers, as `output_values` reads them from the SDK
_SIG, _SECRET, _RESOURCE, _OUTPUT = (output_values.SIG, output_values.SECRET, output_values.RESOURCE,
                                    output_values.OUTPUT)


def _unwire(value: Any) -> Any:
    """Special wire values made plain: secrets and output values by their value, resource references
    by their URN, unknowns as None. Nulls stay (pulumi's own decoding drops them, but the engine
    receives them: a null Helm value deletes a chart default)."""
    if isinstance(value, dict):
        sig = value.get(_SIG)
        if sig in (_SECRET, _OUTPUT):
            return _unwire(value.get("value"))
        if sig == _RESOURCE:
            return value.get("urn")
        return {k: _unwire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwire(v) for v in value]
    return None if value == output_values.UNKNOWN else value


def wire_inputs(struct: Any) -> dict[str, Any]:
    """A resource's inputs exactly as sent to the engine (nulls included)."""
    return _unwire(json_format.MessageToDict(struct))


def _plain_struct(struct: Any) -> dict[str, Any]:
    """`_plain(wire_inputs(struct))` in one walk of the protobuf Struct, without the intermediate
    JSON-shaped copies (the recording reads every registration's inputs: 3 walks cost ~1.9 s of CPU
    at 1,000 pools)."""
    fields = struct.fields
    if _SIG in fields:
        sig = fields[_SIG].string_value
        if sig in (_SECRET, _OUTPUT):
            return _plain_value(fields["value"]) if "value" in fields else None
        if sig == _RESOURCE:
            return fields["urn"].string_value if "urn" in fields else None
    return {k: _plain_value(v) for k, v in fields.items()}


def _secret_paths(struct: Any) -> list[tuple[str | int, ...]]:
    """Where the inputs on the wire hold secrets (a secret, or an output value marked secret): the
    places `preview` shows as `[secret]`, as Pulumi does. Walked only when the wire names a secret."""
    wire = struct.SerializeToString()
    if _SECRET.encode() not in wire and not (_OUTPUT.encode() in wire and b"secret" in wire):
        return []
    found: list[tuple[str | int, ...]] = []

    def walk(value: Any, path: tuple[str | int, ...]) -> None:
        kind = value.WhichOneof("kind")
        if kind == "struct_value":
            fields = value.struct_value.fields
            sig = fields[_SIG].string_value if _SIG in fields else None
            if sig == _SECRET or (sig == _OUTPUT and "secret" in fields and fields["secret"].bool_value):
                found.append(path)
            elif sig is None:
                for key, inner in fields.items():
                    walk(inner, (*path, key))
        elif kind == "list_value":
            for index, inner in enumerate(value.list_value.values):
                walk(inner, (*path, index))

    for key, value in struct.fields.items():
        walk(value, (key,))
    return sorted(found, key=str)


def _plain_value(value: Any) -> Any:
    """One protobuf Value made plain as `_plain_struct` does."""
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        text = value.string_value
        return None if text == output_values.UNKNOWN else text
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() else number
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return _plain_struct(value.struct_value)
    if kind == "list_value":
        return [_plain_value(v) for v in value.list_value.values]
    return None  # null_value


def _plain(value: Any) -> Any:
    """Protobuf-free, JSON-friendly copy of deserialized properties (unknowns become None)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire carries every number as a double; manifests want integers back
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _settle(value: Any, put: Callable[[Any], None]) -> None:
    """Hand `put` the export `value` once it is known, nested Outputs resolved. `Output.from_input` is
    asked only where an Output is nested: it wraps every element of a plain structure in an Output of
    its own (a 1,000-pool `devicePlan` holds ~45,000), which cost more CPU and memory than the
    resources themselves."""
    if isinstance(value, pulumi.Output):
        value.apply(lambda known: _settle(known, put))
    elif _holds_outputs(value):
        pulumi.Output.from_input(value).apply(put)
    else:
        put(value)


def _holds_outputs(value: Any) -> bool:
    """Whether a plain value has an Output (or anything else awaitable) somewhere inside."""
    if isinstance(value, dict):
        return any(_holds_outputs(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_outputs(v) for v in value)
    return isinstance(value, pulumi.Output) or inspect.isawaitable(value)


SECRET = "[secret]"  # a secret offline (a `secure:` config value; a secret input in `preview`), as Pulumi shows one


def secret_config(config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Stack config as a program gets it offline, and which keys are secrets: a `secure:` value (a
    `pulumi config set --secret`, which only the stack's secrets provider can decrypt) anywhere in a
    key's value reads `[secret]`, and makes the key a secret, as the engine makes it."""
    secret: list[str] = []

    def opened(value: Any) -> tuple[Any, bool]:
        if isinstance(value, dict):
            if set(value) == {"secure"} and isinstance(value["secure"], str):
                return SECRET, True
            pairs = {k: opened(v) for k, v in value.items()}
            return {k: v for k, (v, _) in pairs.items()}, any(hidden for _, hidden in pairs.values())
        if isinstance(value, list):
            items = [opened(v) for v in value]
            return [v for v, _ in items], any(hidden for _, hidden in items)
        return value, False

    out = {}
    for key, value in config.items():
        out[key], hidden = opened(value)
        if hidden:
            secret.append(key)
    return out, secret


def config_strings(config: dict[str, Any]) -> dict[str, str]:
    """Stack config as the engine hands it to a program: structured values as JSON text."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def _brought_subnet_zones(config: dict[str, Any]) -> dict[str, str]:
    """Zones for a brought VPC's subnets that cover the zones its pools are pinned to: offline nothing
    says where they are, and the mocks' own guess would fail the program on a pin EC2 may well honour.
    The configuration is parsed here only for a brought VPC."""
    network = config.get(f"{NAMESPACE}:network")
    if not (isinstance(network, dict) and network.get("vpcId")):
        return {}
    try:
        return brought_subnet_zones(parse(config))
    except ConfigError:
        return {}  # the program reports the configuration's problems itself


def run(program: Callable[[], None], config: dict[str, Any], stack: str = "dev",
        project: str = "eks-devices", mocks: OfflineMocks | None = None,
        after_body: Callable[[], None] | None = None) -> Recording:
    """Run `program` under the mock engine with `config` as the stack's configuration (and `mocks`
    answering, the stack's own by default); `after_body`, if given, is called once the program's body
    has run, before its registrations resolve (what the body made is the program's long-lived state).
    The program runs on a thread of its own (see `_on_own_thread`), in the caller's context."""
    recording = Recording()
    region = str(config.get("aws:region", "us-west-2"))
    mocks = mocks or OfflineMocks(region, subnet_zones=_brought_subnet_zones(config))
    plain, secret_keys = secret_config(config)
    exports: dict[str, Any] = {}
    order: list[str] = []  # the exports as the program made them (they resolve in any order)

    def program_and_exports() -> None:
        program()
        if after_body is not None:
            after_body()
        root = pulumi_settings.get_root_resource()
        outputs = dict(getattr(root, "outputs", {}))
        order.extend(outputs)
        for name, value in outputs.items():
            _settle(value, functools.partial(exports.__setitem__, name))

    def start() -> Coroutine[Any, Any, Any]:
        pulumi.runtime.set_all_config(config_strings(plain), secret_keys)
        pulumi_settings.ROOT.set(None)
        pulumi_mocks.set_mocks(mocks, project=project, stack=stack, preview=False,
                               monitor=RecordingMonitor(mocks, recording))
        pulumi_settings.SETTINGS.rpc_manager.clear()
        pulumi_settings.SETTINGS.outputs.clear()
        return run_pulumi_func(program_and_exports)

    _on_own_thread(start)
    recording.exports = _plain({name: exports[name] for name in order if name in exports})
    return recording


class _Workers:
    """The program's executor, which the SDK sends every call to its monitor through. The SDK's mock monitor
    gives each thread that answers a registration or an invoke an event loop of its own and never closes it
    (pulumi 3.272.0 `runtime/mocks.py`, `sync_await._ensure_event_loop`): three descriptors held per
    thread until collected, a ResourceWarning when they are. Here each thread starts with a loop this
    engine closes once the run is over, which the SDK then finds and uses."""

    def __init__(self, max_workers: int | None = None) -> None:
        self._loops: list[asyncio.AbstractEventLoop] = []
        self.executor = ThreadPoolExecutor(max_workers, thread_name_prefix="asyncio", initializer=self._start)

    def _start(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loops.append(loop)  # list.append is atomic: the threads start concurrently

    def close(self) -> None:
        """Wait for the threads to end (the event loop's close only asks them to), then close their loops."""
        self.executor.shutdown(wait=True, cancel_futures=True)
        for loop in self._loops:
            loop.close()


def _on_own_thread(start: Callable[[], Coroutine[Any, Any, Any]]) -> None:
    """Run the coroutine `start` returns to completion on a new thread and event loop, in a copy of the
    caller's context, and raise here what it raised. The Pulumi SDK captures the whole Python stack for
    every resource it registers (pulumi 3.272.0 `runtime/resource.py` `_get_stack_trace`: every frame's
    source line and file URI, held until the registration is answered): ~8% of a 200-pool preview's CPU
    and 11 MiB of a 1,000-pool one's peak. On a bare thread (`_thread`, not `threading`, whose own frames
    would count too) the stack below the program is this function's `run` and the event loop's; the
    caller's (a command's typer and click frames, a test's pytest frames) is not on it."""
    context = contextvars.copy_context()
    failure: list[BaseException] = []
    done = _thread.allocate_lock()
    done.acquire()

    def run() -> None:
        loop = asyncio.new_event_loop()  # a thread's own: only the main thread has one implicitly
        workers = _Workers()
        try:
            loop.set_default_executor(workers.executor)
            asyncio.set_event_loop(loop)
            context.run(loop.run_until_complete, context.run(start))
        except BaseException as exc:  # handed back to the caller's thread and raised there
            failure.append(exc)
        finally:
            context.run(pulumi_settings.ROOT.set, None)
            asyncio.set_event_loop(None)
            loop.close()
            workers.close()
            done.release()

    _thread.start_new_thread(run, ())
    done.acquire()  # where Ctrl-C reaches a command while the program runs
    if failure:
        raise failure[0]
