"""Context, limits and guardrails against a real llama.cpp server with a 1,024-token window.

A long conversation passes the window many times over and keeps working:
the gate counts with llama-server's own tokenizer (``/apply-template`` and
``/tokenize``), compacts through the model, and every turn is answered. A
big tool result is paged; usage limits and cost hold across real replies.
The scripted test model serves them all (tests/support/scripted_model.py: it
calls the offered tool, then answers); the assertions are on structure, not
the model's words.
"""

from __future__ import annotations

import contextlib

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    AgentStopped,
    ContextCompacted,
    LlmClient,
    LlmRequest,
    ModelPrice,
    Runtime,
    SamplingParams,
    ToolMessage,
    UsageLimitExceeded,
    UsageLimits,
    UserMessage,
)
from agent_smith.llm.local_server import LocalLlamaServer
from tests.integration.conftest import BIG, SMALL_WINDOW, read_file

pytestmark = [pytest.mark.slow, pytest.mark.llama, pytest.mark.usefixtures("no_thread_leak")]

SAMPLING = SamplingParams(temperature=0, max_tokens=48)


@pytest.fixture
def llm(small_llama: LocalLlamaServer, runtime: Runtime) -> LlmClient:
    return LlmClient(small_llama.endpoint, runtime=runtime, default_sampling=SAMPLING)


def test_the_server_counts_tokens_exactly_and_names_its_window(llm: LlmClient) -> None:
    request = LlmRequest((UserMessage("hello there"),))
    counted = llm.count_tokens(request)
    reply = llm.complete(request)
    assert counted is not None and reply.usage is not None
    assert counted == reply.usage.prompt  # what the server then counted for the request
    assert llm.context_window() == SMALL_WINDOW


def test_a_long_conversation_passes_the_window_and_keeps_working(llm: LlmClient) -> None:
    agent = Agent(llm, "Be brief.")  # compaction is on by default
    compactions: list[ContextCompacted] = []
    for n in range(24):  # ~60 tokens a turn: the window is passed several times over
        question = f"Turn {n}: remember that item {n} is a {'blue' if n % 2 else 'red'} box."
        for event in agent.stream(question):
            if isinstance(event, ContextCompacted):
                compactions.append(event)
    assert compactions, "the history never reached the threshold"
    # Counted by the server, or estimated where a count met one of llama-server's
    # dropped keep-alive connections: exact counting is pinned by the test above.
    assert all(c.window == SMALL_WINDOW for c in compactions)
    assert all(c.tokens_before > 0.5 * SMALL_WINDOW > c.tokens_after for c in compactions)
    assert len(agent.history) < 2 * 24  # compacted, yet every turn was answered


def test_a_big_tool_result_is_paged_with_a_handle(llm: LlmClient) -> None:
    config = AgentConfig(max_iterations=2, tool_result_page_chars=1500)
    agent = Agent(llm, "Use read_file to read files.", tools=[read_file], config=config)
    with contextlib.suppress(AgentStopped):
        agent.send("Read README.md and tell me its first line.")
    results = [m for m in agent.history if isinstance(m, ToolMessage) and m.name == "read_file"]
    assert results, "the model answered without reading the file"  # the scripted one reads it
    assert 'read_tool_result(handle="result-1"' in results[0].content
    assert agent._result_pages is not None
    assert agent._result_pages.read("result-1", 0, len(BIG)).startswith(BIG)


def test_usage_limits_and_cost_hold_on_real_replies(llm: LlmClient) -> None:
    prices = {"": ModelPrice(input=1.0, output=2.0)}  # the client asks for no model name
    agent = Agent(llm, config=AgentConfig(usage_limits=UsageLimits(prices=prices)))
    answer = agent.send("Hello.")
    usage = answer.usage
    assert usage is not None and usage.prompt > 0
    assert usage.cost == pytest.approx((usage.prompt + 2 * usage.completion) / 1e6)
    limited = AgentConfig(usage_limits=UsageLimits(max_requests=1))
    reader = Agent(llm, "Use read_file to read files.", tools=[read_file], config=limited)
    with pytest.raises(UsageLimitExceeded) as caught:
        reader.send("Read README.md.")  # a tool call, then a second request: refused
    assert caught.value.limit == "max_requests" and caught.value.spent == 1
