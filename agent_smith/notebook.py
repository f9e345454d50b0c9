"""A turn shown live in a Jupyter notebook: one output that updates in place, ending as its card.

``show(agent.stream(question))`` puts one output in the cell and updates it
as the turn runs: the reply's words as they arrive, each tool call and its
result as an activity line, then the turn's
:class:`~agent_smith.TurnCard`. IPython is imported only here, when
:func:`show` runs, so ``import agent_smith`` never needs it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .agent.turn_card import CardBuilder, TurnCard
from .errors import ConfigError

_NEEDS_IPYTHON = (
    "agent_smith.notebook.show() renders into a Jupyter notebook and needs IPython "
    "(pip install ipykernel); outside one, TurnCard.from_events(agent.stream(...)) "
    "gives the same card"
)


def show(events: Iterable[object]) -> TurnCard:
    """Show a turn's ``events`` (``agent.stream(...)``) live in one output; return its card.

    Runs the turn to its end. A typed stop (:class:`~agent_smith.AgentStopped`)
    ends the card with its reason instead of raising; any other error is
    raised, the output keeping the card of what the turn did so far. Assign the
    result (``card = show(...)``): as a cell's last value the card would
    show a second time. Raises ConfigError, before the turn starts, outside
    an IPython kernel.
    """
    handle = _display_handle()
    builder = CardBuilder()
    try:
        for card in builder.follow(events):
            handle.update(card)
    finally:  # whatever ended the turn, the output stops saying "working"
        final = builder.card()
        handle.update(final)
    return final


def _display_handle() -> Any:
    """A new output of the running notebook cell (IPython's ``DisplayHandle``)."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError as err:
        raise ConfigError(_NEEDS_IPYTHON) from err
    if get_ipython() is None:  # plain Python: display() would print instead
        raise ConfigError(_NEEDS_IPYTHON)
    return display(TurnCard(working=True), display_id=True)  # type: ignore[no-untyped-call]
