"""Tool calls a model wrote as text, recovered into real tool calls, and only those.

Small models often answer a question that needs a tool by *writing* the call
instead of making it: measured on Qwen2.5-Coder-0.5B under llama.cpp, the
reply's content is ``{"name": "calculator", "arguments": {...}}`` bare, in a
```` ```json ```` fence, or inside ``<tool_call>`` tags the server's parser
did not take, and ``tool_calls`` is empty. :func:`recover_tool_calls` turns
such a reply into the tool calls it spells out, under a strict rule:

* the reply answers the user — the request's last message is not a tool
  result (measured on Qwen2.5-Coder-0.5B: after a tool result
  its JSON repeats the call, passes the result back as arguments, or lists
  every offered tool, turn after turn; none of that is a request, and running
  it kept the turn going until a stop condition);
* the reply has no ``tool_calls`` and tools were offered;
* its content, stripped, is nothing but one or more *units* separated by
  whitespace, each a JSON object — bare, in a fence (```` ``` ```` or
  ```` ```json ````), or between ``<tool_call>`` and ``</tool_call>``;
* every object has exactly the keys ``name`` (an offered tool's name) and
  ``arguments`` (a JSON object).

Anything else stays text: prose around the JSON, a JSON array, an unknown
name, arguments that are a string, one invalid object among valid ones. The
recovered message has empty content, the calls (ids ``call_<24 hex>``) and
finish reason ``tool_calls``, so the history reads as if the model had made
the calls natively; the agent's :class:`~agent_smith.agent.events.AssistantTurn`
says ``recovered_tool_calls=True`` and a DEBUG line is logged. On by default;
``AgentConfig(text_tool_calls=False)`` turns it off. :class:`WrittenCalls`,
one per turn, decides the first condition; :func:`recover_tool_calls` checks
the others.

After tool results, a reply that again starts like a written call (and
makes no real one) is not an answer. Measured on Qwen2.5-Coder-0.5B, the
model does that almost every time, yet a user-role note then makes it answer
in words. So once per turn such a reply is dropped (its usage still counts)
and :data:`ANSWER_NOTE`, quoting the user's message up to its first blank
line (the demo adds a paragraph asking for a file to be read, which the
note must not repeat), is added to the history as a user message, and the
model is asked again (measured: with the question quoted it answers "391";
a note without it was echoed, "The tool results above are 391."); for the rest of
the turn nothing written is recovered (the note asked for words), so a
second such reply stays text. "A reply to tool results" means the
request's last message is a tool result, so a reply to a user message — the
user's own, an output retry's or a steering note — is recovered.

Streaming: a reply's text streams as :class:`~agent_smith.llm.events.TokenDelta`
before anyone knows it is a call. :func:`hold_back_call_text` holds the
deltas of a reply whose text could still be a written call, and no longer:

* a reply to the user is held while its text is a prefix of what
  :func:`recover_tool_calls` accepts (:func:`could_be_written_call`: a unit
  opener, ``{``, the key ``"name"`` or ``"arguments"``, an offered tool's
  name), so ``{"city": "Paris"}`` or ```` ```python ```` streams from its
  fourth character on;
* a reply to tool results is held while it *starts* like a call (``{``, a
  fence, ``<tool_call>``), the rule by which it is dropped for the note;
* either way, at most :data:`HOLD_LIMIT` characters are held: past that the
  text streams whatever it turns out to be.

Held deltas are released, in order, the moment the text stops qualifying.
A reply still held when the stream ends is dropped with its deltas if it
is recovered, or dropped for the answer note (a stream consumer sees the
calls, never their JSON); otherwise its deltas are released just before
:class:`~agent_smith.llm.events.Finished`. A reply released early and then
recovered (a call longer than the bound) has shown its JSON as text; the
:class:`~agent_smith.agent.events.AssistantTurn` still carries the calls.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from .._internal.text import one_line
from ..llm.events import Finished, StreamEvent, TokenDelta, ToolCallStarted
from ..llm.request import LlmRequest, LlmResponse
from ..messages import ToolCall, ToolMessage, UserMessage
from ..tools.base import ToolSchema

log = logging.getLogger(__name__)

_OPEN_TAG, _CLOSE_TAG, _FENCE = "<tool_call>", "</tool_call>", "```"
#: How a reply that may be a written call begins (once its leading space is gone).
_CALL_STARTS = ("{", _FENCE, _OPEN_TAG)
_SPACE = re.compile(r"\s*")
_KEYS = frozenset({"name", "arguments"})
_decoder = json.JSONDecoder()

#: The most text held back as a possible written call, in characters (~128 tokens).
HOLD_LIMIT = 512
_KEY_NAMES = ("name", "arguments")

#: What the agent says, once per turn, when a reply to tool results is another written call.
ANSWER_NOTE = "Using the tool results above, answer in plain words, without calling a tool: {}"
#: The longest question the note quotes (a longer one is cut).
_QUESTION_CHARS = 500


class WrittenCalls:
    """One turn's reading of calls written as text: recovered, or answered once with a note."""

    __slots__ = ("_enabled", "_question")

    def __init__(self, enabled: bool, question: str) -> None:
        self._enabled = enabled  # off for the rest of the turn once the note is given
        self._question = question

    @property
    def note(self) -> UserMessage:
        """The note to record when :meth:`read` says None: ANSWER_NOTE quoting the question."""
        first = self._question.strip().split("\n\n", 1)[0]  # a paragraph added after it
        return UserMessage(
            ANSWER_NOTE.format(one_line(first, _QUESTION_CHARS) or "my question above")
        )

    def stream(self, events: Iterator[StreamEvent], request: LlmRequest) -> Iterator[StreamEvent]:
        """``events`` of the reply to ``request``, a would-be written call's text held back."""
        if not self._enabled:
            return events
        return hold_back_call_text(events, request, after_tools=_answers_tools(request))

    def read(self, response: LlmResponse, request: LlmRequest) -> LlmResponse | None:
        """``response`` to record (its written calls recovered), or None to add :attr:`note`."""
        if not self._enabled:
            return response
        if _answers_tools(request):
            if _starts_a_call(response):
                self._enabled = False
                return None
            return response
        return recover_tool_calls(response, request.tools) or response


