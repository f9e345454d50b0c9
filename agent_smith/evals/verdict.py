"""EvalResult: what one evaluator says about one run of a case.

Every evaluator returns one: passed or not, a score between 0 and 1 and a
reason a person can read. An evaluator that raised gives one too, failed,
with ``error`` saying what went wrong, so a broken evaluator shows in the
report instead of stopping the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ParseError


@dataclass(frozen=True)
class EvalResult:
    """One evaluator's verdict on one run: ``passed``, ``score`` (0..1), ``reason``.

    ``error`` is set (and ``passed`` False) when the evaluator could not
    judge: it raised, or the judge answered something that is no verdict.
    """

    name: str
    passed: bool
    score: float
    reason: str = ""
    error: str | None = None

    @classmethod
    def of(cls, name: str, passed: bool, reason: str = "") -> EvalResult:
        """A pass/fail verdict (score 1 or 0)."""
        return cls(name, passed, 1.0 if passed else 0.0, reason)

    @classmethod
    def failed(cls, name: str, error: str) -> EvalResult:
        """The verdict of an evaluator that could not judge (``error`` says why)."""
        return cls(name, False, 0.0, error, error=error)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this verdict."""
        data: dict[str, Any] = {
            "name": self.name,
            "passed": self.passed,
            "score": self.score,
            "reason": self.reason,
        }
        if self.error is not None:
            data["error"] = self.error
        return data

    @classmethod
    def from_dict(cls, data: object) -> EvalResult:
        """Read a verdict back; ParseError if it has the wrong shape."""
        if not isinstance(data, Mapping):
            raise ParseError("an evaluation must be a JSON object")
        try:
            error = data.get("error")
            return cls(
                str(data["name"]),
                bool(data["passed"]),
                float(data["score"]),
                str(data.get("reason", "")),
                None if error is None else str(error),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise ParseError(f"an evaluation has a missing or wrong field ({err})") from err
