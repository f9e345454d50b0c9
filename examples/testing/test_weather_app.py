"""Unit tests of the weather application's agent logic: no server, milliseconds each.

Run with ``pytest examples/testing``.
"""

from __future__ import annotations

from weather_app import weather_agent

from agent_smith import LlmRequest, TestModel, ToolCall, ToolMessage
from agent_smith.llm.testing import call


def test_the_agent_looks_the_weather_up_and_answers_with_it() -> None:
    model = TestModel([call("get_weather", city="Oslo"), "Snowy in Oslo."])
    with weather_agent(model) as agent:
        answer = agent.send("Weather in Oslo?")
    assert answer.content == "Snowy in Oslo."
    (result,) = [m for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    assert result.content == "snow, -3 °C"  # what our tool told the model


def test_an_unknown_city_reaches_the_model_as_such() -> None:
    def respond(request: LlmRequest) -> str | ToolCall:
        results = [m for m in request.messages if isinstance(m, ToolMessage)]
        if not results:
            return call("get_weather", city="Atlantis")
        return f"Sorry: {results[-1].content}."

    model = TestModel(respond=respond)
    with weather_agent(model) as agent:
        assert agent.send("Weather in Atlantis?").content == "Sorry: no forecast for that city."
