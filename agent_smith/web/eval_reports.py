"""The dev UI's evals view: the eval reports of a folder, listed, and each one as its page.

``WebApp(..., eval_reports="reports/")`` serves the JSON reports there (what
``agent-smith eval --json`` and ``EvalReport.save("x.json")`` write):
``GET /api/evals`` lists them, newest first, with their headline numbers,
and ``GET /evals/<name>`` is the report's self-contained HTML page (no
script), which the dev UI shows in a frame. A report is read when asked
for, so a new eval run shows up on the next look. A file that is not a
report is listed with its error rather than hiding the others.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import AgentSmithError, ConfigError
from ..evals.report import EvalReport
from .http import Response, error_response

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,200}")
_PAGE_HEADERS = (
    ("Content-Type", "text/html; charset=utf-8"),
    ("Cache-Control", "no-cache"),
    ("X-Content-Type-Options", "nosniff"),
    # The page has no script and loads nothing; only the dev UI (same origin) may frame it.
    (
        "Content-Security-Policy",
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'",
    ),
)


class EvalReports:
    """The JSON eval reports of ``folder`` (an existing directory)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ConfigError(f"eval_reports: {os.fspath(folder)!r} is not a directory")

    def listing(self) -> dict[str, Any]:
        """``{"enabled": true, "reports": [...]}``: each report's file, link and numbers."""
        files = sorted(self.folder.glob("*.json"), key=_modified, reverse=True)
        return {"enabled": True, "reports": [_entry(path) for path in files]}

    def page(self, name: str) -> Response:
        """The HTML page of report ``name`` (its file name without ``.json``)."""
        path = self.folder / f"{name}.json"
        if not _NAME.fullmatch(name) or name.startswith(".") or not path.is_file():
            return error_response(404, f"no eval report named {name!r}")
        try:
            html = EvalReport.load(path).to_html()
        except AgentSmithError as err:
            return error_response(422, str(err))
        return Response(200, html.encode("utf-8"), _PAGE_HEADERS)


def _modified(path: Path) -> float:
    return path.stat().st_mtime


def _entry(path: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {"file": path.name, "href": f"evals/{path.stem}"}
    try:
        report = EvalReport.load(path)
    except AgentSmithError as err:
        return {**entry, "error": str(err)}
    return {
        **entry,
        "name": report.name,
        "cases": len(report.cases),
        "repeat": report.repeat,
        "pass_rate": report.pass_rate,
        "pass_at_k": report.pass_at_k,
    }
