"""``agent-smith batch`` as a real process: a terminal's Ctrl-C, then a resumed run.

Ctrl-C is SIGINT to the driver's whole process group, as a terminal sends
it, so local Dask workers started by ``--local-cluster`` get it too. The
scripted server holds every request after the first few until the test
opens the gate, so inputs are in flight when the interrupt comes; the driver
must stop while they still are, leave only complete results behind, and a
rerun must finish the rest with every id recorded once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent_smith import read_results
from tests.support.batch import answer, last_user_text, write_batch_files
from tests.support.llm_server import Hold, JsonObject, Reply, ScriptedLlmServer, Text
from tests.support.signals import default_sigint

REPO = Path(__file__).resolve().parents[2]
WAIT = 60.0
INPUTS = 60


class HoldingServer(ScriptedLlmServer):
    """Answers the first ``quick`` requests, then holds each one until ``gate`` opens."""

    def __init__(self, *, quick: int, hold: int) -> None:
        super().__init__(self._respond)
        self.gate = threading.Event()
        self.all_held = threading.Event()
        self.answered: list[str] = []
        self._quick, self._hold = quick, hold
        self._held = 0
        self._mutex = threading.Lock()

    def _respond(self, body: JsonObject) -> Reply:
        with self._mutex:
            if len(self.answered) < self._quick or self.gate.is_set():
                self.answered.append(last_user_text(body))
                return answer(body)
            self._held += 1
            if self._held >= self._hold:
                self.all_held.set()
        return Hold(self.gate, Text("too late"))


def _files(tmp_path: Path, url: str) -> list[str]:
    rows = [{"id": f"n{i:02d}", "input": f"note {i}"} for i in range(INPUTS)]
    spec, inputs = write_batch_files(tmp_path, {"base_url": url}, rows)
    return [str(spec), str(inputs), "-o", str(tmp_path / "out.jsonl")]


def _interrupt(command: list[str], server: HoldingServer) -> str:
    """Start the command, Ctrl-C it once every slot waits on the server; its stderr."""
    driver = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    try:
        assert server.all_held.wait(WAIT), "the inputs never all waited on the server"
        os.killpg(driver.pid, signal.SIGINT)
        # Still holding: the driver must stop without the held replies ever coming.
        _, err = driver.communicate(timeout=WAIT)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(WAIT)
        server.gate.set()
    assert driver.returncode == 130, err
    return err


def _batch(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent_smith", "batch", *args]


@pytest.mark.parametrize(
    ("options", "slots"),
    [(["-c", "4"], 4), (["-c", "4", "--local-cluster", "2"], 4)],
    ids=["local-threads", "local-cluster"],
)
def test_ctrl_c_stops_cleanly_and_the_rerun_records_the_rest_once(
    tmp_path: Path, options: list[str], slots: int
) -> None:
    with HoldingServer(quick=10, hold=slots) as server:
        files = _files(tmp_path, server.url)
        err = _interrupt(_batch(*files, *options), server)
        assert "interrupted:" in err and "run the same command again to resume" in err
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        out = tmp_path / "out.jsonl"
        data = out.read_bytes()
        assert not data or data.endswith(b"\n"), err  # nothing half-written
        recorded = read_results(out)
        assert {r.input for r in recorded} <= set(server.answered)  # only finished inputs
        assert f"{len(recorded)} of {INPUTS} inputs are done" in err
        done = subprocess.run(
            _batch(*files, "-c", "4"), capture_output=True, text=True, timeout=WAIT, cwd=REPO
        )
    assert done.returncode == 0, done.stderr
    assert not recorded or f"{len(recorded)} already in" in done.stderr
    ids = sorted(r.id for r in read_results(out))
    assert ids == [f"n{i:02d}" for i in range(INPUTS)]


def test_ctrl_c_stops_an_eval_and_the_rerun_judges_every_run_once(tmp_path: Path) -> None:
    dataset, spec, runs = tmp_path / "cases.jsonl", tmp_path / "spec.json", tmp_path / "runs.jsonl"
    lines = [{"dataset": {"name": "notes", "evaluators": [{"type": "contains"}]}}]
    lines += [
        {"id": f"n{i:02d}", "input": f"note {i}", "expected": f"answer: note {i}"}
        for i in range(20)
    ]
    dataset.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    command = [sys.executable, "-m", "agent_smith", "eval", str(dataset), "--spec", str(spec)]
    command += ["-c", "4", "--results", str(runs)]
    with HoldingServer(quick=5, hold=4) as server:
        spec.write_text(json.dumps({"base_url": server.url}), encoding="utf-8")
        err = _interrupt(command, server)
        assert "agent-smith eval: interrupted; rerun with the same --results" in err, err
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        recorded = read_results(runs)
        assert {r.input for r in recorded} <= set(server.answered)  # only finished runs
        done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "notes: 20 cases x 1 = 20 runs; pass rate 100.0%" in done.stdout, done.stdout
    assert sorted(r.id for r in read_results(runs)) == [f"n{i:02d}#1" for i in range(20)]
