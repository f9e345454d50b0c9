"""Tools a provider runs on its own side: kept, replayed, shown, never dispatched.

Anthropic's web search, web fetch and code execution, Bedrock's Nova web
grounding and code interpreter, Gemini's code execution and grounding and
the Responses API's web search, file search and code interpreter, and on
OpenAI-compatible servers Groq's compound models' ``executed_tools``, run on
the provider's side, within one reply. The reply holds the call and its result
next to the text; the client has nothing to run. So each provider's reply
reader keeps those blocks (parts, items) verbatim in the turn's
:class:`~agent_smith.messages.ProviderData` — the same provider gets them
back with the history, another drops them — and never turns them into
:class:`~agent_smith.messages.ToolCall`\\ s, which the agent would dispatch
(an unknown tool, answered with an error, and the finished reply thrown
away). What ran is reported as :class:`~agent_smith.llm.events.ServerToolUsed`
events, collected here per reply: on the response
(``LlmResponse.server_tools``), in a stream as soon as the tool ran (Anthropic,
Bedrock, Responses) or before ``Finished`` (Gemini, OpenAI-compatible), and by
the agent in both modes.
"""

from __future__ import annotations

from typing import Any

from .._internal import json_input
from .events import ServerToolUsed

#: The finish reason of a reply the provider paused while its own tools ran (Anthropic's
#: ``pause_turn``, after some seconds of searching): the reply is part of the answer, and
#: the history sent back as it is lets the provider go on.
PAUSED = "pause_turn"


class ServerToolLog:
    """The server-side tool calls of one reply and their results, in the reply's order."""

    def __init__(self, provider: str) -> None:
        self._provider = provider
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self._results: dict[str, list[Any]] = {}
        self._unnamed = 0
        self._shown: set[str] = set()

    def call(self, name: object, call_id: object, arguments: object) -> str:
        """Note a call; returns its id (made up when the provider gives none).

        ``arguments``: an object, or its JSON text as streamed (:func:`streamed_input`).
        """
        if not isinstance(call_id, str) or not call_id:
            call_id = f"{self._provider}_server_{self._unnamed}"
            self._unnamed += 1
        tool = name if isinstance(name, str) else "server_tool"
        if isinstance(arguments, str):
            arguments = streamed_input(arguments)
        self._calls[call_id] = (tool, arguments if isinstance(arguments, dict) else {})
        return call_id

    def result(self, call_id: object, result: Any) -> None:
        """Note a result of the call ``call_id`` (a call may have several)."""
        if isinstance(call_id, str):
            self._results.setdefault(call_id, []).append(result)

    def used(self) -> tuple[ServerToolUsed, ...]:
        """What ran, one event per call, with its results."""
        results, provider = self._results, self._provider
        return tuple(
            ServerToolUsed(name, call_id, arguments, tuple(results.get(call_id, ())), provider)
            for call_id, (name, arguments) in self._calls.items()
        )

    def ran(
        self, name: object, call_id: object, arguments: object, result: Any
    ) -> list[ServerToolUsed]:
        """A streamed call's result arrived: note both; the calls not shown yet, this one too."""
        self.call(name, call_id, arguments)
        self.result(call_id, result)
        return self.fresh()

    def fresh(self) -> list[ServerToolUsed]:
        """The calls noted since last asked: a stream shows each as soon as it ran."""
        new = [used for used in self.used() if used.id not in self._shown]
        self._shown.update(used.id for used in new)
        return new

    @property
    def shown(self) -> frozenset[str]:
        """The ids of the calls :meth:`fresh` gave."""
        return frozenset(self._shown)

    def __bool__(self) -> bool:
        return bool(self._calls)


def streamed_input(text: str) -> dict[str, Any]:
    """A server tool's input streamed as JSON text, as the object replayed to the provider.

    The provider ran the tool on what it streamed; text that is not an object
    (a cut-off stream) is replayed as ``{}``, which the provider accepts.
    """
    try:
        value = json_input.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def executed_tools(raw: object, provider: str) -> tuple[ServerToolUsed, ...]:
    """The tools an OpenAI-compatible server ran itself (Groq's ``executed_tools``; not replayed).

    Each entry: its ``type`` names the tool, ``arguments`` is JSON text, the
    results are its ``output`` and ``search_results`` where given. A stream
    gives an entry twice (first without output); the caller keeps the latest.
    """
    log = ServerToolLog(provider)
    for entry in raw if isinstance(raw, list) else ():
        if not isinstance(entry, dict):
            continue
        call_id = log.call(
            entry.get("type"), f"executed_{entry.get('index', '')}", entry.get("arguments")
        )
        for key in ("output", "search_results"):
            if entry.get(key) is not None:
                log.result(call_id, entry[key])
    return log.used()
