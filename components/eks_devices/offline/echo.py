"""A registration answered without the SDK's round trip, where the inputs on the wire are plain.

The SDK's mock monitor deserializes a registration's inputs for the mocks, then serializes the state the
mocks return back into the response (pulumi 3.272.0 `pulumi/runtime/mocks.py` `RegisterResource`,
~308-334), on an event loop of the monitor's thread. The toolkit's mocks mostly echo their inputs
(`{**inputs}` plus an id and an ARN) and never change them, and for plain data (no secret, resource
reference, asset, output value or unknown) serializing a deserialized value gives back the value it
came from, so each output that is one of the inputs is copied from the request as it came. The SDK's
own serializer is still asked for everything else; only whether a request is plain is decided here,
by the markers' bytes, which a false alarm only sends back to the SDK's path. Other mocks (a team's,
which may change the inputs they are given) always take the SDK's path.

Outside a dry run the SDK gives the program each output the response leaves out from the input of that
name (pulumi 3.272.0 `pulumi/runtime/rpc.py` `resolve_outputs`, ~1534-1551), so an output that is one of
the inputs need not travel back at all: the response holds only what the mocks added or changed. A copy
of the inputs in the response is ~10 KiB of protobuf for a 1 KiB NodePool, and the SDK holds the
responses of a whole wave of registrations at once (~11 MiB of the peak at 1,000 pools).
"""

from __future__ import annotations

from typing import Any

from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.sync_await import _sync_await

from eks_devices.identity import STACK_TYPE
from eks_devices.offline import output_values
from eks_devices.testing import Mocks

# any special value carries the signature key; an unknown is a string of its own
_MARKERS = (output_values.SIG.encode(), output_values.UNKNOWN.encode())
_SCALARS = (str, bool, int, float)  # what a Struct takes as it is, as the SDK's serializer would send it


def answers(monitor: pulumi_mocks.MockMonitor, request: Any) -> bool:
    """Whether `register` may answer for `monitor`: its mocks answer registrations as the toolkit's
    `Mocks` do, and the request is plain: not the stack, no transforms (the SDK's monitor turns them
    into callbacks for the mocks), and no special value anywhere in its inputs."""
    if type(monitor.mocks).new_resource is not Mocks.new_resource:
        return False
    if request.type == STACK_TYPE or request.transforms:
        return False
    wire = request.object.SerializeToString()
    return not any(marker in wire for marker in _MARKERS)


def register(monitor: pulumi_mocks.MockMonitor, request: Any, inputs_fill_in: bool = False) -> Any:
    """`monitor`'s answer to a registration it `answers`, as the SDK's `MockMonitor` gives it:
    the mocks asked with the SDK's deserialized inputs, the registration kept, the state returned.
    With `inputs_fill_in` (outside a dry run, where the SDK fills the outputs a response leaves out
    from the inputs it sent, see above) the outputs that are inputs as given are left out, but for
    those the registration asks to make secret, which the monitor marks in the response."""
    urn = monitor.make_urn(request.parent, request.type, request.name)
    inputs = rpc.deserialize_properties(request.object)
    id_, state = monitor.mocks.new_resource(pulumi_mocks.MockResourceArgs(
        typ=request.type, name=request.name, inputs=inputs, provider=request.provider,
        resource_id=request.importId, custom=request.custom or False, transforms=[]))
    wire = request.object.fields
    response = resource_pb2.RegisterResourceResponse(urn=urn, id=id_)
    out = response.object  # filled in place: no copy of the whole state
    rest: dict[str, Any] = {}
    made_secret = set(request.additionalSecretOutputs) if inputs_fill_in else set()
    for key, value in state.items():
        if key in wire and inputs.get(key) is value:
            if not inputs_fill_in or key in made_secret:
                out.fields[key].CopyFrom(wire[key])
        elif type(value) in _SCALARS:
            out[key] = value
        else:
            rest[key] = value
    if rest:
        out.MergeFrom(_sync_await(rpc.serialize_properties(rest, {})))
    monitor.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(urn, id_, state)
    return response
