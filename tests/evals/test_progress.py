"""The eval progress bar: on a terminal, silent elsewhere, in a Jupyter kernel with the report."""

from __future__ import annotations

import io
import re

import pytest

from agent_smith.evals.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_one_line_redrawn_per_run_and_ended_on_close() -> None:
    screen = Terminal()
    bar = ProgressBar(4, done=1, stream=screen)
    bar.advance(True)
    bar.advance(False)
    bar.close()
    frames = screen.getvalue().split("\r")[1:]
    assert [re.sub(r", [\d.]+ s", "", f.strip()) for f in frames] == [
        "[" + "#" * 8 + "." * 22 + "] 1/4 runs, 0 passed",
        "[" + "#" * 15 + "." * 15 + "] 2/4 runs, 1 passed",
        "[" + "#" * 22 + "." * 8 + "] 3/4 runs, 1 passed",
    ]
    assert screen.getvalue().endswith("\n")


def test_a_stream_that_is_no_terminal_gets_nothing() -> None:
    log = io.StringIO()
    bar = ProgressBar(2, stream=log)
    bar.advance(True)
    bar.close()
    assert log.getvalue() == ""


NOTEBOOK_CELL = """
from agent_smith import Agent, TestModel
from agent_smith.evals import Case, Contains, Dataset, run_eval

cases = Dataset(tuple(Case(f"c{i}", f"q{i}", expected=f"q{i}") for i in range(3)), (Contains(),))
with run_eval(cases, lambda: Agent(TestModel(respond=lambda r: "q1")), progress=True) as run:
    report = run.report()
report
"""


def test_in_a_jupyter_kernel_the_bar_is_the_cells_output_and_the_report_renders() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(NOTEBOOK_CELL)])
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    outputs = notebook.cells[0].outputs
    assert [o.output_type for o in outputs] == ["display_data", "execute_result"], outputs
    bar, report = (o.data["text/html"] for o in outputs)
    assert '<progress value="3" max="3"' in bar and "3/3 runs, 1 passed" in bar  # the last update
    assert report.startswith("<style>") and 'data-metric="pass_rate"' in report
    assert "33.3%" in report and "<html" not in report
