"""Every example, as a newcomer runs it: ``agent-smith serve --local``, then one more command.

One ``agent-smith serve --local`` (the default local model, fetched once)
serves the whole module, on a free port given to the examples as
``$LLAMA_SERVER_URL`` (a user's default, :8080, may be taken here). Each test
runs one example's own command against it and checks what a user would: it
ends by itself, within a bound, with an answer and no error. What a small
model says is not pinned (tests/integration/test_examples.py pins the wiring
on a scripted server); that every input of the batch example finishes is,
and that the notebook's tool runs (its card shows the call and its result).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.support.pipes import MODEL_TIMEOUT
from tests.support.served import REPO, serving

# A real model on a loaded two-core machine: minutes, not the suite's 300 s.
pytestmark = [pytest.mark.slow, pytest.mark.llama, pytest.mark.timeout(2 * MODEL_TIMEOUT)]

EXAMPLES = REPO / "examples"


@pytest.fixture(scope="module")
def served_url() -> Iterator[str]:
    from tests.integration.conftest import require_local_llama

    require_local_llama()  # skips (a failure under AGENT_SMITH_REQUIRE_ALL) without xllamacpp
    with serving() as serve:
        served = serve("--local", "--port", "0")
        yield served.wait_ready()
        assert served.ctrl_c() == 0


def _env(url: str) -> dict[str, str]:
    env = dict(os.environ, LLAMA_SERVER_URL=url)
    env.pop("LLAMA_API_KEY", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def _run(argv: list[str], url: str, *, stdin: str = "", cwd: Path = REPO) -> str:
    done = subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=MODEL_TIMEOUT,
        env=_env(url),
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "agent-smith: error" not in done.stderr, done.stderr
    return done.stdout


def test_quickstart_answers(served_url: str) -> None:
    argv = [sys.executable, str(EXAMPLES / "quickstart.py")]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=MODEL_TIMEOUT, env=_env(served_url), cwd=REPO
    )
    # `agent-smith serve` answers a request without a temperature greedily: the same
    # answer every time, made of the tool's result (no loop, no typed stop).
    assert done.returncode == 0, done.stderr
    assert "21 °C" in done.stdout, done.stdout


def test_batch_example_finishes_every_input(served_url: str, tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    out = _run([sys.executable, str(EXAMPLES / "batch" / "run_batch.py"), str(results)], served_url)
    lines = out.splitlines()
    assert lines[-1] == f"0 skipped (already in {results}), 6 run", out
    assert sorted(line.split(":")[0] for line in lines[:-1]) == [f"q{n}" for n in range(1, 7)]
    assert "failed after" not in out  # none timed out behind another's reply
    assert all(json.loads(row)["error"] is None for row in results.read_text().splitlines())


def test_flask_app_streams_an_answer(
    served_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("flask")
    from werkzeug.serving import make_server

    monkeypatch.setenv("LLAMA_SERVER_URL", served_url)
    monkeypatch.setenv("AGENT_SMITH_SESSIONS", str(tmp_path / "conversations.db"))
    spec = importlib.util.spec_from_file_location("flask_app_local", EXAMPLES / "flask_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    web = make_server("127.0.0.1", 0, module.app, threaded=True)
    thread = threading.Thread(target=web.serve_forever, name="test-flask-local", daemon=True)
    thread.start()
    try:
        reply = requests.post(
            f"http://127.0.0.1:{web.server_port}/chat",
            data={"q": "What's the weather like in Paris?"},
            timeout=MODEL_TIMEOUT,
        )
    finally:
        web.shutdown()
        web.server_close()
        thread.join(MODEL_TIMEOUT)
    assert reply.status_code == 200
    assert reply.text.strip(), reply.text
    assert '"arguments"' not in reply.text, reply.text  # a call's text never reaches the page
    assert "[error" not in reply.text, reply.text  # greedy (agent-smith serve): no loop
    assert "21 °C" in reply.text, reply.text


def test_notebook_runs_its_tool_and_shows_the_cards(
    served_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("LLAMA_SERVER_URL", served_url)
    notebook = nbformat.read(EXAMPLES / "notebook.ipynb", as_version=4)
    nbclient.NotebookClient(
        notebook,
        timeout=MODEL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(EXAMPLES)}},
    ).execute()  # a typed stop (the sampling model looping) is the card's last line, not an error
    cards = [
        "".join(out.get("data", {}).get("text/html", "") for out in cell.get("outputs", []))
        for cell in notebook.cells
        if cell.cell_type == "code"
    ]
    live = cards[1]  # show(agent.stream("What's the weather like in Paris?"))
    assert "<code>get_weather</code>" in live, live  # the model called the tool ...
    assert "Sunny and 21 °C in " in live, live  # ... and it ran
    assert "working" not in live, live  # the live output ended as the card
    assert 'class="agent-smith-turn"' in cards[2], cards[2]  # TurnCard.from_events(...)
    printed = "".join(
        out.get("text", "") for cell in notebook.cells for out in cell.get("outputs", [])
    )
    assert "messages so far" in printed


@pytest.mark.parametrize(
    ("skill", "question"),
    [
        ("time-keeper", "What time is it now?"),
        ("release-notes", "Changes: fixed a crash on empty input; added a --quiet flag."),
    ],
)
def test_skill_examples_answer_in_the_repl(
    served_url: str, skill: str, question: str, tmp_path: Path
) -> None:
    argv = [sys.executable, "-m", "agent_smith", "--skill", str(EXAMPLES / "skills" / skill)]
    argv += ["-e", served_url, "--no-default-mcp"]
    assert _run(argv, served_url, stdin=f"{question}\n/exit\n", cwd=tmp_path).strip()


def test_the_bundled_mcp_server_example_answers_in_the_repl(
    served_url: str, tmp_path: Path
) -> None:
    argv = [sys.executable, "-m", "agent_smith", "-e", served_url]  # it is the REPL's default
    assert _run(argv, served_url, stdin="Use the echo tool on: hello\n/exit\n", cwd=tmp_path)


def test_eval_example_measures_the_demo_agent_and_writes_its_report(
    served_url: str, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    out = _run(
        [sys.executable, str(EXAMPLES / "evals" / "eval_demo_agent.py"), str(page)], served_url
    )
    assert "demo tools: 9 cases x 1 = 9 runs; pass rate " in out, out  # the model's score varies
    assert "could not run" not in page.read_text(encoding="utf-8")  # every case reached the model
    assert 'data-metric="pass_rate"' in page.read_text(encoding="utf-8")
