"""``agent-smith eval`` in this process: the report, its files, thresholds, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_smith.cli import eval as cli_eval
from agent_smith.cli.main import main
from agent_smith.evals import EvalReport
from tests.support.llm_server import ScriptedLlmServer

pytestmark = pytest.mark.usefixtures("no_thread_leak", "keep_sys_path")

CASES = [
    {"dataset": {"name": "echo", "evaluators": [{"type": "contains"}]}},
    {"id": "one", "input": "one", "expected": "answer: one"},
    {"id": "two", "input": "two", "expected": "answer: two"},
    {"id": "three", "input": "three", "expected": "answer: 3"},  # the model says "three"
]


@pytest.fixture
def files(tmp_path: Path, answering_server: ScriptedLlmServer) -> tuple[Path, Path]:
    spec, dataset = tmp_path / "spec.json", tmp_path / "cases.jsonl"
    spec.write_text(json.dumps({"base_url": answering_server.url}), encoding="utf-8")
    dataset.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    return spec, dataset


def test_the_report_goes_to_stdout_and_to_its_files(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, dataset = files
    html, report = tmp_path / "report.html", tmp_path / "report.json"
    argv = [str(dataset), "--spec", str(spec), "--repeat", "2", "--html", str(html)]
    assert main(["eval", *argv, "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "echo: 3 cases x 2 = 6 runs; pass rate 66.7%" in out
    assert "three" in out and "2/2" in out and "0/2" in out
    assert EvalReport.load(report).pass_rate == pytest.approx(4 / 6)
    assert "66.7%" in html.read_text(encoding="utf-8")


def test_a_missed_threshold_is_exit_status_3_with_the_figures(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    spec, dataset = files
    assert main(["eval", str(dataset), "--spec", str(spec), "--threshold", "0.6"]) == 0
    status = main(["eval", str(dataset), "--spec", str(spec), "--threshold", "0.9"])
    assert status == cli_eval.EXIT_UNDER_THRESHOLD == 3
    assert "pass_rate 0.667 is under the threshold 0.9" in capsys.readouterr().err


def test_a_comparison_with_an_earlier_report_is_printed(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, dataset = files
    base = tmp_path / "base.json"
    assert main(["eval", str(dataset), "--spec", str(spec), "--json", str(base)]) == 0
    fixed = [*CASES[:3], {"id": "three", "input": "three", "expected": "answer: three"}]
    dataset.write_text("".join(json.dumps(c) + "\n" for c in fixed), encoding="utf-8")
    capsys.readouterr()
    assert main(["eval", str(dataset), "--spec", str(spec), "--compare", str(base)]) == 0
    out = capsys.readouterr().out
    assert "three" in out.split("echo:")[-1] and "improved" in out


def test_a_rerun_with_the_same_results_file_runs_nothing_again(
    files: tuple[Path, Path], tmp_path: Path, answering_server: ScriptedLlmServer
) -> None:
    spec, dataset = files
    results = tmp_path / "runs.jsonl"
    argv = ["eval", str(dataset), "--spec", str(spec), "--results", str(results)]
    assert main(argv) == 0
    requests = len(answering_server.requests)
    assert main(argv) == 0
    assert len(answering_server.requests) == requests == 3


def test_a_malformed_line_is_named_and_the_other_cases_run(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    spec, dataset = files
    text = dataset.read_text(encoding="utf-8").splitlines()
    dataset.write_text("\n".join([*text[:2], "{not json", *text[2:]]) + "\n", encoding="utf-8")
    assert main(["eval", str(dataset), "--spec", str(spec)]) == 0
    captured = capsys.readouterr()
    assert f"agent-smith eval: skipped: {dataset}:3:" in captured.err
    assert "3 cases x 1" not in captured.out and "two" in captured.out


@pytest.mark.parametrize(
    ("which", "text", "message"),
    [
        ("spec", '{"model": "m"}', "missing key 'base_url'"),
        ("dataset", '{"dataset": [1]}\n', "cases.jsonl:1: the 'dataset' line must hold"),
        ("dataset", '{"dataset": {"name": "none"}}\n', "the dataset 'none' has no cases"),
    ],
)
def test_a_bad_file_is_one_error_line_and_status_1(
    files: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    which: str,
    text: str,
    message: str,
) -> None:
    spec, dataset = files
    (spec if which == "spec" else dataset).write_text(text, encoding="utf-8")
    assert main(["eval", str(dataset), "--spec", str(spec)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("agent-smith eval: error: ") and message in err


def test_a_missing_dataset_is_named(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, _ = files
    assert main(["eval", str(tmp_path / "nope.jsonl"), "--spec", str(spec)]) == 1
    assert "nope.jsonl" in capsys.readouterr().err


@pytest.mark.parametrize(
    "option", [["--threshold", "80"], ["--repeat", "0"], ["-c", "0"], ["--local-cluster", "0"]]
)
def test_options_out_of_range_are_usage_errors(
    files: tuple[Path, Path], option: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    spec, dataset = files
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", str(dataset), "--spec", str(spec), *option])
    assert exit_info.value.code == 2
    assert "agent-smith eval: error:" in capsys.readouterr().err
