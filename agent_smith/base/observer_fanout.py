"""Several observers told the same things: tracing and metrics installed at once.

:func:`~agent_smith.observer.add_observer` installs a :class:`FanOut` of the
process's observers. Each unit of work asks every observer for its
observation and keeps those that record something (an observer that is off
returns the shared no-op one): none left, and the work gets the no-op
observation itself; one left, that one, as if it were alone. Only when two
observers both record does a combined observation stand in between; it
enters them in order and exits them in reverse, and chains what passes
through (``watch``, ``finish``, ``propagate``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..observer import (
    NO_CHAT,
    NO_MCP,
    NO_TOOL,
    NO_TURN,
    ChatClientFacts,
    ChatObservation,
    ChatReplyFacts,
    ChatRequestFacts,
    JsonObject,
    McpObservation,
    McpServerFacts,
    Observation,
    Observer,
    ToolFacts,
    ToolObservation,
    ToolResultFacts,
    TurnFacts,
    TurnObservation,
)

if TYPE_CHECKING:
    from types import TracebackType

    from ..messages import ToolCall
    from ..runtime import Runtime

E = TypeVar("E")
O = TypeVar("O", bound=Observation)  # noqa: E741 - the observation type, as in observer.py
R = TypeVar("R", bound=ChatReplyFacts)
T = TypeVar("T", bound=ToolResultFacts)


def _one(made: list[O], none: O, both: Callable[[list[O]], O]) -> O:
    """``none`` if no observer records; the one that does; or ``both`` of those that do."""
    live = [o for o in made if o is not none]
    return none if not live else live[0] if len(live) == 1 else both(live)


class _Both(Observation):
    """Enters its parts in order, exits them in reverse (each exit runs whatever the others do)."""

    __slots__ = ("_parts",)

    def __init__(self, parts: list[Any]) -> None:
        self._parts = parts

    def __enter__(self: O) -> O:
        for part in self._parts:  # type: ignore[attr-defined]
            part.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for part in reversed(self._parts):
            part.__exit__(kind, error, tb)


class _Chat(_Both, ChatObservation):
    __slots__ = ()
    _parts: list[ChatObservation]

    def inject(self, headers: dict[str, str]) -> None:
        for part in self._parts:
            part.inject(headers)

    def retry(self, attempt: int, delay: float, failure: BaseException) -> None:
        for part in self._parts:
            part.retry(attempt, delay, failure)

    def watch(self, events: Iterator[E]) -> Iterator[E]:
        for part in self._parts:
            events = part.watch(events)
        return events

    def finish(self, response: R) -> R:
        for part in self._parts:
            response = part.finish(response)
        return response


class _Tool(_Both, ToolObservation):
    __slots__ = ()
    _parts: list[ToolObservation]

    def raised(self, error: BaseException) -> None:
        for part in self._parts:
            part.raised(error)

    def finish(self, result: T) -> T:
        for part in self._parts:
            result = part.finish(result)
        return result

    def abandon(self, *, timed_out: bool) -> None:
        for part in self._parts:
            part.abandon(timed_out=timed_out)


class _Mcp(_Both, McpObservation):
    __slots__ = ()
    _parts: list[McpObservation]

    def propagate(self, params: JsonObject | None) -> JsonObject | None:
        for part in self._parts:
            params = part.propagate(params)
        return params

    def sent(self, request_id: int, protocol_version: str) -> None:
        for part in self._parts:
            part.sent(request_id, protocol_version)

    def finish(self, result: JsonObject) -> JsonObject:
        for part in self._parts:
            result = part.finish(result)
        return result


class _Turn(_Both, TurnObservation):
    __slots__ = ()
    _parts: list[TurnObservation]

    def watch(self, events: Iterator[E]) -> Iterator[E]:
        for part in self._parts:
            events = part.watch(events)
        return events


class FanOut(Observer):
    """Tells each of ``observers``, in order, what it is told."""

    __slots__ = ("observers",)

    def __init__(self, observers: tuple[Observer, ...]) -> None:
        self.observers = observers

    def on_chat_start(
        self, client: ChatClientFacts, request: ChatRequestFacts, body: Mapping[str, Any]
    ) -> ChatObservation:
        return _one(
            [o.on_chat_start(client, request, body) for o in self.observers], NO_CHAT, _Chat
        )

    def on_tool_start(self, call: ToolCall, tool: ToolFacts, runtime: Runtime) -> ToolObservation:
        return _one([o.on_tool_start(call, tool, runtime) for o in self.observers], NO_TOOL, _Tool)

    def on_mcp_request(
        self, server: McpServerFacts, method: str, params: JsonObject | None
    ) -> McpObservation:
        return _one(
            [o.on_mcp_request(server, method, params) for o in self.observers], NO_MCP, _Mcp
        )

    def on_turn_start(self, agent: TurnFacts) -> TurnObservation:
        return _one([o.on_turn_start(agent) for o in self.observers], NO_TURN, _Turn)

    def on_tool_rejected(self, call: ToolCall, problem: str, runtime: Runtime) -> None:
        for o in self.observers:
            o.on_tool_rejected(call, problem, runtime)

    def on_tool_raised(self, error: BaseException) -> None:
        for o in self.observers:
            o.on_tool_raised(error)

    def on_approval(
        self, call: ToolCall, decision: str, *, asked: bool, waited: float = 0.0
    ) -> None:
        for o in self.observers:
            o.on_approval(call, decision, asked=asked, waited=waited)

    def on_guardrail(self, stage: str, name: str, action: str, call_id: str | None) -> None:
        for o in self.observers:
            o.on_guardrail(stage, name, action, call_id)

    def on_compaction(
        self, replaced: int, kept: int, tokens_before: int, tokens_after: int
    ) -> None:
        for o in self.observers:
            o.on_compaction(replaced, kept, tokens_before, tokens_after)

    def on_fallback(self, model: str, provider: str, error: BaseException) -> None:
        for o in self.observers:
            o.on_fallback(model, provider, error)

    def inject(self, headers: dict[str, str]) -> None:
        for o in self.observers:
            o.inject(headers)
