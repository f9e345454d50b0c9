"""Evaluators of the answer itself: equals, contains, regex, and a typed output that validates.

Each compares against its own ``value`` or, without one, the case's
``expected``. A run that failed (no answer) fails every one of them, with
the run's error as the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..agent.output_type import output_schema
from ..batch.names import check_name, resolve_name
from ..errors import ConfigError, EvalError, OutputValidationError
from .evaluator import EvalContext, Evaluator
from .verdict import EvalResult

#: How much of an answer a reason quotes.
_QUOTE = 120


def _quote(text: str) -> str:
    return repr(text if len(text) <= _QUOTE else text[: _QUOTE - 1] + "…")


def _answer(evaluator: Evaluator, ctx: EvalContext) -> str | EvalResult:
    """The run's answer text, or the failed verdict of a run without one."""
    run = ctx.run
    if run.error is not None:
        return evaluator.verdict(False, f"the run failed: {run.error}")
    return run.content or ""


def _target(value: Any, ctx: EvalContext, what: str) -> Any:
    if value is not None:
        return value
    if ctx.expected is None:
        raise EvalError(
            f"case {ctx.case.id}: {what} has no value and the case expects nothing",
            case=ctx.case.id,
        )
    return ctx.expected


@dataclass(frozen=True)
class Equals(Evaluator):
    """The answer equals ``value`` (else the case's ``expected``).

    ``field``: ``"content"`` compares the answer's text (whitespace at the
    ends ignored, and case with ``ignore_case``), ``"output"`` the typed
    output's JSON form; ``None`` picks ``"output"`` when the run has a typed
    output.
    """

    kind: ClassVar[str] = "equals"
    value: Any = None
    field: Literal["content", "output"] | None = None
    ignore_case: bool = False

    def evaluate(self, ctx: EvalContext) -> EvalResult:
        answer = _answer(self, ctx)
        if isinstance(answer, EvalResult):
            return answer
        target = _target(self.value, ctx, "equals")
        by_output = self.field == "output" or (self.field is None and ctx.run.output is not None)
        if by_output:
            got = ctx.run.output
            same = _canonical(got) == _canonical(target)
            return self.verdict(same, "" if same else f"output {_canonical(got)} != {target!r}")
        text, want = answer.strip(), str(target).strip()
        if self.ignore_case:
            text, want = text.casefold(), want.casefold()
        same = text == want
        return self.verdict(same, "" if same else f"{_quote(answer)} != {_quote(str(target))}")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Contains(Evaluator):
    """The answer's text contains ``value`` (else the case's ``expected``)."""

    kind: ClassVar[str] = "contains"
    value: str | None = None
    ignore_case: bool = False

    def evaluate(self, ctx: EvalContext) -> EvalResult:
        answer = _answer(self, ctx)
        if isinstance(answer, EvalResult):
            return answer
        want = str(_target(self.value, ctx, "contains"))
        text = answer
        if self.ignore_case:
            text, want = text.casefold(), want.casefold()
        found = want in text
        return self.verdict(found, "" if found else f"{_quote(want)} not in {_quote(answer)}")


@dataclass(frozen=True)
class Regex(Evaluator):
    """The answer's text matches ``pattern`` somewhere (``re.search``); ``full``: all of it."""

    kind: ClassVar[str] = "regex"
    pattern: str
    full: bool = False

    def __post_init__(self) -> None:
        try:
            re.compile(self.pattern)
        except (re.error, TypeError) as err:
            raise ConfigError(
                f"regex evaluator: {self.pattern!r} is not a pattern ({err})"
            ) from err

    def evaluate(self, ctx: EvalContext) -> EvalResult:
        answer = _answer(self, ctx)
        if isinstance(answer, EvalResult):
            return answer
        compiled = re.compile(self.pattern)
        found = (compiled.fullmatch if self.full else compiled.search)(answer.strip()) is not None
        reason = "" if found else f"{_quote(answer)} does not match /{self.pattern}/"
        return self.verdict(found, reason)


@dataclass(frozen=True)
class OutputValid(Evaluator):
    """The run produced a typed output, and it validates against ``type_name`` when given.

    ``type_name`` is an importable name (``"my_app.models:Invoice"``); without it
    the agent's own output type already validated the output, so the check
    is that there is one (a run that failed validation has none).
    """

    kind: ClassVar[str] = "output_valid"
    type_name: str | None = None

    def __post_init__(self) -> None:
        if self.type_name is not None:
            check_name(self.type_name, what="output_valid's type_name")

    def evaluate(self, ctx: EvalContext) -> EvalResult:
        run = ctx.run
        if run.error is not None:
            return self.verdict(False, f"no typed output: {run.error}")
        if run.output is None:
            return self.verdict(False, "the run has no typed output")
        if self.type_name is None:
            return self.verdict(True)
        schema = output_schema(resolve_name(self.type_name, what="output_valid's type_name"))
        try:
            schema.convert(run.output, raw=_canonical(run.output))
        except OutputValidationError as err:
            return self.verdict(False, str(err))
        return self.verdict(True)
