"""Record raw exchanges with a real llama.cpp server for tests/llm/test_llama_recorded.py.

Starts llama.cpp (agent_smith.LocalLlamaServer, needs agent-smith[local]) on
the deterministic scripted test model (tests/support/scripted_model.py, built
once into the model cache) and writes one JSON file per exchange under
tests/llm/recordings/: the request body, the HTTP status, the content type and
the body exactly as the server sent it (SSE text for streamed replies).

    python scripts/record_llama_exchanges.py [MODEL.gguf]

Volatile values (ids, timestamps, timings) are kept as recorded: the tests
only depend on their shape.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import requests

from agent_smith.llm.local_server import LocalLlamaServer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.scripted_model import ensure_scripted_model  # noqa: E402

OUT = ROOT / "tests" / "llm" / "recordings"

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
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


def exchange(endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    if body.get("stream"):
        body = {**body, "stream_options": {"include_usage": True}}
    response = requests.post(f"{endpoint}/v1/chat/completions", json=body, timeout=120)
    return {
        "request": body,
        "status": response.status_code,
        "content_type": response.headers.get("Content-Type", ""),
        "keep_alive": response.headers.get("Keep-Alive", ""),
        "body": response.content.decode("utf-8"),
    }


def save(name: str, record: dict[str, Any]) -> None:
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{path.relative_to(ROOT)}: HTTP {record['status']}")


def main() -> None:
    chosen = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("AGENT_SMITH_TEST_MODEL")
    model = Path(chosen) if chosen else ensure_scripted_model()
    OUT.mkdir(parents=True, exist_ok=True)
    base = {"temperature": 0}
    with LocalLlamaServer(model, ctx_size=2048) as server:
        url = server.endpoint
        for stream in (False, True):
            kind = "stream" if stream else "complete"
            save(f"plain_{kind}", exchange(url, {**base, "messages": ASK, "stream": stream}))
            first = exchange(url, {**base, "messages": ASK, "tools": TOOLS, "stream": stream})
            save(f"tool_call_{kind}", first)
            call = json.loads(exchange(url, {**base, "messages": ASK, "tools": TOOLS})["body"])
            message = call["choices"][0]["message"]
            history = [
                *ASK,
                message,
                {
                    "role": "tool",
                    "tool_call_id": message["tool_calls"][0]["id"],
                    "content": "Sunny, 21 C",
                },
            ]
            body = {**base, "messages": history, "tools": TOOLS, "stream": stream}
            save(f"after_tool_{kind}", exchange(url, body))
            body = {**base, "messages": ASK, "tools": TOOLS, "stream": stream, "max_tokens": 26}
            save(f"length_in_arguments_{kind}", exchange(url, body))
    # llama.cpp raises a context smaller than 256 tokens to 256.
    with LocalLlamaServer(model, ctx_size=256) as server:
        long = [{"role": "user", "content": "word " * 1000}]
        for stream in (False, True):
            kind = "stream" if stream else "complete"
            body = {**base, "messages": long, "stream": stream}
            save(f"context_overflow_{kind}", exchange(server.endpoint, body))


if __name__ == "__main__":
    main()
