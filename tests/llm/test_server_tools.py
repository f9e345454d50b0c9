"""Tools a provider runs itself, read from recorded replies: shown, replayed, never dispatched.

Every recording is real bytes of the provider (sources in ``fixtures/SOURCES.md``),
served by the scripted server on 127.0.0.1 to each native client, streamed and
not: the server tool comes out as a ServerToolUsed event (and on the response),
never as a tool call; its blocks (parts, items) go back to the same provider
with the history; an agent given the reply never runs the tool as its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AgentRequest,
    AnthropicClient,
    BedrockClient,
    ChatModel,
    FinalAnswer,
    Finished,
    GeminiClient,
    LlmRequest,
    LlmResponse,
    ProviderData,
    ResponsesClient,
    Runtime,
    ServerToolUsed,
    TokenDelta,
    ToolCallRequested,
    ToolCallStarted,
    ToolMessage,
    UserMessage,
    make_model,
)
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer, Text
from tests.support.provider_wire import WEATHER, speak
from tests.support.recordings import framed, payloads, recorded

REQUEST = LlmRequest((UserMessage("Go"),))


def stream_body(name: str) -> bytes:
    """A recorded stream as the provider sent it (``*.chunks.txt``: one data payload a line)."""
    if not name.endswith(".chunks.txt"):
        return recorded(name)
    return framed(payloads(name), done=False)


# provider, recording, streamed, the server tools it holds (name, id prefix), the calls
RECORDINGS = [
    ("anthropic", "vercel-ai--anthropic-web-search.json", False, ["web_search"] * 2, []),
    ("anthropic", "vercel-ai--anthropic-web-search.chunks.txt", True, ["web_search"], []),
    ("anthropic", "vercel-ai--anthropic-web-fetch.json", False, ["web_fetch"], []),
    ("anthropic", "vercel-ai--anthropic-web-fetch.chunks.txt", True, ["web_fetch"], []),
    (
        "anthropic",
        "vercel-ai--anthropic-code-execution.json",
        False,
        ["text_editor_code_execution", "bash_code_execution"],
        [],
    ),
    (
        "anthropic",
        "vercel-ai--anthropic-code-execution.chunks.txt",
        True,
        ["text_editor_code_execution", "bash_code_execution"],
        [],
    ),
    (
        "bedrock",
        "pydantic-ai--bedrock-nova-code-interpreter.json",
        False,
        ["nova_code_interpreter"],
        ["final_result"],
    ),
    (
        "bedrock",
        "pydantic-ai--bedrock-nova-code-interpreter.eventstream",
        True,
        ["nova_code_interpreter"],
        ["final_result"],
    ),
    ("gemini", "vercel-ai--google-code-execution.json", False, ["code_execution"], []),
    (
        "gemini",
        "pydantic-ai--gemini-file-search-code.sse",
        True,
        ["code_execution", "grounding"],
        [],
    ),
    ("gemini", "pydantic-ai--gemini-google-search.json", False, ["google_search"], []),
    ("gemini", "pydantic-ai--gemini-google-search.sse", True, ["google_search"], []),
    ("responses", "vercel-ai--responses-web-search.json", False, ["web_search"] * 3, []),
    ("responses", "vercel-ai--responses-web-search.chunks.txt", True, ["web_search"] * 6, []),
    ("responses", "vercel-ai--responses-file-search.json", False, ["file_search"], []),
    ("responses", "vercel-ai--responses-file-search.chunks.txt", True, ["file_search"], []),
    (
        "responses",
        "vercel-ai--responses-code-interpreter.json",
        False,
        ["code_interpreter"] * 3,
        [],
    ),
    (
        "responses",
        "vercel-ai--responses-code-interpreter.chunks.txt",
        True,
        ["code_interpreter"] * 3,
        [],
    ),
    ("openai", "pydantic-ai--groq-compound-web-search.json", False, ["search"], []),
    ("openai", "pydantic-ai--groq-compound-web-search.sse", True, ["search"], []),
]
TAGS = {
    "anthropic": "anthropic",
    "bedrock": "aws.bedrock",
    "gemini": "gcp.gemini",
    "responses": "openai.responses",
    "openai": "openai",  # shown only: Groq takes no executed_tools back
}


@pytest.fixture
def served(llm_server: ScriptedLlmServer, runtime: Runtime, aws_credentials: None) -> Any:
    def model(provider: str) -> ChatModel:
        name = "us.amazon.nova-2-lite-v1:0" if provider == "bedrock" else "recorded"
        return make_model(provider, llm_server.url, name, runtime=runtime)

    return model


def script(llm_server: ScriptedLlmServer, name: str, streamed: bool) -> None:
    if streamed:
        llm_server.script(Chunks(stream_body(name)))
    else:
        llm_server.script(Raw(200, recorded(name)))


def read(model: ChatModel, streamed: bool) -> tuple[LlmResponse, list[object]]:
    """The reply, and the events it came with (a whole reply: the events it would stream)."""
    if not streamed:
        response = model.complete(REQUEST)
        return response, list(response.server_tools)
    events: list[object] = list(model.stream(REQUEST))
    (finished,) = [e for e in events if isinstance(e, Finished)]
    return finished.response, events


@pytest.mark.parametrize(("provider", "name", "streamed", "tools", "calls"), RECORDINGS)
def test_a_recorded_server_tool_is_shown_and_never_a_tool_call(
    provider: str,
    name: str,
    streamed: bool,
    tools: list[str],
    calls: list[str],
    llm_server: ScriptedLlmServer,
    served: Any,
) -> None:
    script(llm_server, name, streamed)
    response, events = read(served(provider), streamed)
    shown = [e for e in events if isinstance(e, ServerToolUsed)]
    assert [e.name for e in shown] == tools
    assert shown == list(response.server_tools)
    assert {e.provider for e in shown} == {TAGS[provider]}
    assert len({e.id for e in shown}) == len(shown)  # each call has its own id
    assert all(e.arguments for e in shown if e.name != "grounding")
    assert [c.name for c in response.message.tool_calls] == calls
    if streamed:
        assert [e.name for e in events if isinstance(e, ToolCallStarted)] == calls
        later = events[events.index(shown[0]) :]
        if provider in ("anthropic", "bedrock", "responses"):  # shown as soon as it ran
            assert any(isinstance(e, TokenDelta | ToolCallStarted) for e in later)
        assert isinstance(later[-1], Finished)
    if provider != "openai":
        assert response.message.provider_data is not None
        assert response.message.provider_data.provider == TAGS[provider]
    assert all(e.results for e in shown if e.provider == "openai")
    assert response.message.content or calls


@pytest.mark.parametrize(
    ("provider", "name", "streamed", "sent"),
    [
        ("anthropic", "vercel-ai--anthropic-web-search.chunks.txt", True, "anthropic"),
        ("anthropic", "vercel-ai--anthropic-code-execution.json", False, "anthropic"),
        ("bedrock", "pydantic-ai--bedrock-nova-code-interpreter.eventstream", True, "bedrock"),
        ("bedrock", "pydantic-ai--bedrock-nova-code-interpreter.json", False, "bedrock"),
        ("gemini", "vercel-ai--google-code-execution.json", False, "gemini"),
        ("gemini", "pydantic-ai--gemini-file-search-code.sse", True, "gemini"),
        ("responses", "vercel-ai--responses-code-interpreter.chunks.txt", True, "responses"),
        ("responses", "vercel-ai--responses-web-search.json", False, "responses"),
    ],
)
def test_the_server_tools_blocks_go_back_to_the_same_provider_and_no_other(
    provider: str,
    name: str,
    streamed: bool,
    sent: str,
    llm_server: ScriptedLlmServer,
    served: Any,
) -> None:
    script(llm_server, name, streamed)
    model = served(provider)
    response, _ = read(model, streamed)
    history = (*REQUEST.messages, response.message)
    for call in response.message.tool_calls:
        history = (*history, ToolMessage(call.id, call.name, "done"))
    history = (*history, UserMessage("And then?"))
    speak(llm_server, provider, Text("Then nothing."))
    assert model.complete(LlmRequest(history)).message.content == "Then nothing."
    replayed = _assistant_turn(provider, llm_server.requests[-1])
    for used in response.server_tools:
        assert used.id in replayed or used.id.startswith(f"{TAGS[provider]}_server_")
    if provider == "bedrock":
        (use,) = [b["toolUse"] for b in json.loads(replayed)["content"] if "toolUse" in b][:1]
        assert use["type"] == "server_tool_use" and use["input"] == {"snippet": "1234 * 5678"}
    if provider == "gemini":
        assert '"executableCode"' in replayed
    speak(llm_server, "openai", Text("Elsewhere."))
    other = make_model("openai", llm_server.url, "other")
    assert other.complete(LlmRequest(history)).message.content == "Elsewhere."
    for used in response.server_tools:
        assert used.id not in json.dumps(llm_server.requests[-1])


def _assistant_turn(provider: str, body: dict[str, Any]) -> str:
    """The JSON of what went back for the recorded turn (its items, for Responses)."""
    if provider == "responses":
        return json.dumps([i for i in body["input"] if i.get("role") != "user"])
    key = "contents" if provider == "gemini" else "messages"
    (turn,) = [t for t in body[key] if t["role"] in ("assistant", "model")]
    return json.dumps(turn)


@dataclass
class Product:
    result: float


@pytest.mark.parametrize("streamed", [False, True])
def test_an_agent_takes_the_answer_the_provider_computed_without_running_its_tool(
    streamed: bool, llm_server: ScriptedLlmServer, runtime: Runtime, served: Any
) -> None:
    # The recording: Nova ran its code interpreter and answered through final_result.
    name = "pydantic-ai--bedrock-nova-code-interpreter"
    script(llm_server, name + (".eventstream" if streamed else ".json"), streamed)
    with Agent(served("bedrock"), runtime=runtime) as agent:
        request = AgentRequest("What is 1234 * 5678?", stream=streamed, output_type=Product)
        events = list(agent.stream(request))
    final = events[-1]
    assert isinstance(final, FinalAnswer)
    assert final.message.output == Product(7006652.0)
    (used,) = [e for e in events if isinstance(e, ServerToolUsed)]
    assert used.name == "nova_code_interpreter"
    assert used.results[0][0]["json"]["stdOut"] == "7006652"
    assert [e.call.name for e in events if isinstance(e, ToolCallRequested)] == ["final_result"]
    assert len(llm_server.requests) == 1  # no "unknown tool" round


OFFERED = {
    "anthropic": ({"type": "web_search_20250305", "name": "web_search"}, "tools"),
    "bedrock": ({"systemTool": {"name": "nova_code_interpreter"}}, "toolConfig"),
    "gemini": ({"codeExecution": {}}, "tools"),
    "responses": ({"type": "web_search"}, "tools"),
}


@pytest.mark.parametrize("provider", sorted(OFFERED))
def test_the_providers_own_tools_are_offered_after_the_requests_tools(
    provider: str, llm_server: ScriptedLlmServer, runtime: Runtime, aws_credentials: None
) -> None:
    offered, key = OFFERED[provider]
    classes = {
        "anthropic": AnthropicClient,
        "bedrock": BedrockClient,
        "gemini": GeminiClient,
        "responses": ResponsesClient,
    }
    model = classes[provider](llm_server.url, "m", runtime=runtime, server_tools=[offered])
    speak(llm_server, provider, Text("One."), Text("Two."))
    model.complete(LlmRequest((UserMessage("Go"),), (WEATHER,)))
    model.complete(REQUEST)
    with_ours, alone = llm_server.requests
    tools = with_ours[key]["tools"] if key == "toolConfig" else with_ours[key]
    assert len(tools) == 2 and tools[-1] == offered and "get_weather" in json.dumps(tools[0])
    alone_tools = alone[key]["tools"] if key == "toolConfig" else alone[key]
    assert alone_tools == [offered]
    assert "tool_choice" not in alone and "toolChoice" not in alone.get("toolConfig", {})


def test_a_turn_anthropic_paused_while_searching_goes_on_from_its_reply_sent_back_as_it_came(
    llm_server: ScriptedLlmServer, runtime: Runtime, served: Any
) -> None:
    # Recorded: the first reply stops with pause_turn on a search still running; the
    # recorded second request sent it back unchanged, and the second reply goes on.
    paused, went_on = (f"pydantic-ai--anthropic-pause-turn.{n}.json" for n in (1, 2))
    llm_server.script(Raw(200, recorded(paused)), Raw(200, recorded(went_on)))
    with Agent(served("anthropic"), runtime=runtime) as agent:
        events = list(agent.stream(AgentRequest("Run the 15 searches.", stream=False)))
    first, second = (json.loads(recorded(name))["content"] for name in (paused, went_on))
    assert first[-1]["type"] == "server_tool_use"
    assert llm_server.requests[1]["messages"][-1] == {"role": "assistant", "content": first}
    final = events[-1]
    assert isinstance(final, FinalAnswer)
    assert final.message.content == "".join(b["text"] for b in second if b["type"] == "text")
    assert len(llm_server.requests) == 2
    searches = [e for e in events if isinstance(e, ServerToolUsed)]
    assert len(searches) == sum(b["type"] == "server_tool_use" for b in first + second)
    assert not [e for e in events if isinstance(e, ToolCallRequested)]


def test_a_bedrock_system_tool_without_its_type_is_known_by_the_result_in_the_reply(
    llm_server: ScriptedLlmServer, served: Any
) -> None:
    # Not recorded so: a capture quoted in another project shows nova_grounding's toolUse
    # without "type"; here the recorded code interpreter reply loses it.
    body = json.loads(recorded("pydantic-ai--bedrock-nova-code-interpreter.json"))
    use = body["output"]["message"]["content"][0]["toolUse"]
    del use["type"]
    llm_server.script(Raw(200, json.dumps(body)))
    response = served("bedrock").complete(REQUEST)
    assert [u.name for u in response.server_tools] == ["nova_code_interpreter"]
    assert [c.name for c in response.message.tool_calls] == ["final_result"]


@pytest.mark.parametrize("streamed", [False, True])
def test_anthropics_code_sandbox_is_asked_for_again_while_it_lasts(
    streamed: bool, llm_server: ScriptedLlmServer, served: Any
) -> None:
    # The recorded replies' sandbox expired in 2025; the same reply with a later expiry
    # is the live case (the recorded second request of a container reuse sent its id).
    name = "vercel-ai--anthropic-code-execution" + (".chunks.txt" if streamed else ".json")
    model = served("anthropic")
    script(llm_server, name, streamed)
    expired, _ = read(model, streamed)
    sandbox = expired.message.replay_for("anthropic")["container"]
    assert sandbox["id"].startswith("container_") and sandbox["expires_at"].startswith("2025-")
    lasting = replace(
        expired.message,
        provider_data=ProviderData(
            "anthropic",
            {
                **expired.message.replay_for("anthropic"),
                "container": {**sandbox, "expires_at": "2999-01-01T00:00:00Z"},
            },
        ),
    )
    speak(llm_server, "anthropic", Text("Old one."), Text("Same one."))
    for turn in (expired.message, lasting):
        model.complete(LlmRequest((*REQUEST.messages, turn, UserMessage("Run it again."))))
    assert "container" not in llm_server.requests[-2]
    assert llm_server.requests[-1]["container"] == sandbox["id"]
