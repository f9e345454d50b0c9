"""Every native provider reports its calls through the observer seam, named as itself."""

from __future__ import annotations

import pytest

from agent_smith import Agent, Runtime, make_model, tool
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.provider_wire import speak
from tests.tracing.conftest import Spans

NAMES = {
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "ollama": "ollama",
    "responses": "openai",
}


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}."


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("provider", sorted(NAMES))
def test_a_turn_on_a_native_provider_has_chat_spans_naming_it(
    provider: str, stream: bool, spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    speak(llm_server, provider, Calls(("get_weather", {"city": "Oslo"})), Text("Sunny."))
    model = make_model(provider, llm_server.url, "wire-model", runtime=runtime)
    with Agent(model, "Be brief.", [get_weather], name="bot") as agent:
        agent.send("Weather in Oslo?") if not stream else list(agent.stream("Weather?"))
    turn = spans.one("invoke_agent bot")
    assert (turn.attributes or {})["gen_ai.provider.name"] == NAMES[provider]
    chats = spans.named("chat wire-model")
    assert len(chats) == 2
    assert {s.name for s in spans.children(turn)} == {"chat wire-model", "execute_tool get_weather"}
    for chat in chats:
        attributes = dict(chat.attributes or {})
        assert attributes["gen_ai.provider.name"] == NAMES[provider]
        assert attributes["server.port"] == int(llm_server.url.rsplit(":", 1)[1])
    finishes = sorted(
        (dict(c.attributes or {})["gen_ai.response.finish_reasons"] for c in chats), key=str
    )
    assert finishes == [("stop",), ("tool_calls",)]
