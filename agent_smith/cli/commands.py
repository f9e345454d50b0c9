"""The REPL's slash commands: ``/help``, ``/clear``, ``/history``, ``/tools``, ``/stats``,
``/exit`` (and ``/image PATH``, which the REPL itself carries out: it holds the files).

A line is a command when it is one word starting with ``/`` (so a question
that starts with a path, ``/etc/hosts: what is in it?``, still goes to the
model). Each command writes its answer to the REPL's stderr, beside the
other status lines, and never reaches the model.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, TextIO

from ..base.parts import media_parts
from ..messages import AssistantMessage, Message, ToolMessage, UserMessage

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from ..metrics import MetricsCollector

#: Every command and what it does, in the order /help lists them.
COMMANDS = {
    "/help": "list these commands",
    "/clear": "forget the conversation so far and start afresh (tools stay)",
    "/history": "show the conversation so far, one line per message",
    "/tools": "list the tools the model can call",
    "/stats": "this session's tokens, cost, tool calls, and time in the model and in tools",
    "/image": "PATH [question]: attach an image (or PDF, text, audio) to your next message",
    "/exit": "quit (also /quit or Ctrl-D); Ctrl-C cancels the reply being written",
}
EXIT_COMMANDS = ("/exit", "/quit")
IMAGE_COMMAND = "/image"
_WORD = re.compile(r"/[A-Za-z]+")


def is_command(text: str) -> bool:
    """Whether a (stripped) line is a slash command rather than a question."""
    return _WORD.fullmatch(text) is not None


def run_command(
    text: str, agent: Agent, out: TextIO, *, width: int, metrics: MetricsCollector | None = None
) -> None:
    """Carry out the command ``text`` (not an exit command) on ``agent``, writing to ``out``.

    ``metrics``: the session's collector, which ``/stats`` reads.
    """
    name = text.lower()
    if name == "/help":
        lines = [f"{command:<9} {what}" for command, what in COMMANDS.items()]
    elif name == "/clear":
        forgotten = len(agent.history)
        agent.memory.clear()
        lines = [f"conversation cleared ({forgotten} message(s) forgotten)"]
    elif name == "/history":
        history = agent.history
        lines = [one_line(_describe(m), width) for m in history] or ["(no conversation yet)"]
        if history:
            size = sum(len(described_text(m)) for m in history)
            lines.append(f"({len(history)} message(s), {size} characters; /clear forgets them)")
    elif name == "/tools":
        lines = [f"tools the model can call: {', '.join(agent.tools) or '(none)'}"]
    elif name == "/stats":
        lines = session_stats(metrics) if metrics is not None else ["(no metrics collected)"]
    else:
        lines = [f"unknown command {text}; /help lists the commands"]
    out.write("".join(line + "\n" for line in lines))
    out.flush()


def session_stats(metrics: MetricsCollector) -> list[str]:
    """What ``/stats`` prints: turns, model requests, tokens, cost, tool calls, time spent."""
    total = metrics.total
    cost = total("cost")
    failed = total("tool_errors")
    return [
        f"turns: {total('turns'):.0f}; model requests: {total('model_requests'):.0f}"
        f" ({total('retries'):.0f} retried, {total('model_errors'):.0f} failed)",
        f"tokens: {total('tokens', type='input'):.0f} in"
        f" ({total('tokens', type='cached'):.0f} cached), {total('tokens', type='output'):.0f} out"
        + (f"; cost {cost:.4f}" if cost else ""),
        f"tool calls: {total('tool_calls'):.0f}" + (f" ({failed:.0f} failed)" if failed else ""),
        f"time: {total('model_request_duration'):.1f} s in the model,"
        f" {total('tool_duration'):.1f} s in tools",
    ]


def described_text(message: Message) -> str:
    """The message's text, each of its files named in brackets (``[image (image/png, 2 kB)]``)."""
    if isinstance(message, UserMessage | ToolMessage):
        files = " ".join(f"[{part.describe()}]" for part in media_parts(message.content))
        return f"{message.text} {files}" if files else message.text
    return message.content


def _describe(message: Message) -> str:
    if isinstance(message, ToolMessage):
        return f"tool {message.name}: {described_text(message)}"
    if isinstance(message, AssistantMessage) and message.tool_calls:
        calls = "; ".join(
            f"{call.name} {json.dumps(call.arguments, ensure_ascii=False)}"
            for call in message.tool_calls
        )
        said = f"{message.content} " if message.content else ""
        return f"assistant: {said}[calls {calls}]"
    return f"{message.role}: {described_text(message)}"


def one_line(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