def recover_tool_calls(response: LlmResponse, tools: Sequence[ToolSchema]) -> LlmResponse | None:
    """``response`` with the tool calls its text spells out, or None (see the module doc)."""
    written = _written_calls(response, tools)
    if written is None:
        return None
    calls = tuple(ToolCall(f"call_{secrets.token_hex(12)}", name, args) for name, args in written)
    log.debug(
        "recovered %d tool call(s) the model wrote as text: %s",
        len(calls),
        ", ".join(call.name for call in calls),
    )
    return LlmResponse(replace(response.message, content="", tool_calls=calls), "tool_calls")


def _written_calls(
    response: LlmResponse, tools: Sequence[ToolSchema]
) -> list[tuple[str, dict[str, Any]]] | None:
    """The (name, arguments) of the calls ``response``'s text spells out, else None."""
    message = response.message
    if message.tool_calls or not tools:
        return None
    objects = _written_objects(message.content)
    if objects is None:
        return None
    offered = {schema.name for schema in tools}
    calls = []
    for obj in objects:
        name, arguments = obj.get("name"), obj.get("arguments")
        if obj.keys() != _KEYS or not isinstance(name, str) or name not in offered:
            return None
        if not isinstance(arguments, dict):
            return None
        calls.append((name, arguments))
    return calls


def _answers_tools(request: LlmRequest) -> bool:
    """Is the reply to ``request`` an answer to tool results (its last message is one)?"""
    return bool(request.messages) and isinstance(request.messages[-1], ToolMessage)


def _starts_a_call(response: LlmResponse) -> bool:
    message = response.message
    return not message.tool_calls and starts_like_a_call(message.content) is True


def starts_like_a_call(text: str) -> bool | None:
    """True if ``text`` begins like a written call, False if it cannot, None if too short to say."""
    head = text.lstrip()
    if any(head.startswith(start) for start in _CALL_STARTS):
        return True
    if any(start.startswith(head) for start in _CALL_STARTS):
        return None  # "", "`", "<tool" ...
    return False


def hold_back_call_text(
    events: Iterator[StreamEvent], request: LlmRequest, *, after_tools: bool
) -> Iterator[StreamEvent]:
    """``events`` with the text deltas of a would-be written call held back (see the module doc).

    The held deltas are dropped when the reply turns out to be a call the
    agent recovers (a reply to the user) or one it answers with
    :data:`ANSWER_NOTE` (``after_tools``), else released as soon as the text
    stops qualifying or passes :data:`HOLD_LIMIT`, at the latest before
    ``Finished``. Closing this iterator closes ``events``.
    """
    tools = request.tools
    names = frozenset(schema.name for schema in tools)
    held: list[TokenDelta] = []
    text = ""
    holding = bool(tools)
    try:
        for event in events:
            if holding:
                if isinstance(event, TokenDelta):
                    text += event.text
                    if after_tools:
                        holding = starts_like_a_call(text) is not False
                    else:
                        holding = could_be_written_call(text, names)
                    if holding and len(text) > HOLD_LIMIT:
                        log.debug("releasing %d held characters: past the bound", len(text))
                        holding = False
                    if holding:
                        held.append(event)
                        continue
                elif isinstance(event, ToolCallStarted):  # real calls: the text is only text
                    holding = False
                elif isinstance(event, Finished):
                    reply = event.response
                    if after_tools:
                        dropped = _starts_a_call(reply)
                    else:
                        dropped = _written_calls(reply, tools) is not None
                    if dropped:
                        held.clear()
                    holding = False
                if not holding:
                    yield from held
                    held.clear()
            yield event
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()


