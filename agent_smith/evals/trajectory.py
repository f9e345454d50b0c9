"""ToolCalls: which tools the run called, with which arguments, in which order, how often.

Each expected call names a tool and, optionally, its arguments: with
``arguments="exact"`` the call's arguments must equal them, with
``"subset"`` (the default) they must contain them (extra arguments are
fine). Without ``ordered`` the expected calls may happen in any order
(each matched by a different actual call: a maximum bipartite matching, so
a loose expectation never takes the call a stricter one needs); with it
they must happen in the given order, other calls allowed between them
unless ``only``. ``only``: no call besides the expected ones. ``counts``:
exact numbers of calls per tool name (``{"calculator": 1}``). The score is
the share of expected calls found.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ..errors import ConfigError
from ..messages import ToolCall
from .evaluator import EvalContext, Evaluator
from .verdict import EvalResult


@dataclass(frozen=True)
class ExpectedCall:
    """A call the run should make: the tool's ``name`` and (optionally) ``arguments``."""

    name: str
    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ToolCalls(Evaluator):
    """The run's tool-call trajectory (see the module doc)."""

    kind: ClassVar[str] = "tool_calls"
    calls: tuple[ExpectedCall, ...] = ()
    arguments: Literal["exact", "subset"] = "subset"
    ordered: bool = False
    only: bool = False
    counts: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        calls = []
        for i, call in enumerate(self.calls):
            if isinstance(call, Mapping):
                unknown = set(call) - {"name", "arguments"}
                if unknown or not isinstance(call.get("name"), str):
                    raise ConfigError(
                        f"tool_calls evaluator: calls[{i}] must be {{'name', 'arguments'}}"
                    )
                call = ExpectedCall(call["name"], call.get("arguments"))
            if not isinstance(call, ExpectedCall):
                raise ConfigError(f"tool_calls evaluator: calls[{i}] must be an ExpectedCall")
            calls.append(call)
        object.__setattr__(self, "calls", tuple(calls))
        if self.arguments not in ("exact", "subset"):
            raise ConfigError("tool_calls evaluator: arguments must be 'exact' or 'subset'")
        if not all(isinstance(n, int) and n >= 0 for n in self.counts.values()):
            raise ConfigError("tool_calls evaluator: counts must map tool names to integers >= 0")

    def evaluate(self, ctx: EvalContext) -> EvalResult:
        actual = ctx.run.tool_calls
        problems: list[str] = []
        matched = self._in_order(actual) if self.ordered else self._any_order(actual)
        missing = [c for i, c in enumerate(self.calls) if i not in matched]
        if missing:
            problems.append("missing " + ", ".join(_describe(c) for c in missing))
        if self.only:
            used = set(matched.values())
            extra = [c.name for j, c in enumerate(actual) if j not in used]
            if extra:
                problems.append("unexpected call(s) to " + ", ".join(extra))
        for name, count in self.counts.items():
            made = sum(c.name == name for c in actual)
            if made != count:
                problems.append(f"{name} called {made} time(s), expected {count}")
        score = len(matched) / len(self.calls) if self.calls else float(not problems)
        return EvalResult(self.name, not problems, score, "; ".join(problems))

    def _fits(self, expected: ExpectedCall, call: ToolCall) -> bool:
        if expected.name != call.name:
            return False
        if expected.arguments is None:
            return True
        if self.arguments == "exact":
            return dict(call.arguments) == dict(expected.arguments)
        return all(
            k in call.arguments and call.arguments[k] == v for k, v in expected.arguments.items()
        )

    def _in_order(self, actual: list[ToolCall]) -> dict[int, int]:
        """Expected index -> actual index, matching as a subsequence (earliest first)."""
        matched: dict[int, int] = {}
        j = 0
        for i, expected in enumerate(self.calls):
            while j < len(actual) and not self._fits(expected, actual[j]):
                j += 1
            if j == len(actual):
                break
            matched[i] = j
            j += 1
        return matched

    def _any_order(self, actual: list[ToolCall]) -> dict[int, int]:
        """Expected index -> actual index: a maximum matching (augmenting paths)."""
        owner: dict[int, int] = {}  # actual index -> expected index

        def place(i: int, seen: set[int]) -> bool:
            for j, call in enumerate(actual):
                if j in seen or not self._fits(self.calls[i], call):
                    continue
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
            return False

        for i in range(len(self.calls)):
            place(i, set())
        return {i: j for j, i in owner.items()}


def _describe(call: ExpectedCall) -> str:
    if call.arguments is None:
        return call.name
    args = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
    return f"{call.name}({args})"
