"""The native providers end to end against llama.cpp's server on the scripted test model.

llama.cpp speaks the Anthropic Messages API at ``/v1/messages`` (with
``count_tokens``) and the Responses API at ``/v1/responses``; on the
scripted test model (tests/support/scripted_model.py) it answers a request
with tools with one native
``tool_use`` block / ``function_call`` item (every string argument
``"Paris"``) and, after the tool result, ``Hello from the tiny test model.``.
The OpenAI chat-completions client runs the same tests as the reference.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_smith import (
    Agent,
    AnthropicClient,
    ChatModel,
    FinalAnswer,
    LlmRequest,
    Runtime,
    SamplingParams,
    TokenDelta,
    ToolCallRequested,
    ToolMessage,
    UserMessage,
    make_model,
    tool,
)
from agent_smith.llm.embeddings import OpenAIEmbedder
from agent_smith.llm.local_server import LocalLlamaServer

pytestmark = [pytest.mark.slow, pytest.mark.llama, pytest.mark.usefixtures("no_thread_leak")]

HELLO = "Hello from the tiny test model."
PROVIDERS = ["openai", "anthropic", "responses"]


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}."


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    with Runtime(max_workers=4) as rt:
        yield rt


def model_for(provider: str, server: LocalLlamaServer, runtime: Runtime) -> ChatModel:
    return make_model(
        provider,
        server.endpoint,
        "scripted",
        default_sampling=SamplingParams(temperature=0, max_tokens=200),
        runtime=runtime,
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_agent_runs_a_native_tool_round_trip(
    provider: str, scripted_llama: LocalLlamaServer, runtime: Runtime
) -> None:
    model = model_for(provider, scripted_llama, runtime)
    with Agent(model, "Use the tools.", tools=[get_weather], runtime=runtime) as agent:
        answer = agent.send("What's the weather?")
        history = agent.memory.messages()
    assert answer.content == HELLO
    call = history[1].tool_calls[0]  # type: ignore[union-attr]
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    result = history[2]
    assert isinstance(result, ToolMessage) and result.tool_call_id == call.id
    assert result.content == "Sunny in Paris."
    assert answer.usage is not None and answer.usage.prompt > 0 and answer.usage.completion > 0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_streamed_turn_gives_the_call_and_the_text_as_they_arrive(
    provider: str, scripted_llama: LocalLlamaServer, runtime: Runtime
) -> None:
    model = model_for(provider, scripted_llama, runtime)
    with Agent(model, tools=[get_weather], runtime=runtime) as agent:
        events = list(agent.stream("What's the weather?"))
    assert [e.call.name for e in events if isinstance(e, ToolCallRequested)] == ["get_weather"]
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == HELLO
    final = events[-1]
    assert isinstance(final, FinalAnswer) and final.message.content == HELLO


@pytest.mark.parametrize("provider", PROVIDERS)
def test_without_tools_the_model_answers_in_text(
    provider: str, scripted_llama: LocalLlamaServer, runtime: Runtime
) -> None:
    model = model_for(provider, scripted_llama, runtime)
    reply = model.complete(LlmRequest((UserMessage("hi"),)))
    assert (reply.message.content, reply.finish_reason) == (HELLO, "stop")
    assert reply.response_id


def test_anthropic_counts_tokens_exactly_and_caches_on_request(
    scripted_llama: LocalLlamaServer, runtime: Runtime
) -> None:
    model = AnthropicClient(scripted_llama.endpoint, cache=True, runtime=runtime)
    request = LlmRequest((UserMessage("hi"),))
    count = model.count_tokens(request)
    assert count > 0 and model.count_tokens(request) == count
    reply = model.complete(request)
    assert reply.message.content == HELLO
    assert reply.usage is not None and reply.usage.prompt >= count


def test_the_embedder_gets_one_vector_per_text_in_order(
    embedding_llama: LocalLlamaServer, runtime: Runtime
) -> None:
    embedder = OpenAIEmbedder(embedding_llama.endpoint, batch_size=2, runtime=runtime)
    texts = ["hello", "world", "hello"]
    vectors = embedder.embed(texts)
    assert len(vectors) == 3 and embedder.dimensions == len(vectors[0]) > 0
    assert vectors[0] == vectors[2] and vectors[0] != vectors[1]  # order kept across batches