def could_be_written_call(text: str, names: frozenset[str]) -> bool:
    """False once ``text`` cannot be the beginning of a call to one of ``names`` written as text.

    True while it is (or may grow into) a unit opener, ``{``, the key
    ``"name"`` with an offered tool's name (or a prefix of one) followed by
    the key ``"arguments"``, or the key ``"arguments"`` first (whose object
    may hold anything). Measured on Qwen2.5-Coder-0.5B: typed output with a
    ``name`` field came as ``{"name": "read_file", "country": "France"}``,
    an offered tool's name; the next key shows it is no call.
    """
    pos = _skip_space(text, 0)
    rest = text[pos:]
    if rest.startswith(_OPEN_TAG):
        pos += len(_OPEN_TAG)
    elif rest.startswith(_FENCE):
        pos += len(_FENCE)
        language = text[pos : pos + 4].lower()
        if language == "json":
            pos += 4
        elif pos + len(language) == len(text) and "json".startswith(language):
            return True  # "```js", say: the language is still arriving
    elif _OPEN_TAG.startswith(rest) or _FENCE.startswith(rest):
        return True
    pos = _skip_space(text, pos)
    if pos == len(text):
        return True
    if text[pos] != "{":
        return False
    key, pos = _string_at(text, _skip_space(text, pos + 1))
    if key is None:
        return pos == len(text)
    if pos < 0:
        return any(known.startswith(key) for known in _KEY_NAMES)
    if key != "name":
        return key == "arguments"
    pos = _skip_space(text, pos)
    if pos == len(text):
        return True
    if text[pos] != ":":
        return False
    value, pos = _string_at(text, _skip_space(text, pos + 1))
    if value is None:
        return pos == len(text)
    if pos < 0:
        return any(name.startswith(value) for name in names)
    if value not in names:
        return False
    pos = _skip_space(text, pos)
    if pos == len(text):
        return True
    if text[pos] != ",":
        return False  # "}": a name alone is no call
    key, pos = _string_at(text, _skip_space(text, pos + 1))
    if key is None:
        return pos == len(text)
    return "arguments".startswith(key) if pos < 0 else key == "arguments"


def _skip_space(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def _string_at(text: str, pos: int) -> tuple[str | None, int]:
    """The JSON string (unescaped chars only) at ``pos`` and where it ends (-1: unfinished).

    ``(None, pos)`` when no string starts at ``pos``.
    """
    if not text.startswith('"', pos):
        return None, pos
    end = text.find('"', pos + 1)
    if end < 0:
        return text[pos + 1 :], -1
    return text[pos + 1 : end], end + 1


def _written_objects(content: str) -> list[dict[str, Any]] | None:
    """The JSON objects ``content`` consists of (bare, fenced or tagged), else None."""
    if not content or content.lstrip()[:1] not in ("{", "`", "<"):
        return None  # the common case, prose, costs one look at its first character
    objects: list[dict[str, Any]] = []
    pos, end = 0, len(content)
    while True:
        match = _SPACE.match(content, pos)
        pos = match.end() if match else pos
        if pos == end:
            return objects or None
        if content.startswith(_OPEN_TAG, pos):
            inner_start = pos + len(_OPEN_TAG)
            close = content.find(_CLOSE_TAG, inner_start)
            closing = len(_CLOSE_TAG)
        elif content.startswith(_FENCE, pos):
            inner_start = pos + len(_FENCE)
            if content[inner_start : inner_start + 4].lower() == "json":
                inner_start += 4
            close = content.find(_FENCE, inner_start)
            closing = len(_FENCE)
        else:
            found = _object_at(content, pos)
            if found is None:
                return None
            obj, pos = found
            objects.append(obj)
            continue
        if close < 0:
            return None
        inner = content[inner_start:close].strip()
        found = _object_at(inner, 0)
        if found is None or found[1] != len(inner):
            return None  # a unit holds exactly one object
        objects.append(found[0])
        pos = close + closing


def _object_at(text: str, pos: int) -> tuple[dict[str, Any], int] | None:
    """The JSON object starting at ``pos`` and where it ends, or None."""
    if not text.startswith("{", pos):
        return None
    try:
        value, end = _decoder.raw_decode(text, pos)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return None
    return (value, end) if isinstance(value, dict) else None
