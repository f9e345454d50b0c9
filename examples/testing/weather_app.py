"""A small application: an agent that answers weather questions with one tool.

In production it talks to a real model (``python weather_app.py``); its tests
(``test_weather_app.py``) give it a ``TestModel`` instead.
"""

from __future__ import annotations

import os

from agent_smith import Agent, AgentSmithError, ChatModel, LlmClient, tool

FORECASTS = {"Paris": "sunny, 21 °C", "Oslo": "snow, -3 °C"}


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return FORECASTS.get(city, "no forecast for that city")


def weather_agent(model: ChatModel) -> Agent:
    """The application's agent, on whatever model it is given."""
    return Agent(model, "Answer weather questions in one sentence.", tools=[get_weather])


if __name__ == "__main__":
    llm = LlmClient(os.environ.get("LLAMA_SERVER_URL", "http://127.0.0.1:8080"))
    with weather_agent(llm) as agent:
        try:
            print(agent.send("What's the weather like in Paris?").content)
        except AgentSmithError as err:  # a typed stop (repetition, token cap, budget), no server
            raise SystemExit(f"{type(err).__name__}: {err}") from None  # one line, no traceback
