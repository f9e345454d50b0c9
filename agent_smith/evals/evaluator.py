"""The evaluator contract: what an evaluator is given, what it returns, how it is named.

An :class:`Evaluator` looks at one run of one case (:class:`EvalContext`)
and returns an :class:`~.verdict.EvalResult`. Evaluators are plain frozen
dataclasses of settings, so a dataset file can name them
(``{"type": "contains", "value": "42"}``, see :mod:`.registry`) and
:meth:`Evaluator.to_dict` writes them back. :func:`judge_run` applies a list
of them to a run, turning an evaluator that raises into a failed verdict
with its error, so one broken evaluator never stops a run.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .._internal.text import one_line
from ..batch.names import check_name, resolve_name
from ..errors import ConfigError, EvalError
from .verdict import EvalResult

if TYPE_CHECKING:
    from ..llm.model import ChatModel
    from .case import Case
    from .case_run import CaseRun

#: Longest error text kept in a verdict.
_ERROR_CHARS = 300


@dataclass(frozen=True)
class EvalContext:
    """One run of one case, as evaluators see it; ``judge`` is the run's default judge model."""

    case: Case
    run: CaseRun
    judge: ChatModel | None = None

    @property
    def expected(self) -> Any:
        """The case's expected output (``None`` when it has none)."""
        return self.case.expected


class Evaluator(ABC):
    """Judges one run of a case; subclasses are frozen dataclasses of their settings.

    ``kind`` is the ``"type"`` that names the evaluator in a dataset file;
    ``name`` is how the report names it (the kind, unless the evaluator says
    more).
    """

    kind: ClassVar[str]

    @property
    def name(self) -> str:
        """The evaluator's name in the report."""
        return self.kind

    @abstractmethod
    def evaluate(self, ctx: EvalContext) -> EvalResult:
        """Judge ``ctx.run`` of ``ctx.case``."""

    def to_dict(self) -> dict[str, Any]:
        """The dataset-file form: ``{"type": kind, setting: value, ...}`` (defaults left out)."""
        data: dict[str, Any] = {"type": self.kind}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]  # subclasses are dataclasses
            value = getattr(self, f.name)
            if f.default is not dataclasses.MISSING and value == f.default:
                continue
            if f.default_factory is not dataclasses.MISSING and value == f.default_factory():
                continue
            data[f.name] = _plain(value)
        return data

    def verdict(self, passed: bool, reason: str = "") -> EvalResult:
        """A pass/fail result under this evaluator's name."""
        return EvalResult.of(self.name, passed, reason)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items() if v is not None}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Check(Evaluator):
    """A plain Python function as an evaluator: ``Check(fn)`` or ``{"type": "python", ...}``.

    ``function`` takes the :class:`EvalContext` and returns a bool, a score
    (passed when at least 0.5), an :class:`EvalResult`, or a ``(passed,
    reason)`` pair. In a dataset file it is an importable name
    (``"my_evals:answer_is_polite"``).
    """

    kind: ClassVar[str] = "python"
    function: Callable[[EvalContext], Any] | str
    label: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.function, str):
            check_name(self.function, what="a python evaluator's function")
        elif not callable(self.function):
            raise ConfigError("Check(function): the function must be callable or a 'module:name'")

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        fn = self.function
        return fn if isinstance(fn, str) else getattr(fn, "__name__", self.kind)

    def to_dict(self) -> dict[str, Any]:
        if not isinstance(self.function, str):
            raise EvalError(
                f"the python evaluator {self.name!r} is a function object; a dataset file "
                "names it as 'module:function'"
            )
        return super().to_dict()

    def evaluate(self, ctx: EvalContext) -> EvalResult:
        fn = self.function
        if isinstance(fn, str):
            found = resolve_name(fn, what="a python evaluator")
            if not callable(found):
                raise EvalError(f"the python evaluator {fn!r} is not a function")
            fn = found
        answer = fn(ctx)
        if isinstance(answer, EvalResult):
            return answer
        if isinstance(answer, tuple) and len(answer) == 2:
            return self.verdict(bool(answer[0]), str(answer[1]))
        if isinstance(answer, bool):
            return self.verdict(answer)
        if isinstance(answer, (int, float)):
            score = float(answer)
            return EvalResult(self.name, score >= 0.5, score, f"score {score:g}")
        raise EvalError(
            f"the python evaluator {self.name!r} returned {type(answer).__name__}; it must "
            "return a bool, a score, an EvalResult or a (passed, reason) pair"
        )


def judge_run(evaluators: Sequence[Evaluator], ctx: EvalContext) -> list[EvalResult]:
    """Apply every evaluator to the run; one that raises gives a failed verdict with its error."""
    results: list[EvalResult] = []
    for evaluator in evaluators:
        try:
            result = evaluator.evaluate(ctx)
        except Exception as err:  # user code: its failure is a verdict, not the run's end
            detail = one_line(str(err), _ERROR_CHARS) or type(err).__name__
            result = EvalResult.failed(evaluator.name, f"{type(err).__name__}: {detail}")
        results.append(result)
    return results
