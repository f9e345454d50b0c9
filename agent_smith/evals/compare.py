"""Comparing two reports: what regressed, what improved, by how much, beyond the noise.

Each case's pass rate in the base and the new report, the change, and the
noise band the repeats give (:func:`~.stats.noise_band`): a change larger
than the band is a regression or an improvement, a smaller one is
"within noise". With one repeat a rate is 0 or 1 and has no band, so every
change counts. A case only in one report is "new" or "removed". The same
for the whole pass rate and each evaluator's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .stats import noise_band, rate_error

if TYPE_CHECKING:
    from .report import CaseReport, EvalReport


@dataclass(frozen=True)
class Change:
    """One rate in both reports (``None`` where absent), the change and its noise band."""

    id: str
    base: float | None
    new: float | None
    band: float

    @property
    def change(self) -> float:
        """New minus base (0 when either is absent)."""
        if self.base is None or self.new is None:
            return 0.0
        return self.new - self.base

    @property
    def verdict(self) -> str:
        """``regressed``, ``improved``, ``within noise``, ``same``, ``new`` or ``removed``."""
        if self.base is None:
            return "new"
        if self.new is None:
            return "removed"
        if math.isclose(self.change, 0.0, abs_tol=1e-12):
            return "same"
        if abs(self.change) <= self.band:
            return "within noise"
        return "improved" if self.change > 0 else "regressed"

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this change."""
        return {
            "id": self.id,
            "base": self.base,
            "new": self.new,
            "change": self.change,
            "band": self.band,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class ReportDiff:
    """The changes from a base report to a new one: per case, per evaluator, in total."""

    total: Change
    cases: tuple[Change, ...]
    evaluators: tuple[Change, ...]

    @property
    def regressions(self) -> list[Change]:
        """Cases whose pass rate fell beyond noise."""
        return [c for c in self.cases if c.verdict == "regressed"]

    @property
    def improvements(self) -> list[Change]:
        """Cases whose pass rate rose beyond noise."""
        return [c for c in self.cases if c.verdict == "improved"]

    def table(self) -> str:
        """The terminal view."""
        from .table import diff_table

        return diff_table(self)

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "total": self.total.to_dict(),
            "cases": [c.to_dict() for c in self.cases],
            "evaluators": [c.to_dict() for c in self.evaluators],
        }

    def _repr_html_(self) -> str:
        from .html import diff_fragment

        return diff_fragment(self)


def compare(base: EvalReport, new: EvalReport) -> ReportDiff:
    """The :class:`ReportDiff` from ``base`` to ``new``."""
    total = Change(
        "pass rate",
        base.pass_rate,
        new.pass_rate,
        noise_band(base.standard_error, new.standard_error),
    )
    old_cases = {c.id: c for c in base.cases}
    new_cases = {c.id: c for c in new.cases}
    ids = [*old_cases, *(i for i in new_cases if i not in old_cases)]
    cases = tuple(_case_change(i, old_cases.get(i), new_cases.get(i)) for i in ids)
    old_rates, new_rates = base.evaluator_rates(), new.evaluator_rates()
    names = [*old_rates, *(n for n in new_rates if n not in old_rates)]
    evaluators = tuple(Change(n, old_rates.get(n), new_rates.get(n), total.band) for n in names)
    return ReportDiff(total, cases, evaluators)


def _case_change(ident: str, base: CaseReport | None, new: CaseReport | None) -> Change:
    def error(case: CaseReport | None) -> float:
        if case is None or not case.runs:
            return 0.0
        return rate_error([(case.pass_rate, len(case.runs))])

    return Change(
        ident,
        None if base is None else base.pass_rate,
        None if new is None else new.pass_rate,
        noise_band(error(base), error(new)),
    )
