"""A turn leaves no reference cycles: what it allocates is freed as it ends.

Cyclic garbage is what wakes Python's garbage collector, whose passes (a full
one walks every object of the process) land on whichever turn allocates
next; the per-turn benchmark (scripts/bench_agent.py) counts on there being
none. The model is the in-process TestModel, so no server thread allocates
meanwhile.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest

from agent_smith import Agent, AgentRequest, LlmRequest, Runtime, TestModel, ToolCall
from agent_smith.agent.output import FINAL_RESULT
from tests.support.invoices import INVOICE, INVOICE_DATA, Invoice


def _tool(i: int) -> Callable[[int], str]:
    def fn(x: int) -> str:
        return f"result {x}"

    fn.__name__ = f"tool{i}"
    fn.__doc__ = "A test tool."
    return fn


def _respond(request: LlmRequest) -> list[ToolCall] | str:
    """Four parallel calls, then an answer (a final_result call when typed output asks)."""
    if request.messages[-1].role == "user":
        return [ToolCall(f"call_{i}", f"tool{i}", {"x": i}) for i in range(4)]
    if any(schema.name == FINAL_RESULT for schema in request.tools):
        return [ToolCall("call_f", FINAL_RESULT, dict(INVOICE_DATA))]
    return "All done."


@pytest.fixture
def collector_paused() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("typed", [False, True])
@pytest.mark.parametrize("stream", [False, True])
def test_turns_with_parallel_tool_calls_leave_no_cyclic_garbage(
    stream: bool, typed: bool, collector_paused: None
) -> None:
    tools = [_tool(i) for i in range(4)]
    with Runtime() as runtime:
        agent = Agent(TestModel(respond=_respond), "Be brief.", tools, runtime=runtime)
        request = AgentRequest(
            "Run the tools.", stream=stream, output_type=Invoice if typed else None
        )
        agent.send(request)  # warm: pool threads, caches
        gc.collect()
        for _ in range(5):
            agent.memory.clear()
            reply = agent.send(request)
            assert reply.output == INVOICE if typed else reply.content == "All done."
        assert gc.collect() == 0
