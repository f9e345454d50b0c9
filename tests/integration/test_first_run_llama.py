"""The first hour on a local model, against a real llama.cpp server with a small context.

The server here has a 1,024-token window (``ctx_size=1024``, one slot), so
what overflows it is real: llama-server's own 400 ``exceed_context_size_error``
and its own ``/props``. The agents run without compaction (on by default, it
would summarise first: test_context_llama.py) to pin the trimming. The
server serves the scripted test model (tests/support/scripted_model.py): it
calls the offered tool on the first request and answers after the result,
so a turn that reads no file is a regression, never the model's whim.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    AgentStopped,
    LlmClient,
    Runtime,
    SamplingParams,
    TokenDelta,
    ToolResultReady,
)
from agent_smith.base.cancellation import CancellationToken
from agent_smith.llm.events import StreamEvent
from agent_smith.llm.local_server import LocalLlamaServer
from agent_smith.llm.request import LlmRequest
from agent_smith.memory import FullMemory
from agent_smith.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from tests.integration.conftest import BIG, SMALL_WINDOW, read_file
from tests.support.invoices import City

pytestmark = [pytest.mark.slow, pytest.mark.llama, pytest.mark.usefixtures("no_thread_leak")]

SAMPLING = SamplingParams(temperature=0, max_tokens=64)


@pytest.fixture
def llm(small_llama: LocalLlamaServer, runtime: Runtime) -> LlmClient:
    return LlmClient(small_llama.endpoint, runtime=runtime, default_sampling=SAMPLING)


def test_an_overflowing_history_is_trimmed_and_the_session_goes_on(
    llm: LlmClient, caplog: pytest.LogCaptureFixture
) -> None:
    call = ToolCall("call_1", "read_file", {"path": "README.md"})
    earlier = [
        UserMessage("Read README.md."),
        AssistantMessage("", (call,)),
        ToolMessage("call_1", "read_file", BIG),  # from a session with no known window
        AssistantMessage("I read it."),
    ]
    memory = FullMemory()
    for message in earlier:
        memory.append(message)
    agent = Agent(llm, memory=memory, config=AgentConfig(compaction=None))
    with caplog.at_level(logging.WARNING, "agent_smith"):
        first = agent.send("What is its first line?")
        second = agent.send("Thank you.")
    assert isinstance(first, AssistantMessage) and isinstance(second, AssistantMessage)
    # Refused once (llama-server's own 400), trimmed, answered; the next turn fit at once.
    retries = [r for r in caplog.records if "sending it again trimmed" in r.getMessage()]
    assert len(retries) == 1
    assert "exceeds the available context size" in retries[0].getMessage()
    assert llm.context_window(ask=False) == SMALL_WINDOW
    assert agent.history[:4] == earlier  # the history is never rewritten
    assert len(agent.history) == 8


def test_a_big_tool_result_is_cut_to_the_window_the_server_reports(llm: LlmClient) -> None:
    # Two rounds at most: a model that reads the file again and again is not the point.
    config = AgentConfig(max_iterations=2, compaction=None)
    agent = Agent(llm, "Use read_file to read files.", tools=[read_file], config=config)
    events: list[object] = []
    with contextlib.suppress(AgentStopped):
        events.extend(agent.stream("Read README.md and tell me its first line."))
    results = [e.message for e in events if isinstance(e, ToolResultReady)]
    assert results, "the model answered without reading the file"  # the scripted one reads it
    for result in results:
        assert "cut to fit the model's context window" in result.content
        assert len(result.content) < SMALL_WINDOW * 4
    assert llm.context_window(ask=False) == SMALL_WINDOW  # asked of /props


class RecordingClient(LlmClient):
    """A client that notes each text delta as the server's stream delivers it."""

    def __init__(self, *args: Any, seen: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen = seen

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        for event in super().stream(request, cancel=cancel):
            if isinstance(event, TokenDelta):
                self.seen.append(("server", event.text))
            yield event


def test_json_text_beside_offered_tools_streams_as_it_arrives(
    small_llama: LocalLlamaServer, runtime: Runtime
) -> None:
    # A json_schema grammar with tools offered: the reply is JSON text, never a call,
    # the case whose text used to be held until the reply ended.
    seen: list[tuple[str, str]] = []
    llm = RecordingClient(
        small_llama.endpoint, runtime=runtime, default_sampling=SAMPLING, seen=seen
    )
    agent = Agent(llm, tools=[read_file])
    for event in agent.stream("Capital of France?", output_type=City, output_mode="native"):
        if isinstance(event, TokenDelta):
            seen.append(("agent", event.text))
    server = [text for who, text in seen if who == "server"]
    shown = [text for who, text in seen if who == "agent"]
    assert "".join(shown) == "".join(server) and "".join(shown).lstrip().startswith("{")
    last_from_server = max(i for i, (who, _) in enumerate(seen) if who == "server")
    first_shown = next(i for i, (who, _) in enumerate(seen) if who == "agent")
    assert first_shown < last_from_server  # shown while the reply was still arriving
