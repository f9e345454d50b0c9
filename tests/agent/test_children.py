"""Children made with spawn_child: shared tree, deeper pool, events up, cancel down."""

from __future__ import annotations

import threading
from typing import Any

from agent_smith import Agent
from agent_smith.agent.events import AgentHooks, SubAgentEvent
from agent_smith.errors import CancelledError
from agent_smith.llm.client import LlmClient
from agent_smith.messages import AssistantMessage, ToolCall
from agent_smith.runtime import Runtime
from agent_smith.tools.base import ToolContext
from agent_smith.tools.function import tool
from tests.agent.conftest import WAIT
from tests.support.background import cancel_during_send
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


def test_child_runs_tools_one_level_deeper_and_reports_to_the_parent(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    depths: list[int] = []
    holder: dict[str, Agent] = {}

    @tool
    def probe(ctx: ToolContext) -> str:
        """Report the depth."""
        depths.append(ctx.depth)
        return "probed"

    @tool
    def delegate(task: str, ctx: ToolContext) -> str:
        """Hand over to a child."""
        depths.append(ctx.depth)
        child = holder["root"].spawn_child(name="helper", tools=[probe], cancel=ctx.cancel)
        assert child.depth == 1
        return child.send(task).content

    seen: list[SubAgentEvent] = []
    llm_server.script(
        Calls(("delegate", {"task": "probe it"})),
        Calls(("probe", {})),
        Text("child done"),
        Text("root done"),
    )
    root = Agent(
        llm, tools=[delegate], hooks=AgentHooks(on_subagent_event=seen.append), runtime=runtime
    )
    holder["root"] = root

    assert root.send("go").content == "root done"

    assert depths == [0, 1]
    assert {(e.name, e.depth) for e in seen} == {("helper", 1)}
    assert ToolCall("call_0", "probe", {}) in [e.event for e in seen]
    assert any(isinstance(e.event, AssistantMessage) and e.event.content == "child done"
               for e in seen)  # fmt: skip
    assert root.history[2].content == "child done"


def test_cancelling_the_parent_stops_a_child_in_a_slow_tool(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    entered = threading.Event()
    child_stopped = threading.Event()
    holder: dict[str, Any] = {}

    @tool
    def wait_forever(ctx: ToolContext) -> str:
        """Wait for cancellation."""
        entered.set()
        ctx.cancel.wait(WAIT)
        return "stopped"

    @tool
    def delegate(ctx: ToolContext) -> str:
        """Hand over to a child."""
        child = holder["root"].spawn_child(name="waiter", tools=[wait_forever], cancel=ctx.cancel)
        try:
            return child.send("wait").content
        except CancelledError:
            child_stopped.set()
            raise

    llm_server.script(Calls(("delegate", {})), Calls(("wait_forever", {})))
    root = Agent(llm, tools=[delegate], runtime=runtime)
    holder["root"] = root
    cancel_during_send(root, "go", reached=entered)
    # The child's own send() ended with CancelledError too.
    assert child_stopped.wait(WAIT)
