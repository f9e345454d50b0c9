"""EvalReport: every run of every case, judged, with the numbers people look at.

A report holds, per case, each run (:class:`RunReport`: the
:class:`~.case_run.CaseRun` and its evaluators' verdicts) and computes the
rest: pass rate (the mean over cases of each case's share of passing runs),
pass@k and pass^k for ``k`` = the repeats (:mod:`.stats`), the spread of
the pass rate from one repeat to the next, the pass rate per evaluator, and
latency, token and cost figures. A run passes when it ended with an answer
and every evaluator passed it. A case the dataset could not read is in the
report with its error and counts as failed.

It is plain data: :meth:`EvalReport.save` writes JSON (``.json``) or the
self-contained HTML page (``.html``), :meth:`EvalReport.load` reads the
JSON back (to :meth:`compare` with a later run), :meth:`table` is the
terminal view and ``_repr_html_`` the Jupyter one.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._internal import json_input
from ..base.history_json import message_to_dict
from ..base.named_file import read_named_file
from ..batch.result import BatchResult, ItemError
from ..errors import ConfigError, ParseError
from ..messages import TokenUsage
from .case_run import CaseRun, run_id
from .stats import pass_at_k, pass_hat_k, rate_error, spread
from .verdict import EvalResult

if TYPE_CHECKING:
    from .compare import ReportDiff

#: The metrics a threshold can name.
METRICS = ("pass_rate", "pass@k", "pass^k")


@dataclass(frozen=True)
class RunReport:
    """One run of a case and its verdicts."""

    run: CaseRun
    evaluations: tuple[EvalResult, ...] = ()

    @property
    def passed(self) -> bool:
        """Ended with an answer, and every evaluator passed it."""
        return self.run.ok and all(e.passed for e in self.evaluations)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this run (the batch result's form, plus the verdicts)."""
        run = self.run
        result = BatchResult(
            id=run_id(run.case, run.repeat),
            input="",
            content=run.content,
            output=run.output,
            usage=run.usage,
            error=run.error,
            seconds=run.seconds,
            details={
                "case": run.case,
                "repeat": run.repeat,
                "turns": run.turns,
                "messages": [message_to_dict(m) for m in run.messages],
            },
        ).to_dict()
        result["evaluations"] = [e.to_dict() for e in self.evaluations]
        result["passed"] = self.passed
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunReport:
        """Read a run back from :meth:`to_dict`'s form."""
        verdicts = tuple(EvalResult.from_dict(e) for e in data.get("evaluations", ()))
        plain = {k: v for k, v in data.items() if k not in ("evaluations", "passed")}
        return cls(CaseRun.from_result(BatchResult.from_dict(plain)), verdicts)


