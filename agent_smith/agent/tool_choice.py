"""A small model's reply as a constrained choice: one offered tool's call, or an answer.

Measured on Qwen2.5-Coder-0.5B under llama.cpp (docs/llama.md): offered
tools the chat template's way (``tools``), it often answers from
imagination where a tool was needed, writes the call as text, or invents a
tool's name; ``tool_choice: "required"`` is not enforced by its template,
and llama-server refuses a ``grammar`` beside ``tools``. So a small model's
request (:func:`choice_request`) carries no ``tools``: the system prompt
lists them (:func:`tools_prompt`: :data:`ANSWER_TOOL` first, then each tool's
``name(arguments): description``, then how to reply), and a JSON schema in
``response_format`` (:func:`choice_schema`; llama.cpp turns it into a
grammar) lets the reply be nothing but ``{"tool": NAME, "arguments":
{...}}``, where NAME is one offered tool's (or :data:`ANSWER_TOOL`) and the
arguments that tool's schema (its required parameters only, when it has
some: :func:`needed_only`). The model cannot invent a name or write
anything but one call.

The reply to tool results (the request's ``tool_choice`` is ``"none"``,
:mod:`~agent_smith.agent.small_model`) is words: the agent's own system
prompt (no tools listed, no JSON asked for), the round told in one user
message (:func:`results_told`: ``calculator(expression="17*23")
returned:`` and the result, then the note quoting the question), no schema,
and a grammar (:data:`WORDS_GRAMMAR`) that forbids opening like a call and
any JSON object with a key. Measured: a JSON answer there loses the fact
("17*23" for 391) where words keep it ("391"); with the tools list and its
JSON instruction still in the prompt, and the results in the chat
template's ``<tool_response>`` turns, the model echoed the file note,
misread the result (port 8080 for 8443) or wrote a fenced ``{"tool": ...}``
call.

:func:`read_choice` turns a reply's text back into the neutral form: a
:class:`~agent_smith.messages.ToolCall` (id ``call_<24 hex>``) or the
answer's text, so the loop, the history and the events are those of a
model that called the tool natively. The history's earlier rounds go back
to the model the chat template's way.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, replace
from typing import Any

from ..base.parts import content_text
from ..llm.request import LlmRequest
from ..messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from ..tools.base import ToolSchema
from .text_tool_calls import first_paragraph

#: The pseudo-tool a small model "calls" to answer in words.
ANSWER_TOOL = "answer"
#: How the pseudo-tool is described, first in the list (measured on the 0.5B: listed last,
#: greetings, facts and writing went to the first tool listed, the calculator or the echo
#: tool, with the answer written as its argument; offered as a separate ``{"answer": ...}``
#: shape, it answered arithmetic from imagination).
ANSWER_LINE = f"- {ANSWER_TOOL}(text): Reply to the user in words, when no other tool is needed."
#: The last lines of the tools' list: how to reply.
REPLY_LINE = 'Reply with one JSON object: {"tool": NAME, "arguments": {...}}.'
#: A reply in words (GBNF, llama.cpp's ``grammar``): it does not open like a call (``{``,
#: ``[``, ``<``, a fence) and holds no JSON object with a key (``{`` then ``"`` or a space).
WORDS_GRAMMAR = r"""root ::= [^{<\[`\x00] ([^{\x00] | "{" [^"\x00 \t\n])*"""
#: The start of a reply that answers (the JSON schema fixes its keys' order).
_ANSWER_START = re.compile(
    r'\s*\{\s*"tool"\s*:\s*"' + ANSWER_TOOL + r'"\s*,\s*"arguments"\s*:\s*\{\s*"text"\s*:\s*"'
)
#: The start of a reply up to the tool's name.
_NAME = re.compile(r'\s*\{\s*"tool"\s*:\s*"([^"\\]*)"')
#: How every choice starts, whitespace left out.
_CHOICE_START = '{"tool":"'


def choice_request(request: LlmRequest) -> LlmRequest | None:
    """``request`` with its tools in the prompt and its reply constrained, or None (as it is).

    None when it offers no tool, already asks for a ``response_format``
    (typed output), or offers a tool named :data:`ANSWER_TOOL`.
    """
    tools = request.tools
    if not tools or request.sampling.response_format is not None:
        return None
    if any(schema.name == ANSWER_TOOL for schema in tools):
        return None
    if request.tool_choice == "none":  # the reply to tool results: words
        extra = {**request.sampling.extra, "grammar": WORDS_GRAMMAR}
        words = replace(request.sampling, extra=extra)
        messages = results_told(request.messages)
        return replace(request, messages=messages, tools=(), tool_choice=None, sampling=words)
    tools = tuple(needed_only(schema) for schema in tools)
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "tool_choice", "schema": choice_schema(tools)},
    }
    sampling = replace(request.sampling, response_format=response_format)
    messages = _with_tools_listed(request.messages, tools)
    return replace(request, messages=messages, tools=(), tool_choice=None, sampling=sampling)


def needed_only(schema: ToolSchema) -> ToolSchema:
    """``schema`` without its optional parameters, when it has required ones.

    Measured on the 0.5B: offered ``read_file(path, start_line, end_line)``
    it read "config.ini" from line 1 to 1 and made the port up. A tool with
    no required parameter keeps its optional ones (``list_files(path)``):
    they are the only way to say what is wanted.
    """
    parameters = schema.parameters
    required = parameters.get("required")
    properties = parameters.get("properties")
    if not required or not isinstance(properties, dict):
        return schema
    needed = {name: spec for name, spec in properties.items() if name in required}
    bare = {**parameters, "properties": needed, "additionalProperties": False}
    return replace(schema, parameters=bare)


def choice_schema(tools: tuple[ToolSchema, ...]) -> dict[str, Any]:
    """The JSON schema of a reply: one of ``tools``' calls, or :data:`ANSWER_TOOL`'s."""
    text = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    alternatives = [_call_schema(schema.name, schema.parameters) for schema in tools]
    alternatives.append(_call_schema(ANSWER_TOOL, text))
    return {"anyOf": alternatives}


def _call_schema(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    arguments = parameters if parameters.get("type") == "object" else {"type": "object"}
    return {
        "type": "object",
        "properties": {"tool": {"const": name}, "arguments": arguments},
        "required": ["tool", "arguments"],
        "additionalProperties": False,
    }


def tools_prompt(tools: tuple[ToolSchema, ...]) -> str:
    """The system prompt's list: :data:`ANSWER_TOOL`, ``tools``, and how to reply."""
    lines = ["Tools:", ANSWER_LINE]
    for schema in tools:
        properties = schema.parameters.get("properties")
        names = ", ".join(properties) if isinstance(properties, dict) else ""
        lines.append(f"- {schema.name}({names}): {schema.description}".rstrip(": "))
    return "\n".join([*lines, "", REPLY_LINE])


def _with_tools_listed(
    messages: tuple[Message, ...], tools: tuple[ToolSchema, ...]
) -> tuple[Message, ...]:
    listed = tools_prompt(tools)
    if messages and isinstance(messages[0], SystemMessage):
        first = messages[0]
        return (replace(first, content=f"{first.content}\n\n{listed}"), *messages[1:])
    return (SystemMessage(listed), *messages)


def results_told(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """``messages`` with their last round (call, results, note) told in one user message.

    The message names each call with its arguments and gives its result,
    then the note that asks for the answer. The question's own message is
    kept as the note quotes it, up to its first blank line (measured on the
    0.5B: whole, it echoed the file note the REPL adds to it, "Read big.txt
    with read_file before you answer."; left out, it echoed the note's
    quote). The messages before stay as they are. Messages that end in no
    round stay whole.
    """
    end = len(messages)
    note = messages[-1] if end and isinstance(messages[-1], UserMessage) else None
    end -= note is not None
    start = end
    while start and isinstance(messages[start - 1], ToolMessage):
        start -= 1
    calling = messages[start - 1] if start else None
    if start == end or not isinstance(calling, AssistantMessage):
        return messages
    calls = {call.id: call for call in calling.tool_calls}
    results = [m for m in messages[start:end] if isinstance(m, ToolMessage)]
    told = [_told(result, calls.get(result.tool_call_id)) for result in results]
    before = list(messages[: start - 1])
    if note is not None:
        told.append(content_text(note.content))
        question = before[-1] if before else None
        if isinstance(question, UserMessage) and isinstance(question.content, str):
            before[-1] = replace(question, content=first_paragraph(question.content))
    return (*before, UserMessage("\n\n".join(told)))


def _told(result: ToolMessage, call: ToolCall | None) -> str:
    arguments = call.arguments if call is not None else {}
    spelled = ", ".join(f"{name}={json.dumps(value)}" for name, value in arguments.items())
    outcome = "failed" if result.is_error else "returned"
    return f"{result.name}({spelled}) {outcome}:\n{result.content}"


@dataclass(frozen=True)
class Choice:
    """What a constrained reply chose: a tool's call, or an answer (``call`` None)."""

    call: ToolCall | None
    answer: str = ""


def read_choice(text: str) -> Choice | None:
    """The choice ``text`` holds, or None when it is no choice (not the constrained shape)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or set(value) != {"tool", "arguments"}:
        return None
    name, arguments = value["tool"], value["arguments"]
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        return None
    if name == ANSWER_TOOL:
        answer = arguments.get("text")
        return Choice(None, answer) if isinstance(answer, str) else None
    return Choice(ToolCall(f"call_{secrets.token_hex(12)}", name, arguments))


def may_be_choice(text: str) -> bool:
    """Whether ``text``, the start of a reply being written, may still become a choice."""
    squeezed = "".join(text.split())[: len(_CHOICE_START)]
    return _CHOICE_START.startswith(squeezed)


def chosen_name(text: str) -> str | None:
    """The tool's name at the start of a reply being written, once it is whole."""
    match = _NAME.match(text)
    return match.group(1) if match else None


def answer_so_far(text: str) -> str | None:
    """The answer's text decoded so far from a reply being written, or None: no answer."""
    match = _ANSWER_START.match(text)
    if match is None:
        return None
    decoded: list[str] = []
    rest = text[match.end() :]
    i = 0
    while i < len(rest):
        char = rest[i]
        if char == '"':
            break
        if char != "\\":
            decoded.append(char)
            i += 1
            continue
        escape = rest[i : i + _escape_length(rest, i)]
        if len(escape) < _escape_length(rest, i):
            break  # the escape is not whole yet
        try:
            decoded.append(json.loads(f'"{escape}"'))
        except ValueError:
            break
        i += len(escape)
    return "".join(decoded)


def _escape_length(text: str, start: int) -> int:
    """How long the escape at ``text[start]`` is: ``\\n``, ``\\u00e9``, or a surrogate pair."""
    if text[start + 1 : start + 2] != "u":
        return 2
    return 12 if text[start + 2 : start + 4].lower() in ("d8", "d9", "da", "db") else 6
