"""The offline engine runs the Pulumi program on a thread and event loop of its own (`engine._on_own_thread`):
the SDK captures the whole Python stack for each resource it registers, and the caller's frames need not be
in it. The program sees the caller's context; what it raises comes back to the caller unchanged."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import traceback

import pulumi_aws
import pytest

from eks_devices.offline import engine

ASKED = contextvars.ContextVar[str]("asked")


def test_the_program_runs_on_another_thread_and_loop_in_the_callers_context_below_no_frame_of_the_caller() -> None:
    seen: dict[str, object] = {}

    async def program() -> None:
        seen["thread"] = threading.current_thread()
        seen["loop"] = asyncio.get_running_loop()
        seen["asked"] = ASKED.get()
        seen["stack"] = traceback.extract_stack()

    def start() -> object:
        seen["started on"] = threading.current_thread()
        return program()

    def deep(n: int) -> None:
        engine._on_own_thread(start) if n == 0 else deep(n - 1)

    ASKED.set("by the caller")
    deep(30)
    assert seen["thread"] is seen["started on"] is not threading.current_thread()
    assert seen["asked"] == "by the caller"
    loop = seen["loop"]
    assert isinstance(loop, asyncio.AbstractEventLoop) and loop.is_closed()  # closed once the program is done
    stack = seen["stack"]
    assert isinstance(stack, traceback.StackSummary)
    # the thread's body, the event loop's frames and the program: none of the caller's (and pytest's), nor
    # `threading`'s
    ours = [frame.name for frame in stack if "asyncio" not in frame.filename]
    assert ours == ["run", "program"] and stack[0].filename == engine.__file__


def test_an_exception_comes_back_as_raised() -> None:
    class Refused(Exception):
        pass

    raised = Refused("no")

    async def program() -> None:
        raise raised

    with pytest.raises(Refused) as caught:
        engine._on_own_thread(program)
    assert caught.value is raised


def test_every_event_loop_of_a_run_is_closed_when_it_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's mock monitor gives each thread that answers a call an event loop; the engine closes those
    too, so a process running many previews holds no loops, descriptors or ResourceWarnings from them."""
    made: list[tuple[str, asyncio.AbstractEventLoop]] = []
    new_event_loop = asyncio.new_event_loop

    def recorded() -> asyncio.AbstractEventLoop:
        loop = new_event_loop()
        made.append((threading.current_thread().name, loop))
        return loop

    monkeypatch.setattr(asyncio, "new_event_loop", recorded)

    def program() -> None:
        for _ in range(8):  # invokes, answered on the executor's threads
            pulumi_aws.get_region_output()

    engine.run(program, {"aws:region": "eu-west-1"})
    threads = {name for name, _ in made}
    assert any(name.startswith("asyncio") for name in threads), threads  # the executor's threads made loops
    assert [name for name, loop in made if not loop.is_closed()] == []
