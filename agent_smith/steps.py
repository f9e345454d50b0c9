"""The seam where a turn's steps run, or replay what a durable record says they did.

A turn has two kinds of steps whose results change the world or cost money:
model requests and tool calls (a sub-agent is a tool call whose own turn has
steps of its own). Outside a durable turn they simply run: :data:`DIRECT`,
the steps of every turn by default, hands the model back unchanged and calls
each tool. A durable runner (:mod:`agent_smith.durable`) puts its own
:class:`TurnSteps` in place with :func:`use_steps` for the length of a turn;
its model records each reply (or replays the recorded one) and its tool steps
record each result (or replay it), so a turn recovered after a crash sends
nothing twice.

The loop asks for the model once per turn (:meth:`TurnSteps.model`); the
dispatcher reserves one step per tool call in the order of the calls, in its
own thread, before any of them starts (:meth:`TurnSteps.tool`), so a step's
place in the record comes from the call's position, never from which thread
ran first. The steps in force are a context variable of the thread running
the turn; a tool step puts the steps of its call in place in its worker for
the length of the call, and a sub-agent runs its turn through them
(:meth:`TurnSteps.subturn`), which a durable runner makes a child workflow
with steps of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .llm.model import ChatModel
    from .messages import ToolCall
    from .tools.base import ToolResult

#: Runs one tool call: given the call's invocation (a tool that raised gives its error result),
#: the result it gives (run or replayed).
ToolStep = Callable[[Callable[[], "ToolResult"]], "ToolResult"]


class TurnSteps:
    """How a turn's steps run: here directly; a durable runner records and replays them."""

    __slots__ = ()

    def model(self, llm: ChatModel) -> ChatModel:
        """The model the turn's requests go to (here ``llm`` itself)."""
        return llm

    def tool(self, call: ToolCall, *, idempotent: bool) -> ToolStep:
        """The step that will run ``call`` (reserved now, in call order; here a plain call).

        ``idempotent`` says the tool may run again when a crash left it
        unrecorded (:attr:`~agent_smith.tools.base.ToolOptions.idempotent`).
        """
        return _run

    def subturn(self, run: Callable[[], ToolResult]) -> ToolResult:
        """Run a nested turn — a sub-agent's, inside its tool call — and give the call's
        result (here ``run()``; a durable runner runs it as a child workflow)."""
        return run()


def _run(invoke: Callable[[], ToolResult]) -> ToolResult:
    return invoke()


#: The steps of a turn that is not durable: every step simply runs.
DIRECT = TurnSteps()

_current: ContextVar[TurnSteps] = ContextVar("agent_smith_turn_steps", default=DIRECT)


def current_steps() -> TurnSteps:
    """The steps in force in this thread (:data:`DIRECT` unless a durable turn runs here)."""
    return _current.get()


@contextmanager
def use_steps(steps: TurnSteps) -> Iterator[None]:
    """Put ``steps`` in force in this thread for the ``with`` block."""
    token = _current.set(steps)
    try:
        yield
    finally:
        _current.reset(token)
