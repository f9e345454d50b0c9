"""Where an agent sits in a sub-agent tree: its tree, depth, cancel parents and parent's turn.

A root agent has no lineage: each of its turns starts a fresh
:class:`~agent_smith.agent.tree.AgentTree` (iteration budget and
cancellation). A sub-agent made by :meth:`Agent.spawn_child` gets a
:class:`Lineage` below its parent's running turn: it shares that turn's tree,
is cancelled with it (and with the tool call's own token), runs one depth
deeper, reports its events to the parent's ``on_subagent_event`` under an
invocation id of its own, and adds each turn's usage to the parent's turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base.cancellation import CancellationSource, CancellationToken
from ..messages import TokenUsage
from .events import AgentHooks, forwarding_hooks, new_invocation_id
from .tree import AgentTree
from .usage_limits import UsageMeter

if TYPE_CHECKING:
    from .agent import Agent
    from .config import AgentConfig
    from .turn import Turn


@dataclass(frozen=True)
class Lineage:
    """A sub-agent's place: tree, depth, cancel parents, invocation id and parent's turn."""

    tree: AgentTree
    depth: int
    cancel: tuple[CancellationToken, ...]
    invocation: str
    parent_turn: Turn | None

    @classmethod
    def below(cls, parent: Agent, name: str, cancel: CancellationToken | None) -> Lineage:
        """The lineage of a child called ``name`` that ``parent``'s current turn starts."""
        turn = parent._turn
        tree = turn.tree if turn is not None else AgentTree(parent.config.tree_max_iterations)
        parents = [t for t in (turn.source.token if turn else None, cancel) if t is not None]
        return cls(tree, parent.depth + 1, tuple(parents), new_invocation_id(name), turn)

    def hooks(self, parent: Agent, name: str) -> AgentHooks:
        """Hooks that report the child's events to ``parent``'s ``on_subagent_event``."""
        return forwarding_hooks(
            parent.hooks,
            name=name,
            depth=self.depth,
            invocation=self.invocation,
            parent_invocation=parent._identity.invocation,
        )

    def report_usage(self, usage: TokenUsage) -> None:
        """Add a finished turn's usage to the parent's: it was spent on the parent's behalf."""
        if self.parent_turn is not None:
            self.parent_turn.add_usage(usage)


def turn_tree(config: AgentConfig, lineage: Lineage | None) -> tuple[AgentTree, CancellationSource]:
    """The tree a new turn runs in, and its cancellation: a fresh tree for a root agent."""
    if lineage is None:
        limits = config.usage_limits
        meter = UsageMeter(limits) if limits is not None else None
        tree = AgentTree(config.tree_max_iterations, meter=meter)
        return tree, tree.cancel
    return lineage.tree, CancellationSource(lineage.tree.cancel.token, *lineage.cancel)
