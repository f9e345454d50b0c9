"""Measure LocalLlamaServer: start-up time, generation speed, a full agent tool round trip.

    python scripts/bench_llama.py [MODEL.gguf ...]

Default models: the demo's local models that are in the model cache
(Qwen2.5-Coder-0.5B-Instruct, SmolLM2-135M-Instruct; ``agent-smith --local``
fetches them). Figures go to docs/llama.md.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import requests

from agent_smith import Agent, LlmClient, LocalLlamaServer, Runtime, SamplingParams, tool
from agent_smith.cli.models import LOCAL_MODELS, find_default_model

RUNS = 5
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"Sunny in {city}."


def speed(endpoint: str, *, tools: bool) -> tuple[float, int]:
    """Median generated tokens/s (server timings) and tokens per reply."""
    body: dict[str, object] = {
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "temperature": 0,
        "max_tokens": 128,
    }
    if tools:
        body["tools"] = TOOLS
    rates, counts = [], []
    for _ in range(RUNS):
        reply = requests.post(f"{endpoint}/v1/chat/completions", json=body, timeout=120).json()
        rates.append(reply["timings"]["predicted_per_second"])
        counts.append(reply["usage"]["completion_tokens"])
    return statistics.median(rates), int(statistics.median(counts))


def bench(model: Path) -> None:
    starts = []
    for _ in range(RUNS):
        began = time.perf_counter()
        with LocalLlamaServer(model, ctx_size=4096, threads=2):
            starts.append(time.perf_counter() - began)
    print(f"{model.name}: start to healthy, median of {RUNS}: {statistics.median(starts):.2f} s")
    with LocalLlamaServer(model, ctx_size=4096, threads=2) as server, Runtime() as runtime:
        rate, count = speed(server.endpoint, tools=False)
        print(f"  plain reply: {rate:.0f} tokens/s ({count} tokens)")
        rate, count = speed(server.endpoint, tools=True)
        print(f"  with tools offered: {rate:.0f} tokens/s ({count} tokens)")
        llm = LlmClient(
            server.endpoint, runtime=runtime, default_sampling=SamplingParams(0, max_tokens=128)
        )
        turns = []
        for _ in range(RUNS):
            agent = Agent(llm, "", [get_weather], runtime=runtime)
            began = time.perf_counter()
            agent.send("What is the weather in Paris?")
            turns.append(time.perf_counter() - began)
            calls = sum(len(m.tool_calls) for m in agent.history if m.role == "assistant")
        print(f"  agent turn (tool calls: {calls}): median {statistics.median(turns):.2f} s")


def main() -> None:
    if len(sys.argv) > 1:
        models = [Path(arg) for arg in sys.argv[1:]]
    else:
        found = (find_default_model(name) for name in LOCAL_MODELS)
        models = [path for path in found if path is not None]
    print(f"{os.cpu_count()} CPUs; threads=2")
    for model in models:
        bench(model)


if __name__ == "__main__":
    main()
