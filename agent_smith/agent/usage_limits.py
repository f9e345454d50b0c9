"""Usage limits and cost across a run and its whole sub-agent tree.

One :class:`UsageLimits` value holds the caps (LLM requests, tool calls,
input / output / total tokens, cost) and the price table cost is computed
from (:class:`ModelPrice` per model, in currency units per million tokens,
as providers quote them). A root agent's turn makes one :class:`UsageMeter`
from its ``AgentConfig.usage_limits``; its sub-agents share it through the
turn's :class:`~agent_smith.agent.tree.AgentTree`, the way they share the
iteration budget, so the caps hold for the tree as a whole.

The meter is the one place the caps are checked: before each LLM request
(:meth:`UsageMeter.before_request`) and before each round of tool calls
(:meth:`UsageMeter.before_tool_calls`). Counts are claimed there (a request
or call that may not happen raises instead); tokens and cost are added as
each reply arrives (:meth:`UsageMeter.spend`), so a token or cost cap stops
the run at the first request or tool call after it was passed. A run over a
cap raises :class:`~agent_smith.errors.UsageLimitExceeded` naming the cap,
the allowed amount and what was spent. Agents without limits make no meter:
nothing is counted twice and the turn's hot path is unchanged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..errors import ConfigError, UsageLimitExceeded
from ..messages import TokenUsage

log = logging.getLogger(__name__)

_MILLION = 1_000_000


@dataclass(frozen=True)
class ModelPrice:
    """What one model costs per million tokens: ``input``, ``output``, ``cached_input``.

    ``cached_input`` prices input tokens read from the provider's prompt
    cache (``None``: the ``input`` price).
    """

    input: float
    output: float
    cached_input: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not value >= 0):
                raise ConfigError(f"ModelPrice.{name} must not be negative, got {value!r}")

    def cost(self, usage: TokenUsage) -> float:
        """What ``usage`` costs at these prices (its ``cache_read`` tokens at ``cached_input``)."""
        cached = self.input if self.cached_input is None else self.cached_input
        fresh = max(usage.prompt - usage.cache_read, 0)
        spent = fresh * self.input + usage.cache_read * cached + usage.completion * self.output
        return spent / _MILLION


@dataclass(frozen=True)
class UsageLimits:
    """Caps on one run of an agent and its sub-agents, and the prices cost is computed from.

    Each cap is ``None`` (no cap) or positive: ``max_requests`` LLM requests,
    ``max_tool_calls`` tool calls, ``max_input_tokens`` / ``max_output_tokens``
    / ``max_total_tokens`` tokens as the server reports them, ``max_cost``
    in the currency of ``prices``. ``prices`` maps a model name (as the
    client asks for it, or as the server names it in its reply) to its
    :class:`ModelPrice`; a ``max_cost`` needs a price for every model the run
    uses (:class:`~agent_smith.errors.ConfigError` at the first reply
    without one).
    """

    max_requests: int | None = None
    max_tool_calls: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    max_cost: float | None = None
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in _CAPS:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not value > 0):
                raise ConfigError(f"UsageLimits.{name} must be positive, got {value!r}")
        for model, price in self.prices.items():
            if not isinstance(price, ModelPrice):
                raise ConfigError(f"UsageLimits.prices[{model!r}] must be a ModelPrice")

    def price_of(self, *models: str) -> ModelPrice | None:
        """The price of the first of ``models`` the table names, else None."""
        for model in models:
            price = self.prices.get(model)
            if price is not None:
                return price
        return None


_SPENDING = ("max_input_tokens", "max_output_tokens", "max_total_tokens", "max_cost")
_CAPS = ("max_requests", "max_tool_calls", *_SPENDING)


@dataclass(frozen=True)
class UsageSpent:
    """What a run has spent so far: requests, tool calls and token usage (with cost)."""

    requests: int = 0
    tool_calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)

    def amount(self, cap: str) -> float:
        """What was spent of the quantity ``cap`` (a :class:`UsageLimits` field) limits."""
        if cap == "max_requests":
            return self.requests
        if cap == "max_tool_calls":
            return self.tool_calls
        if cap == "max_input_tokens":
            return self.usage.prompt
        if cap == "max_output_tokens":
            return self.usage.completion
        if cap == "max_total_tokens":
            return self.usage.total
        return self.usage.cost or 0.0


class UsageMeter:
    """A run's spending against its :class:`UsageLimits`, shared by the agent tree (thread-safe)."""

    __slots__ = ("_caps", "_lock", "_requests", "_tool_calls", "_unpriced", "_usage", "limits")

    def __init__(self, limits: UsageLimits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._requests = 0
        self._tool_calls = 0
        self._usage = TokenUsage()
        self._unpriced: set[str] = set()
        # The token and cost caps in force, checked before each step.
        self._caps = [(cap, getattr(limits, cap)) for cap in _SPENDING if getattr(limits, cap)]

    @property
    def spent(self) -> UsageSpent:
        """What the tree has spent so far."""
        with self._lock:
            return UsageSpent(self._requests, self._tool_calls, self._usage)

    def before_request(self) -> None:
        """Claim one LLM request; raise UsageLimitExceeded if a cap is reached or passed."""
        with self._lock:
            self._check_spending()
            allowed = self.limits.max_requests
            if allowed is not None and self._requests + 1 > allowed:
                raise self._exceeded("max_requests", allowed)
            self._requests += 1

    def before_tool_calls(self, count: int) -> None:
        """Claim a round of ``count`` tool calls; raise UsageLimitExceeded if over a cap."""
        with self._lock:
            self._check_spending()
            allowed = self.limits.max_tool_calls
            if allowed is not None and self._tool_calls + count > allowed:
                raise self._exceeded("max_tool_calls", allowed)
            self._tool_calls += count

    def spend(self, usage: TokenUsage | None, *models: str) -> TokenUsage | None:
        """Add one reply's ``usage``; return it priced (``cost`` set) if ``models`` has a price.

        ``models`` are the names the reply goes by (asked for, then reported),
        looked up in that order.
        """
        if usage is None:
            return None
        price = self.limits.price_of(*models)
        if price is not None:
            usage = replace(usage, cost=price.cost(usage))
        elif self.limits.max_cost is not None:
            raise ConfigError(
                f"UsageLimits.max_cost needs a price for model {models[0] if models else ''!r}"
                " in UsageLimits.prices"
            )
        else:
            self._warn_unpriced(models)
        with self._lock:
            self._usage = self._usage + usage
        return usage

    def _check_spending(self) -> None:
        if self._caps:
            spent = UsageSpent(self._requests, self._tool_calls, self._usage)
            for cap, allowed in self._caps:
                if spent.amount(cap) > allowed:
                    raise _exceeded(cap, allowed, spent.amount(cap), spent)

    def _exceeded(self, cap: str, allowed: float) -> UsageLimitExceeded:
        spent = UsageSpent(self._requests, self._tool_calls, self._usage)
        return _exceeded(cap, allowed, spent.amount(cap), spent)

    def _warn_unpriced(self, models: tuple[str, ...]) -> None:
        if not self.limits.prices:
            return
        name = models[0] if models else ""
        with self._lock:
            if name in self._unpriced:
                return
            self._unpriced.add(name)
        log.warning("no price for model %r in UsageLimits.prices: its cost is not counted", name)


def _exceeded(cap: str, allowed: float, amount: float, spent: UsageSpent) -> UsageLimitExceeded:
    what = cap.removeprefix("max_").replace("_", " ")
    cost = "" if spent.usage.cost is None else f", cost {spent.usage.cost:g}"
    return UsageLimitExceeded(
        f"usage limit {cap}={allowed:g} reached: {amount:g} {what} spent "
        f"({spent.requests} requests, {spent.tool_calls} tool calls, "
        f"{spent.usage.total} tokens{cost})",
        limit=cap,
        allowed=allowed,
        spent=amount,
    )
