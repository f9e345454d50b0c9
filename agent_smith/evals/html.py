"""The HTML report: one self-contained page, no script, no network (inline CSS and SVG).

:func:`report_html` is the whole page (what ``report.save("x.html")``
writes; it opens from the file system), :func:`report_fragment` the same
content as one ``<div>`` with scoped styles, for Jupyter (``_repr_html_``)
and the dev UI. The numbers carry ``data-metric``/``data-value`` attributes
(exact values), so a test or a script reads them back from the page.
Charts: the pass rate per case and per evaluator as bars, and histograms
of latency, tokens and cost per run. Each failing run is listed with its
verdicts and its conversation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from ..base.history_json import message_to_dict
from .table import percent

if TYPE_CHECKING:
    from .compare import ReportDiff
    from .report import EvalReport, RunReport

_STYLE = """
.as-eval{font:14px/1.4 system-ui,sans-serif;color:#1f2328;max-width:60em}
.as-eval h2{font-size:1.3em;margin:.2em 0}.as-eval h3{font-size:1.05em;margin:1.2em 0 .4em}
.as-eval .cards{display:flex;flex-wrap:wrap;gap:.6em}
.as-eval .card{border:1px solid #d0d7de;border-radius:6px;padding:.4em .8em;min-width:7em}
.as-eval .card b{display:block;font-size:1.4em}
.as-eval table{border-collapse:collapse}.as-eval td,.as-eval th{padding:.2em .6em;
border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}
.as-eval .fail{color:#cf222e}.as-eval .pass{color:#1a7f37}
.as-eval details{border:1px solid #d0d7de;border-radius:6px;padding:.3em .6em;margin:.4em 0}
.as-eval .msg{margin:.3em 0;padding:.3em .5em;border-left:3px solid #d0d7de;white-space:pre-wrap}
.as-eval .msg.user{border-color:#0969da}.as-eval .msg.assistant{border-color:#8250df}
.as-eval .msg.tool{border-color:#bf8700}.as-eval svg text{font:11px system-ui,sans-serif}
"""
_BAR_WIDTH = 320
_BINS = 12


def report_html(report: EvalReport) -> str:
    """The whole page for ``report``."""
    title = escape(f"Eval report: {report.name}")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title></head><body>{report_fragment(report)}</body></html>\n"
    )


def report_fragment(report: EvalReport) -> str:
    """The report as one ``<div class="as-eval">`` (styles included)."""
    k = report.repeat
    cards = [
        ("pass_rate", "pass rate", report.pass_rate),
        ("pass_at_k", f"pass@{k}", report.pass_at_k),
        ("pass_hat_k", f"pass^{k}", report.pass_hat_k),
        ("spread", "spread", report.spread),
    ]
    parts = [
        f"<style>{_STYLE}</style>",
        '<div class="as-eval">',
        f"<h2>{escape(report.name)}</h2>",
        f'<p><span data-metric="cases" data-value="{len(report.cases)}">{len(report.cases)}</span>'
        f' cases × {k} = <span data-metric="runs" data-value="{len(report.runs)}">'
        f"{len(report.runs)}</span> runs</p>",
        '<div class="cards">',
        *(
            f'<div class="card">{escape(label)}<b data-metric="{key}" data-value="{value!r}">'
            f"{percent(value)}</b></div>"
            for key, label, value in cards
        ),
        "</div>",
        "<h3>Pass rate per case</h3>",
        _bars([(c.id, c.pass_rate) for c in report.cases], "case"),
    ]
    rates = report.evaluator_rates()
    if rates:
        parts += ["<h3>Pass rate per evaluator</h3>", _bars(list(rates.items()), "evaluator")]
    figures = report.figures()
    for key, label, unit in (
        ("seconds", "Latency", "s"),
        ("tokens", "Tokens", ""),
        ("cost", "Cost", ""),
    ):
        if figures[key]:
            parts += [f"<h3>{label} per run</h3>", _histogram(figures[key], unit)]
    parts += ["<h3>Cases</h3>", _case_table(report)]
    failures = report.failures()
    parts.append(f"<h3>Failing runs ({len(failures)})</h3>")
    for case, run in failures:
        if run is None:
            parts.append(
                f'<details open><summary class="fail">{escape(case.id)}: could not run'
                f"</summary><p>{escape(case.error or '')}</p></details>"
            )
        else:
            parts.append(_failing_run(case.id, case.input, run))
    parts.append("</div>")
    return "\n".join(parts)


def diff_fragment(diff: ReportDiff) -> str:
    """A comparison as a table (Jupyter's view of a :class:`~.compare.ReportDiff`)."""
    rows = "".join(
        f"<tr><td>{escape(c.id)}</td><td>{_maybe(c.base)}</td><td>{_maybe(c.new)}</td>"
        f"<td>{100 * c.change:+.1f} pts</td><td>±{100 * c.band:.1f}</td>"
        f'<td class="{_verdict_class(c.verdict)}">{escape(c.verdict)}</td></tr>'
        for c in (diff.total, *diff.cases)
    )
    head = "<tr><th>case</th><th>base</th><th>new</th><th>change</th><th>band</th><th></th></tr>"
    return f'<style>{_STYLE}</style><div class="as-eval"><table>{head}{rows}</table></div>'


def _maybe(value: float | None) -> str:
    return "-" if value is None else percent(value)


def _verdict_class(verdict: str) -> str:
    return {"regressed": "fail", "improved": "pass"}.get(verdict, "")


def _bars(items: Sequence[tuple[str, float]], kind: str) -> str:
    """Horizontal bars, one per ``(label, share)``."""
    row, label_width = 18, 200
    height = row * len(items) + 4
    width = label_width + _BAR_WIDTH + 60
    out = [f'<svg role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">']
    for i, (label, share) in enumerate(items):
        y = i * row + 2
        bar = round(share * _BAR_WIDTH)
        colour = "#1a7f37" if share >= 0.5 else "#cf222e"
        shown = label if len(label) <= 30 else label[:29] + "…"
        out.append(
            f'<g data-{kind}="{escape(label)}" data-value="{share!r}">'
            f'<text x="{label_width - 6}" y="{y + 12}" text-anchor="end">{escape(shown)}</text>'
            f'<rect x="{label_width}" y="{y}" width="{_BAR_WIDTH}" height="{row - 4}" '
            'fill="#eaeef2"/>'
            f'<rect x="{label_width}" y="{y}" width="{bar}" height="{row - 4}" fill="{colour}"/>'
            f'<text x="{label_width + _BAR_WIDTH + 6}" y="{y + 12}">{percent(share)}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


def _histogram(values: Sequence[float], unit: str) -> str:
    """A histogram of ``values`` in equal bins, the range written under it."""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    counts = [0] * _BINS
    for v in values:
        counts[min(int((v - low) / span * _BINS), _BINS - 1)] += 1
    width, height, bin_width = _BINS * 24, 80, 24
    top = max(counts)
    out = [f'<svg role="img" width="{width}" height="{height + 16}">']
    for i, count in enumerate(counts):
        h = round(count / top * height)
        out.append(
            f'<rect x="{i * bin_width + 1}" y="{height - h}" width="{bin_width - 2}" '
            f'height="{h}" fill="#0969da"><title>{count}</title></rect>'
        )
    out.append(
        f'<text x="0" y="{height + 13}">{low:.3g}{unit}</text>'
        f'<text x="{width}" y="{height + 13}" text-anchor="end">{high:.3g}{unit}</text></svg>'
    )
    return "".join(out)


def _case_table(report: EvalReport) -> str:
    head = "<tr><th>case</th><th>passed</th><th>rate</th><th>input</th></tr>"
    rows = []
    for case in report.cases:
        css = "pass" if case.pass_rate == 1.0 else "fail"
        rows.append(
            f'<tr data-case="{escape(case.id)}"><td>{escape(case.id)}</td>'
            f"<td>{case.passes}/{len(case.runs)}</td>"
            f'<td class="{css}" data-metric="case_pass_rate" data-value="{case.pass_rate!r}">'
            f"{percent(case.pass_rate)}</td><td>{escape(_short(case.input, 80))}</td></tr>"
        )
    return f"<table>{head}{''.join(rows)}</table>"


def _failing_run(case: str, question: str, report: RunReport) -> str:
    run = report.run
    verdicts = "".join(
        f'<li class="{"pass" if e.passed else "fail"}">{escape(e.name)}: '
        f"{'pass' if e.passed else 'fail'}{escape(' — ' + e.reason if e.reason else '')}</li>"
        for e in report.evaluations
    )
    error = f'<p class="fail">{escape(str(run.error))}</p>' if run.error is not None else ""
    messages = "".join(_message(message_to_dict(m)) for m in run.messages)
    if not messages:
        messages = f'<div class="msg user"><b>user</b>\n{escape(question)}</div>'
    return (
        f'<details data-failing="{escape(case)}"><summary class="fail">{escape(case)} '
        f"(run {run.repeat}, {run.seconds:.2f} s, {run.usage.total} tokens)</summary>"
        f"{error}<ul>{verdicts}</ul>{messages}</details>"
    )


def _message(data: dict[str, object]) -> str:
    role = str(data.get("role", ""))
    text = str(data.get("content") or "")
    calls = data.get("tool_calls") or []
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict):
                args = json.dumps(call.get("arguments", {}), ensure_ascii=False)
                text += f"\n→ {call.get('name')}({args})"
    name = f" {data['name']}" if role == "tool" and data.get("name") else ""
    body = escape(text.strip())
    return f'<div class="msg {escape(role)}"><b>{escape(role + name)}</b>\n{body}</div>'


def _short(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
