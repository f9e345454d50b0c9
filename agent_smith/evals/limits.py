"""Limits: a run passes when it stayed within turns, tokens, cost and wall time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..errors import ConfigError
from .evaluator import EvalContext, Evaluator
from .verdict import EvalResult


@dataclass(frozen=True)
class Limits(Evaluator):
    """At most ``max_turns`` model replies, ``max_tokens`` tokens, ``max_cost``, ``max_seconds``.

    Cost is the run's usage cost (set when the agent's ``UsageLimits`` has
    prices); a ``max_cost`` on a run without a cost fails, saying so. A
    failed run is judged on what it spent too.
    """

    kind: ClassVar[str] = "limits"
    max_turns: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    max_seconds: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_tokens", "max_cost", "max_seconds"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not value >= 0):
                raise ConfigError(f"limits evaluator: {name} must be a number >= 0, got {value!r}")

    def evaluate(self, ctx: EvalContext) -> EvalResult:
        run = ctx.run
        over: list[str] = []
        if self.max_turns is not None and run.turns > self.max_turns:
            over.append(f"{run.turns} turns > {self.max_turns}")
        if self.max_tokens is not None and run.usage.total > self.max_tokens:
            over.append(f"{run.usage.total} tokens > {self.max_tokens}")
        if self.max_cost is not None:
            cost = run.usage.cost
            if cost is None:
                over.append("no cost known (the agent's UsageLimits has no prices)")
            elif cost > self.max_cost:
                over.append(f"cost {cost:g} > {self.max_cost:g}")
        if self.max_seconds is not None and run.seconds > self.max_seconds:
            over.append(f"{run.seconds:.3f} s > {self.max_seconds:g} s")
        return self.verdict(not over, "; ".join(over))
