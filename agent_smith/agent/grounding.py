"""A small model's call, checked before it is shown or run: grounded in what exists or was said.

Measured on Qwen2.5-Coder-0.5B under its constrained choice (docs/llama.md),
it sometimes calls a tool with arguments taken from nowhere:
``list_files("B12")`` for "Which room is it in?" (B12 came from a file read
the turn before), ``calculator("100 + 200")`` for "What is the capital of
Japan?". The user sees each such call as an activity line, and the answer
that follows it is read as the tool's. A tool says why a call's arguments
look made up (:meth:`~agent_smith.tools.base.Tool.ungrounded`: a path that
is in neither the workspace nor the user's words, an expression with no
number of the conversation's); :class:`~agent_smith.agent.small_chat.SmallChat`
asks :func:`grounding` of each chosen call before showing it. An
ungrounded call is made without its optional arguments when those were
made up from nothing (``list_files("/home/user/documents")`` for "List the
files in this folder.": the workspace itself); otherwise it is taken back
(never shown, run or recorded) and the request asked again without tools,
for words.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..base.parts import content_text
from ..messages import Message, ToolCall, UserMessage
from ..tools.base import Said
from ..tools.registry import ToolRegistry

log = logging.getLogger(__name__)

#: A chosen call as it is to be made (maybe with arguments dropped), or None: take it back.
Grounding = Callable[[ToolCall, Sequence[Message]], "ToolCall | None"]


def said(messages: Sequence[Message]) -> Said:
    """What ``messages`` said: the user's words, and all their text (answers, tool results)."""
    user: list[str] = []
    text: list[str] = []
    for message in messages:
        if message.role == "system":
            continue
        words = content_text(message.content) if message.content else ""
        text.append(words)
        if isinstance(message, UserMessage):
            user.append(words)
    return Said("\n".join(user), "\n".join(text))


def grounding(registry: Callable[[], ToolRegistry]) -> Grounding:
    """The grounding of a call by its tool (found in ``registry()``, the agent's tools now).

    An ungrounded call is made without its optional arguments when that
    grounds it and none of their values came from the conversation (a
    folder made up for ``list_files``: the workspace itself); else it is
    taken back (a value copied from the conversation into the wrong tool).
    """

    def ground(call: ToolCall, messages: Sequence[Message]) -> ToolCall | None:
        tool = registry().find(call.name)
        if tool is None:
            return call  # the dispatch says so
        told = said(messages)
        why = tool.ungrounded(call.arguments, told)
        if why is None:
            return call
        required = tool.schema.parameters.get("required", ())
        kept = {key: value for key, value in call.arguments.items() if key in required}
        dropped = [value for key, value in call.arguments.items() if key not in required]
        if (
            dropped
            and not any(_spelled(value) in told.text for value in dropped)
            and tool.ungrounded(kept, told) is None
        ):
            log.debug("a small model's call of %s is made without %s: %s", call.name, dropped, why)
            return replace(call, arguments=kept)
        log.debug("a small model's call of %s is taken back: %s", call.name, why)
        return None

    return ground


def _spelled(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)
