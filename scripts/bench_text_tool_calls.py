"""What recovering tool calls written as text costs per reply (agent_smith.agent.text_tool_calls).

Times :func:`recover_tool_calls` on replies of each kind (prose, which
should cost next to nothing, and the call shapes small models write) and
:func:`visible_events` (the visible-text filter) over a streamed prose reply against the bare
stream. Best of 5 runs of N calls each, per call.

    .venv/bin/python scripts/bench_text_tool_calls.py
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

from agent_smith.agent.text_tool_calls import recover_tool_calls, visible_events
from agent_smith.llm.events import Finished, StreamEvent, TokenDelta
from agent_smith.llm.request import LlmResponse
from agent_smith.messages import AssistantMessage
from agent_smith.tools.base import ToolSchema

TOOLS = tuple(
    ToolSchema(name, "A tool.", {"type": "object", "properties": {}})
    for name in ("calculator", "read_local_file", "mcp_demo__echo", "mcp_demo__now")
)
CALL = '{"name": "calculator", "arguments": {"expression": "17 * 23"}}'
PRETTY = '{\n  "name": "calculator",\n  "arguments": {\n    "expression": "1234 * 5678"\n  }\n}'
PROSE = "The meeting moved to Thursday at 3 pm, in room B12. " * 10  # ~520 characters
REPLIES = {
    "prose (520 chars)": PROSE,
    "JSON answer, not a call": '{"answer": 42, "unit": "m"}',
    "bare call": CALL,
    "```json fence": f"```json\n{PRETTY}\n```",
    "two <tool_call> tags": f"<tool_call>\n{CALL}\n</tool_call>\n<tool_call>\n{CALL}\n</tool_call>",
}
N = 20_000


def best(fn: Callable[[], object], number: int) -> float:
    """Seconds per call, best of 5 runs."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def stream(text: str, pieces: int) -> list[StreamEvent]:
    size = max(1, len(text) // pieces)
    deltas: list[StreamEvent] = [TokenDelta(text[i : i + size]) for i in range(0, len(text), size)]
    response = LlmResponse(AssistantMessage(text), "stop")
    return [*deltas, Finished("stop", None, response)]


def main() -> None:
    print(f"recover_tool_calls, {len(TOOLS)} tools offered, per reply:")
    for label, content in REPLIES.items():
        response = LlmResponse(AssistantMessage(content), "stop")
        seconds = best(lambda r=response: recover_tool_calls(r, TOOLS), N)
        found = recover_tool_calls(response, TOOLS)
        calls = len(found.message.tool_calls) if found else 0
        print(f"  {label:<28} {seconds * 1e6:7.2f} µs  ({calls} call(s) recovered)")
    events = stream(PROSE, 130)  # ~4 characters per delta, like a token stream
    bare = best(lambda: sum(1 for _ in iter(events)), 2_000)
    held = best(lambda: sum(1 for _ in visible_events(iter(events))), 2_000)
    print(
        f"visible_events over a streamed prose reply ({len(events)} events): "
        f"{held * 1e6:.1f} µs vs {bare * 1e6:.1f} µs bare "
        f"(+{(held - bare) * 1e6 / len(events):.2f} µs per event)"
    )


if __name__ == "__main__":
    main()