@dataclass(frozen=True)
class CaseReport:
    """A case's runs (``error``: why the case could not even be read or run)."""

    id: str
    input: str = ""
    runs: tuple[RunReport, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def passes(self) -> int:
        """How many runs passed."""
        return sum(r.passed for r in self.runs)

    @property
    def pass_rate(self) -> float:
        """The share of runs that passed (0 for a case without runs)."""
        return self.passes / len(self.runs) if self.runs else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this case's report."""
        data: dict[str, Any] = {
            "id": self.id,
            "input": self.input,
            "pass_rate": self.pass_rate,
            "runs": [r.to_dict() for r in self.runs],
        }
        if self.metadata:
            data["metadata"] = dict(self.metadata)
        if self.error is not None:
            data["error"] = self.error
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseReport:
        """Read a case report back."""
        runs = tuple(RunReport.from_dict(r) for r in data.get("runs", ()))
        error = data.get("error")
        metadata = data.get("metadata", {})
        return cls(str(data["id"]), str(data.get("input", "")), runs, metadata, error)


@dataclass(frozen=True)
class EvalReport:
    """The judged runs of an eval (see the module doc); ``repeat`` is the k of pass@k."""

    name: str
    cases: tuple[CaseReport, ...]
    repeat: int = 1

    # -- the numbers ---------------------------------------------------------

    @property
    def runs(self) -> list[RunReport]:
        """Every run of every case."""
        return [r for c in self.cases for r in c.runs]

    @property
    def pass_rate(self) -> float:
        """The mean over cases of each case's pass rate."""
        return _mean([c.pass_rate for c in self.cases])

    @property
    def pass_at_k(self) -> float:
        """The mean over cases of pass@k, k = :attr:`repeat`."""
        return _mean([pass_at_k(len(c.runs), c.passes, self.repeat) for c in self.cases])

    @property
    def pass_hat_k(self) -> float:
        """The mean over cases of pass^k, k = :attr:`repeat`."""
        return _mean([pass_hat_k(len(c.runs), c.passes, self.repeat) for c in self.cases])

    @property
    def repeat_rates(self) -> list[float]:
        """The pass rate of each repeat on its own (repeat 1, 2, ...)."""
        rates = []
        for r in range(1, self.repeat + 1):
            passed = [any(x.run.repeat == r and x.passed for x in c.runs) for c in self.cases]
            rates.append(_mean([float(p) for p in passed]))
        return rates

    @property
    def spread(self) -> float:
        """The standard deviation of the pass rate from repeat to repeat."""
        return spread(self.repeat_rates)

    @property
    def standard_error(self) -> float:
        """The pass rate's standard error from the variation the repeats show."""
        return rate_error([(c.pass_rate, len(c.runs)) for c in self.cases])

    def metric(self, name: str) -> float:
        """``"pass_rate"``, ``"pass@k"`` or ``"pass^k"``."""
        if name == "pass_rate":
            return self.pass_rate
        if name == "pass@k":
            return self.pass_at_k
        if name == "pass^k":
            return self.pass_hat_k
        raise ConfigError(f"unknown metric {name!r} (known: {', '.join(METRICS)})")

    def evaluator_rates(self) -> dict[str, float]:
        """Each evaluator's pass rate over the runs it judged, by name."""
        verdicts: dict[str, list[bool]] = {}
        for run in self.runs:
            for e in run.evaluations:
                verdicts.setdefault(e.name, []).append(e.passed)
        return {name: _mean([float(v) for v in got]) for name, got in verdicts.items()}

    def evaluator_errors(self) -> dict[str, int]:
        """How many times each evaluator could not judge (it raised, or no verdict)."""
        errors: dict[str, int] = {}
        for run in self.runs:
            for e in run.evaluations:
                if e.error is not None:
                    errors[e.name] = errors.get(e.name, 0) + 1
        return errors

    def figures(self) -> dict[str, list[float]]:
        """Per run: ``seconds``, ``tokens``, ``cost`` (runs with a cost) and ``turns``."""
        runs = [r.run for r in self.runs]
        return {
            "seconds": [r.seconds for r in runs],
            "tokens": [float(r.usage.total) for r in runs],
            "cost": [r.usage.cost for r in runs if r.usage.cost is not None],
            "turns": [float(r.turns) for r in runs],
        }

    def failures(self) -> list[tuple[CaseReport, RunReport | None]]:
        """Each failing run with its case, and each case that could not run (run None)."""
        failing: list[tuple[CaseReport, RunReport | None]] = []
        for case in self.cases:
            if case.error is not None and not case.runs:
                failing.append((case, None))
            failing.extend((case, run) for run in case.runs if not run.passed)
        return failing

    def passes(self, threshold: float, *, metric: str = "pass_rate") -> bool:
        """Whether ``metric`` is at least ``threshold`` (a share, 0..1)."""
        return self.metric(metric) >= threshold

    # -- views ---------------------------------------------------------------

    def table(self) -> str:
        """The terminal view: a row per case, then the totals."""
        from .table import report_table

        return report_table(self)

    def __str__(self) -> str:
        return self.table()

    def to_html(self) -> str:
        """The self-contained HTML page (no script, no network: inline SVG and CSS)."""
        from .html import report_html

        return report_html(self)

    def _repr_html_(self) -> str:
        from .html import report_fragment

        return report_fragment(self)

    def compare(self, new: EvalReport) -> ReportDiff:
        """What changed from this report (the base) to ``new``, against the noise band."""
        from .compare import compare

        return compare(self, new)

    # -- files ---------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the numbers (for a reader) and every run (for :meth:`from_dict`)."""
        return {
            "name": self.name,
            "repeat": self.repeat,
            "summary": {
                "cases": len(self.cases),
                "runs": len(self.runs),
                "pass_rate": self.pass_rate,
                "pass_at_k": self.pass_at_k,
                "pass_hat_k": self.pass_hat_k,
                "spread": self.spread,
                "standard_error": self.standard_error,
                "evaluators": self.evaluator_rates(),
            },
            "cases": [c.to_dict() for c in self.cases],
        }

    @classmethod
    def from_dict(cls, data: object) -> EvalReport:
        """Read a report's JSON form; ParseError if it is not one."""
        if not isinstance(data, Mapping) or not isinstance(data.get("cases"), list):
            raise ParseError("an eval report must be an object with 'cases'")
        try:
            cases = tuple(CaseReport.from_dict(c) for c in data["cases"])
            return cls(str(data.get("name", "eval")), cases, int(data.get("repeat", 1)))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ParseError(f"an eval report has a missing or wrong field ({err})") from err

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the report: HTML for ``.html``/``.htm``, else JSON."""
        target = Path(path)
        html = target.suffix.lower() in (".html", ".htm")
        text = self.to_html() if html else json.dumps(self.to_dict(), ensure_ascii=False)
        try:
            target.write_text(text, encoding="utf-8")
        except OSError as err:
            raise ConfigError(f"cannot write report {os.fspath(path)!r}: {err}") from err

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvalReport:
        """Read a JSON report written by :meth:`save`."""
        text = read_named_file(path, "report")
        try:
            return cls.from_dict(json_input.loads(text))
        except json.JSONDecodeError as err:
            raise ParseError(f"{os.fspath(path)}: not a JSON report ({err.msg})") from err


def build_report(
    name: str,
    repeat: int,
    cases: Sequence[tuple[str, str, Mapping[str, Any]]],
    runs: Sequence[RunReport],
    invalid: Sequence[tuple[str, str]] = (),
) -> EvalReport:
    """Group ``runs`` under their cases (``(id, input, metadata)``, dataset order).

    ``invalid`` are ``(label, error)`` of entries the dataset could not read.
    A case whose every run failed with the same error carries that error.
    """
    by_case: dict[str, list[RunReport]] = {}
    for run in runs:
        by_case.setdefault(run.run.case, []).append(run)
    reports = []
    for ident, text, metadata in cases:
        mine = sorted(by_case.get(ident, ()), key=lambda r: r.run.repeat)
        errors = {str(r.run.error) for r in mine if r.run.error is not None}
        error = (
            errors.pop()
            if len(errors) == 1 and len(mine) == sum(not r.run.ok for r in mine)
            else None
        )
        reports.append(CaseReport(ident, text, tuple(mine), metadata, error))
    reports.extend(CaseReport(label, error=error) for label, error in invalid)
    return EvalReport(name, tuple(reports), repeat)


def failed_run(case: str, repeat: int, error: BaseException) -> CaseRun:
    """The run of a case that failed before its turn (recorded nowhere but the report)."""
    return CaseRun(case, repeat, usage=TokenUsage(), error=ItemError.of(error))


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0
