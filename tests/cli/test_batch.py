"""``agent-smith batch`` in this process: options, exit statuses and messages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_smith import read_results
from agent_smith.batch.sink import open_sink
from agent_smith.cli import batch as cli_batch
from agent_smith.cli.main import main
from tests.support.batch import answer, last_user_text, write_batch_files
from tests.support.llm_server import JsonObject, Raw, Reply, ScriptedLlmServer

pytestmark = pytest.mark.usefixtures("no_thread_leak", "keep_sys_path")


@pytest.fixture
def files(tmp_path: Path, answering_server: ScriptedLlmServer) -> tuple[Path, Path, Path]:
    rows = [{"id": f"t{i}", "input": f"ticket {i}"} for i in range(12)]
    spec, inputs = write_batch_files(tmp_path, {"base_url": answering_server.url}, rows)
    return spec, inputs, tmp_path / "out.jsonl"


def test_every_input_is_run_and_recorded(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    spec, inputs, out = files
    assert main(["batch", str(spec), str(inputs), "-o", str(out), "-c", "3"]) == 0
    err = capsys.readouterr().err
    assert "12 inputs; running 12 on 3 local threads" in err
    assert "12/12 done, 0 failed" in err  # the final progress line (no terminal here)
    assert "12 result(s), 0 failed, in " in err and str(out) in err
    assert sorted(r.id for r in read_results(out)) == sorted(f"t{i}" for i in range(12))
    assert main(["batch", str(spec), str(inputs), "-o", str(out)]) == 0
    assert "12 already in" in capsys.readouterr().err


def test_failed_inputs_are_named_and_the_status_says_so(
    files: tuple[Path, Path, Path],
    answering_server: ScriptedLlmServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def refuse_ticket_3(body: JsonObject) -> Reply:
        if last_user_text(body) == "ticket 3":
            return Raw(400, '{"error": {"message": "no such ticket"}}')
        return answer(body)

    answering_server.responder = refuse_ticket_3
    spec, inputs, out = files
    status = main(["batch", str(spec), str(inputs), "-o", str(out), "--retries", "0"])
    assert status == cli_batch.EXIT_SOME_FAILED == 3
    err = capsys.readouterr().err
    assert "[failed] t3: LlmApiError:" in err and "no such ticket" in err
    assert "12 result(s), 1 failed" in err
    assert main(["batch", str(spec), str(inputs), "-o", str(out), "--rerun-failed"]) == 3
    assert "11 already in" in capsys.readouterr().err


def test_endpoint_overrides_the_specs_base_url(
    tmp_path: Path, answering_server: ScriptedLlmServer, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text('{"base_url": "http://127.0.0.1:1"}', encoding="utf-8")
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('"hello"\n', encoding="utf-8")
    out = tmp_path / "out.db"
    assert main(["batch", str(spec), str(inputs), "-o", str(out), "-e", answering_server.url]) == 0
    assert [r.content for r in read_results(out)] == ["answer: hello"]


@pytest.mark.parametrize(
    ("spec_text", "inputs_text", "message"),
    [
        ('{"model": "m"}', '"x"\n', "spec.json: agent spec: missing key 'base_url'"),
        ('{"base_url": "http://h", "tools": ["nope"]}', '"x"\n', "importable name"),
        ('{"base_url": "http://h"}', '"x"\n{"id": 1}\n', "inputs.jsonl:2: an input needs the keys"),
    ],
)
def test_a_bad_spec_or_input_file_is_one_error_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    spec_text: str,
    inputs_text: str,
    message: str,
) -> None:
    (tmp_path / "spec.json").write_text(spec_text, encoding="utf-8")
    (tmp_path / "inputs.jsonl").write_text(inputs_text, encoding="utf-8")
    argv = ["batch", str(tmp_path / "spec.json"), str(tmp_path / "inputs.jsonl")]
    assert main([*argv, "-o", str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("agent-smith batch: error: ") and message in err
    assert err.count("\n") == 1


def test_a_results_file_in_use_is_one_error_line(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    spec, inputs, out = files
    with open_sink(out):
        assert main(["batch", str(spec), str(inputs), "-o", str(out)]) == 1
    assert "is in use by another batch" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["-o", "x.jsonl", "--scheduler", "tcp://h:8786", "--local-cluster", "2"],
        ["-o", "x.jsonl", "-c", "0"],
        ["-o", "x.jsonl", "--local-cluster", "0"],
        ["-o", "x.jsonl", "--retries", "-1"],
        ["-o", "x.jsonl", "--item-timeout", "0"],
    ],
)
def test_bad_options_are_usage_errors(extra: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["batch", "spec.json", "inputs.jsonl", *extra])
    assert exit_.value.code == 2


def test_an_unreachable_scheduler_is_one_error_line(
    files: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.ports import free_port

    monkeypatch.setattr(cli_batch, "CONNECT_TIMEOUT", "1s")
    spec, inputs, out = files
    address = f"tcp://127.0.0.1:{free_port()}"
    assert main(["batch", str(spec), str(inputs), "-o", str(out), "--scheduler", address]) == 1
    err = capsys.readouterr().err
    assert f"cannot reach the Dask scheduler at {address}" in err
    assert err.count("\n") == 1


def test_without_dask_the_cluster_options_say_what_to_install(
    files: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    monkeypatch.delitem(sys.modules, "agent_smith.cli.dask_cluster", raising=False)
    spec, inputs, out = files
    assert main(["batch", str(spec), str(inputs), "-o", str(out), "--local-cluster", "2"]) == 1
    assert "pip install -e '.[dask]'" in capsys.readouterr().err


def test_the_repl_help_points_at_the_batch_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "agent-smith batch -h" in capsys.readouterr().out
