from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent_smith import BatchResult, ItemError, ResultsError, TokenUsage, read_results
from agent_smith.batch.sink import open_sink

OK = BatchResult("a", "q1", "answer", {"x": 1}, TokenUsage(1, 2, 3), None, 1, 0.5)
FAILED = BatchResult("b", "q2", error=ItemError("TransportError", "refused"), attempts=3)


@pytest.fixture(params=["out.jsonl", "out.sqlite"])
def path(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    name: str = request.param
    return tmp_path / name


def test_written_results_are_read_back_in_order_and_recorded(path: Path) -> None:
    with open_sink(path) as sink:
        assert sink.recorded() == {}
        sink.write(OK)
        sink.write(FAILED)
        assert sink.recorded() == {"a": True, "b": False}
    assert read_results(path) == [OK, FAILED]
    with open_sink(path) as again:
        assert again.recorded() == {"a": True, "b": False}


def test_a_written_result_survives_the_process_being_killed(path: Path) -> None:
    # The writer dies without closing anything: what write() returned for is on disk.
    code = (
        "import os, sys\n"
        "from agent_smith import BatchResult\n"
        "from agent_smith.batch.sink import open_sink\n"
        "sink = open_sink(sys.argv[1])\n"
        "sink.write(BatchResult('a', 'q', 'answer'))\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=60)
    assert [r.id for r in read_results(path)] == ["a"]


def test_drop_failed_removes_only_the_failures(path: Path) -> None:
    with open_sink(path) as sink:
        sink.write(OK)
        sink.write(FAILED)
        assert sink.drop_failed() == 1
        assert sink.drop_failed() == 0
        assert sink.recorded() == {"a": True}
        sink.write(BatchResult("b", "q2", "second try"))  # the input ran again
    assert [(r.id, r.content) for r in read_results(path)] == [("a", "answer"), ("b", "second try")]


def test_a_second_batch_on_the_same_file_fails_at_once(path: Path) -> None:
    with open_sink(path), pytest.raises(ResultsError, match="in use by another batch"):
        open_sink(path)
    open_sink(path).close()  # free again once the first closed


def test_a_closed_sink_refuses_writes(path: Path) -> None:
    sink = open_sink(path)
    sink.close()
    sink.close()
    with pytest.raises(ResultsError, match="closed"):
        sink.write(OK)


def test_a_torn_last_line_is_cut_off_on_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "out.jsonl"
    line = json.dumps(OK.to_dict())
    path.write_text(line + "\n" + line[:20], encoding="utf-8")  # killed mid-write
    with open_sink(path) as sink:
        assert sink.recorded() == {"a": True}
    assert path.read_text(encoding="utf-8") == line + "\n"
    assert "incomplete line" in caplog.text


def test_a_corrupt_line_in_the_middle_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    good = json.dumps(OK.to_dict())
    path.write_text(f"{good}\n{{not json}}\n{good}\n", encoding="utf-8")
    with pytest.raises(ResultsError, match=r"out\.jsonl:2: not a batch result"):
        open_sink(path)
    path.write_text(f'{good}\n{{"id": "x"}}\n', encoding="utf-8")
    with pytest.raises(ResultsError, match=r"out\.jsonl:2: not a batch result"):
        read_results(path)
    path.write_text(f"{good}\n{'[' * 100_000}\n", encoding="utf-8")  # deeper than the parser goes
    with pytest.raises(ResultsError, match=r"out\.jsonl:2: not a batch result.*nested too deeply"):
        read_results(path)


def test_a_corrupt_output_in_a_results_database_is_a_results_error(tmp_path: Path) -> None:
    path = tmp_path / "out.sqlite"
    with open_sink(path) as sink:
        sink.write(OK)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE results SET output = ?", ("[" * 100_000,))
    db.close()
    with pytest.raises(ResultsError, match=r"cannot read results file.*nested too deeply"):
        read_results(path)


def test_the_sqlite_sink_refuses_a_duplicate_id_and_a_foreign_schema(tmp_path: Path) -> None:
    path = tmp_path / "out.db"
    with open_sink(path) as sink:
        sink.write(OK)
        with pytest.raises(ResultsError, match="UNIQUE"):
            sink.write(OK)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.close()
    with pytest.raises(ResultsError, match="schema version 99"):
        open_sink(path)


def test_the_sqlite_rows_are_plain_queryable_columns(tmp_path: Path) -> None:
    path = tmp_path / "out.sqlite3"
    with open_sink(path) as sink:
        sink.write(OK)
        sink.write(FAILED)
    db = sqlite3.connect(path)
    rows = db.execute("SELECT id, ok, content, error_type, total_tokens FROM results").fetchall()
    db.close()
    assert rows == [("a", 1, "answer", None, 3), ("b", 0, None, "TransportError", 0)]


def test_a_path_that_cannot_be_opened_is_a_results_error(tmp_path: Path) -> None:
    for name in ("missing/out.jsonl", "missing/out.sqlite"):
        with pytest.raises(ResultsError, match="cannot open"):
            open_sink(tmp_path / name)
    with pytest.raises(ResultsError, match="no results file"):
        read_results(tmp_path / "none.jsonl")
    assert not os.path.exists(tmp_path / "missing")


@pytest.mark.parametrize("suffix", [".jsonl", ".db"])
def test_cost_is_kept_by_both_sinks(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"results{suffix}"
    result = BatchResult("a", "in", "out", usage=TokenUsage(10, 5, 15, cost=0.25))
    with open_sink(path) as sink:
        sink.write(result)
    assert read_results(path) == [result]


def test_a_results_database_written_before_cost_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with open_sink(path) as sink:
        sink.write(BatchResult("a", "in", "out"))
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE results DROP COLUMN cost")  # as an older version wrote it
    db.commit()
    db.close()
    with open_sink(path) as sink:
        sink.write(BatchResult("b", "in", "out", usage=TokenUsage(1, 1, 2, cost=0.5)))
    assert [r.usage.cost for r in read_results(path)] == [None, 0.5]
