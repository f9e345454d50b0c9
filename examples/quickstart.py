"""A working agent with one tool. Run: python examples/quickstart.py (agent-smith serve --local)."""

import os

from agent_smith import Agent, AgentSmithError, LlmClient, tool


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city (a stand-in for a real weather API)."""
    return f"Sunny and 21 °C in {city}."


llm = LlmClient(os.environ.get("LLAMA_SERVER_URL", "http://127.0.0.1:8080"))
with Agent(llm, "You are a helpful assistant.", tools=[get_weather]) as agent:
    try:
        print(agent.send("What's the weather like in Paris?").content)
    except AgentSmithError as err:  # a typed stop (repetition, token cap, budget), no server
        raise SystemExit(f"{type(err).__name__}: {err}") from None  # one line, no traceback
