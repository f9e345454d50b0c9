"""A small model's requests: short tool descriptions, and no tools once a result is in.

``AgentConfig(small_model=True)`` says the model is a small one (the demo's
local Qwen2.5-Coder-0.5B). Measured on it under llama.cpp
(``scripts/probe_first_answers.py``, docs/llama.md), each request is shaped
by :func:`small_request`:

* the active skills' tools (their own and their MCP servers') are listed
  first: measured, the 0.5B picks the first tool that may fit, and with a
  skill on, the skill's prompt speaks of its tools (the time-keeper's
  ``now``, not the demo server's of the same name);
* every tool's description is cut to its first sentence (at most
  :data:`DESCRIPTION_CHARS` characters) and its parameters' descriptions are
  dropped: fewer prompt tokens to read on two cores, and fewer words to copy
  into a call. The cut is the same every round, so the prompt's start
  (system prompt, tools, history) stays the same across a conversation's
  first requests and llama.cpp's ``cache_prompt`` keeps it in its KV cache;
* every tool result is sent cut to its first :data:`RESULT_CHARS`
  characters (the history keeps it whole): the model answers from the
  start of a big file as well as from all of it, and on two cores each
  thousand characters more is seconds of prompt to read before the answer.
  When the last result was cut, the answer note says so and asks for one or
  two sentences (:data:`LONG_NOTE`): measured, without it the 0.5B copied
  the file's lines up to its token cap (256 tokens, 103 s on two cores);
  with it, "The result is a long list of boxes of steel screws, listing
  each shelf with a description." (asked only for "what it holds", it
  once said that and once only "information about the contents of the
  `big.txt` file");
* after tool results, the request offers no tool (``tool_choice="none"``)
  and ends with :data:`~agent_smith.agent.text_tool_calls.ANSWER_NOTE`
  quoting the user's question: measured, the model then answers ("17 times
  23 equals 391.") where otherwise it wrote the call again. The note is part
  of the request only, not of the history. A reply that still is no answer
  is answered from the results (:mod:`~agent_smith.agent.text_tool_calls`).

On the wire (:class:`~agent_smith.agent.small_chat.SmallChat`,
:mod:`~agent_smith.agent.tool_choice`), a request that offers tools asks
for a constrained choice (one offered tool's call, or an answer), a chosen
call is grounded before it is shown (:mod:`~agent_smith.agent.grounding`),
and the request after tool results tells the round in one message and
asks for words.

A small model therefore answers from one round of tool results; it does not
chain tools within a turn.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from ..llm.request import LlmRequest
from ..messages import ToolMessage, UserMessage
from ..tools.base import ToolSchema
from .text_tool_calls import answer_note

#: The longest tool description a small model is shown, in characters.
DESCRIPTION_CHARS = 100
#: The most of one tool result a small model is sent, in characters (~500 tokens).
RESULT_CHARS = 2000
#: Added to the answer note after a result too long to send whole.
LONG_NOTE = (
    "\nThe result is long: do not copy it; say in one or two sentences what it is and what "
    "it lists."
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


def small_request(request: LlmRequest, question: str, *, first: Collection[str] = ()) -> LlmRequest:
    """``request`` as a small model is sent it (see the module doc).

    ``first``: the names of the tools to list first (an active skill's).
    """
    ordered = sorted(request.tools, key=lambda schema: schema.name not in first)
    tools = tuple(short_schema(schema) for schema in ordered)
    messages = tuple(_cut(m) if isinstance(m, ToolMessage) else m for m in request.messages)
    if tools and messages and isinstance(messages[-1], ToolMessage):
        note = answer_note(question)
        if messages[-1] is not request.messages[-1]:  # the last result was cut
            note = UserMessage(note.text + LONG_NOTE)
        return replace(
            request,
            messages=(*messages, note),
            tools=tools,
            tool_choice="none",
        )
    return replace(request, messages=messages, tools=tools)


def _cut(result: ToolMessage) -> ToolMessage:
    text = result.content
    if not isinstance(text, str) or len(text) <= RESULT_CHARS:  # parts are not cut
        return result
    kept = text[:RESULT_CHARS].rsplit("\n", 1)[0] or text[:RESULT_CHARS]  # whole lines
    note = f"\n…[the first {len(kept)} of {len(text)} characters]"
    return replace(result, content=kept + note)


def short_schema(schema: ToolSchema) -> ToolSchema:
    """``schema`` with its description's first sentence and no parameter descriptions."""
    description = _SENTENCE_END.split(schema.description.strip(), maxsplit=1)[0]
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return ToolSchema(schema.name, description, _without_descriptions(schema.parameters))


def _without_descriptions(parameters: dict[str, Any]) -> dict[str, Any]:
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        return parameters
    bare = {
        name: {k: v for k, v in spec.items() if k != "description"}
        if isinstance(spec, dict)
        else spec
        for name, spec in properties.items()
    }
    return {**parameters, "properties": bare}
