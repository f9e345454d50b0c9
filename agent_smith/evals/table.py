"""The terminal views: a report, or a comparison of two, as fixed-width text tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .stats import quantile

if TYPE_CHECKING:
    from .compare import ReportDiff
    from .report import EvalReport

_ID_WIDTH = 28


def percent(value: float) -> str:
    """A share as a percentage with one decimal: ``0.5625`` -> ``"56.2%"``."""
    return f"{100 * value:.1f}%"


def report_table(report: EvalReport) -> str:
    """A row per case (runs passed, pass rate, median seconds, why it failed), then totals."""
    rows = [("case", "passed", "rate", "p50 s", "failure")]
    for case in report.cases:
        seconds = [r.run.seconds for r in case.runs]
        failure = case.error or next(
            (_why(r.evaluations, r.run.error) for r in case.runs if not r.passed), ""
        )
        rows.append(
            (
                _clip(case.id, _ID_WIDTH),
                f"{case.passes}/{len(case.runs)}",
                percent(case.pass_rate),
                f"{quantile(seconds, 0.5):.2f}" if seconds else "-",
                _clip(failure, 60),
            )
        )
    lines = _aligned(rows)
    k = report.repeat
    lines.append("")
    lines.append(
        f"{report.name}: {len(report.cases)} cases x {k} = {len(report.runs)} runs; "
        f"pass rate {percent(report.pass_rate)} (spread {percent(report.spread)}), "
        f"pass@{k} {percent(report.pass_at_k)}, pass^{k} {percent(report.pass_hat_k)}"
    )
    rates = report.evaluator_rates()
    if rates:
        errors = report.evaluator_errors()
        parts = [
            f"{name} {percent(rate)}" + (f" ({errors[name]} errors)" if name in errors else "")
            for name, rate in rates.items()
        ]
        lines.append("evaluators: " + ", ".join(parts))
    figures = report.figures()
    if figures["seconds"]:
        lines.append(
            f"latency p50 {quantile(figures['seconds'], 0.5):.2f} s, "
            f"p95 {quantile(figures['seconds'], 0.95):.2f} s; "
            f"tokens p50 {quantile(figures['tokens'], 0.5):.0f}; "
            f"cost total {sum(figures['cost']):.4g}"
            if figures["cost"]
            else f"latency p50 {quantile(figures['seconds'], 0.5):.2f} s, "
            f"p95 {quantile(figures['seconds'], 0.95):.2f} s; "
            f"tokens p50 {quantile(figures['tokens'], 0.5):.0f}"
        )
    return "\n".join(lines)


def diff_table(diff: ReportDiff) -> str:
    """A row per case that changed beyond noise, then the totals with their band."""
    rows = [("case", "base", "new", "change", "band", "verdict")]
    for row in diff.cases:
        if row.verdict == "same":
            continue
        rows.append(
            (
                _clip(row.id, _ID_WIDTH),
                "-" if row.base is None else percent(row.base),
                "-" if row.new is None else percent(row.new),
                f"{100 * row.change:+.1f} pts",
                f"±{100 * row.band:.1f}",
                row.verdict,
            )
        )
    lines = _aligned(rows) if len(rows) > 1 else ["no case changed"]
    total = diff.total
    lines.append("")
    lines.append(
        f"pass rate {percent(total.base or 0.0)} -> {percent(total.new or 0.0)} "
        f"({100 * total.change:+.1f} pts, noise band ±{100 * total.band:.1f}): {total.verdict}; "
        f"{len(diff.regressions)} regressed, {len(diff.improvements)} improved"
    )
    return "\n".join(lines)


def _why(evaluations: Sequence[object], error: object) -> str:
    if error is not None:
        return str(error)
    for e in evaluations:
        if not getattr(e, "passed", True):
            return f"{getattr(e, 'name', '')}: {getattr(e, 'reason', '')}"
    return ""


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _aligned(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
