"""The observer seam: how the LLM client, the tool dispatcher and the MCP client report their work.

The three call the process's :class:`Observer` at the start of each unit of
work and get back an *observation*, a context manager around that work that
they tell what happened (a retry, the reply, the result) and that ends with
it; an exception leaving the block marks it failed:

* ``on_chat_start`` → :class:`ChatObservation`: one LLM call, retries included;
* ``on_tool_start`` → :class:`ToolObservation`: one tool call, entered on the
  worker that runs it (``on_tool_rejected`` for a call refused before it
  runs, ``on_tool_raised`` from a tool that turns its own exception into an
  error result);
* ``on_mcp_request`` → :class:`McpObservation`: one MCP request;
* ``on_turn_start`` → :class:`TurnObservation`: one agent turn (its events);
* ``on_approval``, ``on_guardrail``, ``on_compaction``, ``on_fallback``:
  what a turn decided or did along the way, told as it happens;
* ``inject``: the headers of an outgoing HTTP request that no observation
  covers (an MCP POST), for the current trace context.

The base classes here do nothing, and every method returns a shared no-op
object: that is the default, and costs a call per unit of work.
:mod:`agent_smith.tracing` implements the seam with OpenTelemetry spans and
the package installs it on import (:func:`set_observer`), so the layers that
call the seam never import tracing; :mod:`agent_smith.metrics` implements it
with counters and histograms. Several observers are installed at once with
:func:`add_observer` (each is told everything, see :mod:`.observer_fanout`).
A new LLM provider or MCP transport is traced by making the same calls (see
docs/architecture.md).

What an observer is told is declared here as small protocols of facts, so
this module sits in the base layer and needs nothing above it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from types import TracebackType

    from .messages import AssistantMessage, Message, TokenUsage, ToolCall
    from .runtime import Runtime

JsonObject = dict[str, Any]
E = TypeVar("E")
O = TypeVar("O", bound="Observation")  # noqa: E741 - the observation type, as in the docs


# -- the facts an observer is told ------------------------------------------------------


class ChatClientFacts(Protocol):
    """An LLM client (an :class:`~agent_smith.LlmClient`, or another provider's)."""

    @property
    def model(self) -> str:
        """The model asked for ("" when the server picks)."""
        ...

    @property
    def url(self) -> str:
        """Where its requests go."""
        ...

    @property
    def runtime(self) -> Runtime | None:
        """Its runtime (``trace_content``); None for the process default."""
        ...


class ChatRequestFacts(Protocol):
    """An LLM request (an :class:`~agent_smith.LlmRequest`): the messages it sends."""

    @property
    def messages(self) -> Sequence[Message]: ...


class ChatReplyFacts(Protocol):
    """An LLM reply (an :class:`~agent_smith.llm.request.LlmResponse`)."""

    @property
    def message(self) -> AssistantMessage: ...

    @property
    def finish_reason(self) -> str: ...

    @property
    def response_id(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def usage(self) -> TokenUsage | None: ...


class _Described(Protocol):
    @property
    def description(self) -> str: ...


class ToolFacts(Protocol):
    """A tool (a :class:`~agent_smith.Tool`): its schema's description."""

    @property
    def schema(self) -> _Described: ...


class TurnFacts(Protocol):
    """An agent running a turn (an :class:`~agent_smith.Agent`)."""

    @property
    def name(self) -> str: ...

    @property
    def depth(self) -> int:
        """0 for a top-level agent, 1 for its sub-agents, and so on."""
        ...

    @property
    def usage(self) -> TokenUsage:
        """The usage of its last turn, sub-agents' included (read once the turn ended)."""
        ...


class ToolResultFacts(Protocol):
    """A tool's result (a :class:`~agent_smith.ToolResult`)."""

    @property
    def content(self) -> str: ...

    @property
    def is_error(self) -> bool: ...

    @property
    def structured(self) -> Any: ...


class McpServerFacts(Protocol):
    """An MCP server (its :class:`~agent_smith.ServerConfig`)."""

    @property
    def alias(self) -> str: ...

    @property
    def url(self) -> str | None: ...

    @property
    def transport(self) -> str | None:
        """``stdio``, ``http``, ``sse``... as the config settled it."""
        ...


R = TypeVar("R", bound=ChatReplyFacts)
T = TypeVar("T", bound=ToolResultFacts)


# -- observations -------------------------------------------------------------------------


class Observation:
    """One observed unit of work, a context manager around it; this base records nothing."""

    __slots__ = ()

    def __enter__(self: O) -> O:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class ChatObservation(Observation):
    """One LLM call. Not made current: a streamed call is a generator."""

    __slots__ = ()

    def inject(self, headers: dict[str, str]) -> None:
        """Add this call's trace context to the request's HTTP ``headers``."""

    def retry(self, attempt: int, delay: float, failure: BaseException) -> None:
        """``failure`` is retried (retry number ``attempt``) after ``delay`` seconds."""

    def watch(self, events: Iterator[E]) -> Iterator[E]:
        """A streamed call's events, passed through; its reply is the ``Finished`` event's.

        Return ``events`` itself to watch nothing (no cost per event).
        """
        return events

    def finish(self, response: R) -> R:
        """A call that did not stream got its reply; returns it."""
        return response


class ToolObservation(Observation):
    """One tool call; entered on the worker that runs it, it is current there."""

    __slots__ = ()

    def raised(self, error: BaseException) -> None:
        """The tool raised ``error`` (which becomes an error result)."""

    def finish(self, result: T) -> T:
        """The tool returned ``result``; returns it."""
        return result

    def abandon(self, *, timed_out: bool) -> None:
        """The dispatcher stopped waiting (timeout, else cancellation): end it now."""


class McpObservation(Observation):
    """One MCP request; current while it runs, so its HTTP request carries its context."""

    __slots__ = ()

    def propagate(self, params: JsonObject | None) -> JsonObject | None:
        """``params`` to send, with the trace context in ``_meta`` where the observer adds it."""
        return params

    def sent(self, request_id: int, protocol_version: str) -> None:
        """The request went out with JSON-RPC id ``request_id``."""

    def finish(self, result: JsonObject) -> JsonObject:
        """The server answered ``result``; returns it."""
        return result


class TurnObservation(Observation):
    """One agent turn: its events pass through :meth:`watch`, which ends it when they end."""

    __slots__ = ()

    def watch(self, events: Iterator[E]) -> Iterator[E]:
        """The turn's events, passed through; return ``events`` itself to watch nothing."""
        return events


NO_CHAT = ChatObservation()
NO_TOOL = ToolObservation()
NO_MCP = McpObservation()
NO_TURN = TurnObservation()


# -- the observer -------------------------------------------------------------------------


class Observer:
    """What is told of every LLM call, tool call and MCP request; this base does nothing."""

    __slots__ = ()

    def on_chat_start(
        self, client: ChatClientFacts, request: ChatRequestFacts, body: Mapping[str, Any]
    ) -> ChatObservation:
        """``client`` starts an LLM call of ``request``; ``body`` is what goes on the wire."""
        return NO_CHAT

    def on_tool_start(self, call: ToolCall, tool: ToolFacts, runtime: Runtime) -> ToolObservation:
        """``call`` to ``tool`` is about to run (enter the observation on its worker)."""
        return NO_TOOL

    def on_tool_rejected(self, call: ToolCall, problem: str, runtime: Runtime) -> None:
        """``call`` was refused before it ran; ``problem`` is what the model reads."""

    def on_tool_raised(self, error: BaseException) -> None:
        """The tool call running in this context raised ``error``, made its error result."""

    def on_mcp_request(
        self, server: McpServerFacts, method: str, params: JsonObject | None
    ) -> McpObservation:
        """An MCP request ``method`` to ``server`` starts."""
        return NO_MCP

    def on_turn_start(self, agent: TurnFacts) -> TurnObservation:
        """``agent`` starts a turn (``send``, ``stream`` or a resume)."""
        return NO_TURN

    def on_approval(
        self, call: ToolCall, decision: str, *, asked: bool, waited: float = 0.0
    ) -> None:
        """``call`` was ``approved``, ``denied`` or ``deferred`` (nobody answered yet).

        ``asked``: someone was asked (not a policy mode, nor a decision a resume
        brought), and the turn ``waited`` that many seconds for the answers.
        """

    def on_guardrail(self, stage: str, name: str, action: str, call_id: str | None) -> None:
        """Guardrail ``name`` at ``stage`` said ``action`` (``call_id``: a tool call's)."""

    def on_compaction(
        self, replaced: int, kept: int, tokens_before: int, tokens_after: int
    ) -> None:
        """The running turn compacted its history (``replaced`` messages summarised)."""

    def on_fallback(self, model: str, provider: str, error: BaseException) -> None:
        """``model`` of ``provider`` failed with ``error``; the next model is tried."""

    def inject(self, headers: dict[str, str]) -> None:
        """Add the current trace context to an outgoing HTTP request's ``headers``."""


_observer = Observer()
_installed: tuple[Observer, ...] = ()  # what add_observer combined (empty: _observer alone)
_installing = threading.Lock()


def get_observer() -> Observer:
    """The observer every LLM client, dispatcher and MCP client of the process reports to."""
    return _observer


def set_observer(observer: Observer) -> Observer:
    """Make ``observer`` the process's observer; returns the previous one (to restore it)."""
    global _observer, _installed
    previous, _observer, _installed = _observer, observer, ()
    return previous


def add_observer(observer: Observer) -> None:
    """Tell ``observer`` too what the process's observer is told (until :func:`remove_observer`)."""
    global _observer, _installed
    with _installing:
        if not _installed:
            _installed = (_observer,)
        _installed = (*_installed, observer)
        _observer = _combined(_installed)


def remove_observer(observer: Observer) -> None:
    """Stop telling ``observer`` (added by :func:`add_observer`); unknown ones are ignored."""
    global _observer, _installed
    with _installing:
        if observer in _installed:
            _installed = tuple(o for o in _installed if o is not observer)
            _observer = _combined(_installed)


def _combined(observers: tuple[Observer, ...]) -> Observer:
    if not observers:
        return Observer()
    if len(observers) == 1:
        return observers[0]
    from .base.observer_fanout import FanOut

    return FanOut(observers)
