"""Every example runs as shipped against a scripted server: script, notebook, Flask app."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import requests

from agent_smith import SqliteSession, read_results
from tests.support.approvals import denied, tool_contents
from tests.support.llm_server import (
    Calls,
    Chunks,
    JsonObject,
    Raw,
    ScriptedLlmServer,
    Text,
    sse_frames,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TIMEOUT = 60.0
QUESTION = "What's the weather like in Paris?"


class Gate(threading.Event):
    """A scripted-server pause that remembers whether it was opened or timed out."""

    opened: bool | None = None

    def wait(self, timeout: float | None = None) -> bool:
        self.opened = super().wait(timeout)
        return self.opened


def weather_then(reply: Text | Chunks) -> tuple[Calls, Text | Chunks]:
    """The model asks for the weather in Paris, then gives ``reply``."""
    return Calls(("get_weather", {"city": "Paris"})), reply


def gated_reply(text: str, gate: threading.Event) -> Chunks:
    """``text`` streamed word by word, holding after the first word until ``gate`` opens."""
    frames = list(sse_frames(Text(text), {}))
    return Chunks(*frames[:2], gate, *frames[2:])  # frames[0] only opens the message


def _weather_result(server: ScriptedLlmServer) -> str:
    (result,) = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    content: str = result["content"]
    return content


def _env(server: ScriptedLlmServer) -> dict[str, str]:
    env = dict(os.environ, LLAMA_SERVER_URL=server.url)
    env.pop("LLAMA_API_KEY", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(EXAMPLES.parent), env.get("PYTHONPATH")]))
    return env


def _run(
    argv: list[str], server: ScriptedLlmServer, *, stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """An example's command, run to its end against ``server``."""
    return subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        env=_env(server),
        cwd=cwd,
    )


# --- quickstart.py -----------------------------------------------------------


def test_quickstart_runs_its_tool_and_prints_the_answer() -> None:
    with ScriptedLlmServer() as server:
        server.script(*weather_then(Text("It is sunny and 21 °C in Paris.")))
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / "quickstart.py")],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=TIMEOUT,
            env=_env(server),
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is sunny and 21 °C in Paris.\n"
    assert _weather_result(server) == "Sunny and 21 °C in Paris."
    assert server.requests[0]["messages"][-1]["content"] == QUESTION


def test_quickstart_is_about_ten_lines_of_code() -> None:
    source = (EXAMPLES / "quickstart.py").read_text(encoding="utf-8")
    code = [line for line in source.splitlines() if line.strip() and not line.startswith('"""')]
    assert len(code) <= 12


# --- notebook.ipynb ----------------------------------------------------------


def _notebook_outputs(notebook: Any, mime: str) -> list[str]:
    """Each cell's rich outputs of type ``mime``, in order ("" for a cell without one)."""
    return [
        "".join(out.get("data", {}).get(mime, "") for out in cell.get("outputs", []))
        for cell in notebook.cells
        if cell.cell_type == "code"
    ]


def _answers_shown(markdowns: list[str]) -> list[str]:
    """The reply each live update showed: the text between the calls and the footer."""
    answers = []
    for markdown in markdowns:
        blocks = markdown.strip().split("\n\n")
        words = [b for b in blocks if not b.startswith(("calling ", "```", "*"))]
        answers.append(" ".join(words))
    return answers


def test_notebook_shows_the_turn_live_then_as_cards(monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    gate = Gate()
    updates: list[str] = []

    class Client(nbclient.NotebookClient):  # type: ignore[misc]
        """Sees each display update as the kernel sends it."""

        def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
            if msg["msg_type"] == "update_display_data":
                updates.append(msg["content"]["data"]["text/markdown"])
                if "It" in _answers_shown(updates[-1:]):
                    gate.set()  # the first word was shown while the model was still writing
            return super().process_message(msg, cell, cell_index)

    notebook = nbformat.read(EXAMPLES / "notebook.ipynb", as_version=4)
    with ScriptedLlmServer() as server:
        server.script(
            *weather_then(gated_reply("It is sunny in Paris today.", gate)),
            Calls(("get_weather", {"city": "Rome"})),
            Text("Sunny in Rome too."),
        )
        monkeypatch.setenv("LLAMA_SERVER_URL", server.url)
        Client(
            notebook,
            timeout=TIMEOUT,
            kernel_name="python3",
            resources={"metadata": {"path": str(EXAMPLES)}},
        ).execute()
    assert gate.opened is True  # opened by the first word's update, not by the server's timeout
    call = 'calling `get_weather` `{"city": "Paris"}`'
    result = "```text\nSunny and 21 °C in Paris.\n```"
    working = "*working… · 15 tokens (10 in, 5 out)*"  # the first reply's
    assert updates[0] == f"{call}\n\n{working}\n"  # the call, before its result
    assert updates[1] == f"{call}\n\n{result}\n\n{working}\n"
    assert _answers_shown(updates)[2:] == [
        "It",
        "It is",
        "It is sunny",
        "It is sunny in",
        "It is sunny in Paris",
        "It is sunny in Paris today.",
        "It is sunny in Paris today.",  # the final answer, still working
        "It is sunny in Paris today.",  # the card
    ]
    assert updates[-1] == (
        f"{call}\n\n{result}\n\nIt is sunny in Paris today.\n\n*30 tokens (20 in, 10 out)*\n"
    )
    assert _weather_result(server) == "Sunny and 21 °C in Paris."
    _, live, card, printed = _notebook_outputs(notebook, "text/html")
    assert live.count("<code>get_weather</code>") == 1  # one output, updated in place
    assert "It is sunny in Paris today." in live and "working" not in live
    assert "<code>{&quot;city&quot;: &quot;Rome&quot;}</code>" in card
    assert "Sunny and 21 °C in Rome." in card and "Sunny in Rome too." in card
    assert "30 tokens (20 in, 10 out)" in card
    assert printed == ""
    text = "".join(
        out.get("text", "") for cell in notebook.cells for out in cell.get("outputs", [])
    )
    assert text == "It is sunny in Paris today.\n8 messages so far\n"


# --- flask_app.py ------------------------------------------------------------


def _load_flask_app() -> ModuleType:
    spec = importlib.util.spec_from_file_location("flask_app_example", EXAMPLES / "flask_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def _serving(app: Any) -> Iterator[str]:
    """Serve a WSGI ``app`` on a free loopback port (one Flask "worker"); yield its URL."""
    from werkzeug.serving import make_server

    web = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=web.serve_forever, name="test-flask", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{web.server_port}"
    finally:
        web.shutdown()
        web.server_close()
        thread.join(TIMEOUT)


@pytest.fixture
def sessions_db(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "conversations.db"
    monkeypatch.setenv("AGENT_SMITH_SESSIONS", str(path))
    return path


@pytest.fixture
def flask_url(
    monkeypatch: pytest.MonkeyPatch, sessions_db: Path
) -> Iterator[tuple[str, ScriptedLlmServer]]:
    pytest.importorskip("flask")
    with ScriptedLlmServer() as llm_server:
        monkeypatch.setenv("LLAMA_SERVER_URL", llm_server.url)
        with _serving(_load_flask_app().app) as url:
            yield url, llm_server


def test_flask_page_has_the_form(flask_url: tuple[str, ScriptedLlmServer]) -> None:
    url, _ = flask_url
    page = requests.get(url, timeout=TIMEOUT)
    assert page.status_code == 200
    assert '<form id="ask">' in page.text and "/chat" in page.text


def test_flask_reply_streams_to_the_browser_before_the_model_finishes(
    flask_url: tuple[str, ScriptedLlmServer],
) -> None:
    url, llm_server = flask_url
    gate = Gate()
    llm_server.script(*weather_then(gated_reply("It is sunny in Paris today.", gate)))
    with requests.post(
        f"{url}/chat", data={"q": QUESTION}, stream=True, timeout=TIMEOUT
    ) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        chunks = response.iter_content(chunk_size=None, decode_unicode=True)
        received = ""
        while "It" not in received:
            received += next(chunks)
        assert not gate.is_set()  # the model is still writing: the page got it live
        gate.set()
        received += "".join(chunks)
    assert gate.opened is True
    assert received == "[calling get_weather]\nIt is sunny in Paris today."
    assert _weather_result(llm_server) == "Sunny and 21 °C in Paris."


def test_flask_app_rejects_an_empty_question(flask_url: tuple[str, ScriptedLlmServer]) -> None:
    url, llm_server = flask_url
    response = requests.post(f"{url}/chat", data={"q": "  "}, timeout=TIMEOUT)
    assert response.status_code == 400
    assert llm_server.requests == []


def test_flask_app_reports_a_server_error_in_the_body(
    flask_url: tuple[str, ScriptedLlmServer],
) -> None:
    url, llm_server = flask_url

    llm_server.script(Raw(401, '{"error": {"message": "Invalid API Key"}}'))
    response = requests.post(f"{url}/chat", data={"q": QUESTION}, timeout=TIMEOUT)
    assert response.status_code == 200  # headers went out before the model answered
    assert response.text.startswith("\n[error: ") and "401" in response.text


def test_flask_app_keeps_one_conversation_per_browser_across_workers(
    flask_url: tuple[str, ScriptedLlmServer], sessions_db: Path
) -> None:
    worker_a, llm_server = flask_url
    with _serving(_load_flask_app().app) as worker_b:  # a second worker on the same file
        ann, bob = requests.Session(), requests.Session()  # two browsers
        llm_server.script(Text("Hello Ann."), Text("You are Ann."), Text("Hello, stranger."))
        assert ann.post(f"{worker_a}/chat", data={"q": "I am Ann"}, timeout=TIMEOUT).ok
        second = ann.post(f"{worker_b}/chat", data={"q": "Who am I?"}, timeout=TIMEOUT)
        assert second.text == "You are Ann."
        assert bob.post(f"{worker_b}/chat", data={"q": "Who am I?"}, timeout=TIMEOUT).ok
        page = ann.get(worker_b, timeout=TIMEOUT).text
    sent = [[m["content"] for m in r["messages"][1:]] for r in llm_server.requests]
    assert sent == [
        ["I am Ann"],
        ["I am Ann", "Hello Ann.", "Who am I?"],  # worker B continued Ann's conversation
        ["Who am I?"],  # Bob has his own
    ]
    assert (
        "<p><b>user:</b> I am Ann</p>" in page and "<p><b>assistant:</b> You are Ann.</p>" in page
    )
    with SqliteSession(sessions_db, ann.cookies["conversation"]) as stored:
        assert [m.content for m in stored.messages()] == [
            "I am Ann",
            "Hello Ann.",
            "Who am I?",
            "You are Ann.",
        ]
        assert len(stored.session_ids()) == 2


def test_flask_app_refuses_a_second_reply_in_the_same_conversation(
    flask_url: tuple[str, ScriptedLlmServer],
) -> None:
    url, llm_server = flask_url
    gate = Gate()
    llm_server.script(gated_reply("It is sunny in Paris today.", gate), Text("unused"))
    browser = requests.Session()
    browser.get(url, timeout=TIMEOUT)  # no cookie yet: the first reply sets it
    with browser.post(f"{url}/chat", data={"q": QUESTION}, stream=True, timeout=TIMEOUT) as first:
        chunks = first.iter_content(chunk_size=None, decode_unicode=True)
        assert next(chunks) == "It"  # the first turn is running
        second = browser.post(f"{url}/chat", data={"q": "and now?"}, timeout=TIMEOUT)
        assert second.text.startswith("\n[busy: this conversation is still answering")
        gate.set()
        assert "It" + "".join(chunks) == "It is sunny in Paris today."
    assert len(llm_server.requests) == 1  # the refused turn never reached the model


@pytest.mark.parametrize("approve", [True, False])
def test_flask_asks_before_saving_a_note_and_another_worker_resumes_the_turn(
    flask_url: tuple[str, ScriptedLlmServer], approve: bool
) -> None:
    worker_a, llm_server = flask_url
    llm_server.script(
        Calls(("save_note", {"text": "buy milk"})), Text("Saved it." if approve else "Not saved.")
    )
    browser = requests.Session()
    paused = browser.post(f"{worker_a}/chat", data={"q": "Note: buy milk."}, timeout=TIMEOUT)
    assert paused.text == "[calling save_note]\n[save_note needs your approval]\n"
    assert len(llm_server.requests) == 1  # the turn waits: nothing more went to the model
    with _serving(_load_flask_app().app) as worker_b:  # the click lands on another worker
        pending = browser.get(f"{worker_b}/pending", timeout=TIMEOUT).json()
        assert pending == [
            {"call_id": "call_0", "tool": "save_note", "arguments": {"text": "buy milk"}}
        ]
        choice = {"call_id": "call_0", "approve": "yes" if approve else "no"}
        resumed = browser.post(f"{worker_b}/decide", data=choice, timeout=TIMEOUT)
        assert resumed.status_code == 200
        assert resumed.text == ("Saved it." if approve else "Not saved.")
        assert browser.get(f"{worker_b}/pending", timeout=TIMEOUT).json() == []
        again = browser.post(f"{worker_b}/decide", data=choice, timeout=TIMEOUT)
    assert again.status_code == 409  # a turn resumes once
    expected = "Saved note: buy milk" if approve else denied("the user clicked Deny")
    assert tool_contents(llm_server.requests[1]) == [expected]


def test_flask_refuses_a_decision_for_a_call_that_does_not_wait(
    flask_url: tuple[str, ScriptedLlmServer],
) -> None:
    url, llm_server = flask_url
    llm_server.script(Calls(("save_note", {"text": "x"})))
    browser = requests.Session()
    browser.post(f"{url}/chat", data={"q": "note x"}, timeout=TIMEOUT)
    wrong = browser.post(
        f"{url}/decide", data={"call_id": "call_9", "approve": "yes"}, timeout=TIMEOUT
    )
    assert wrong.status_code == 400
    assert (
        requests.post(f"{url}/decide", data={"call_id": "call_0"}, timeout=TIMEOUT).status_code
        == 409
    )  # another browser
    pending = browser.get(f"{url}/pending", timeout=TIMEOUT).json()
    assert [p["call_id"] for p in pending] == ["call_0"]  # still waiting for a real decision


def test_flask_a_new_question_instead_of_a_click_denies_the_waiting_note(
    flask_url: tuple[str, ScriptedLlmServer],
) -> None:
    url, llm_server = flask_url
    llm_server.script(Calls(("save_note", {"text": "x"})), Text("Something else, then."))
    browser = requests.Session()
    browser.post(f"{url}/chat", data={"q": "note x"}, timeout=TIMEOUT)
    other = browser.post(f"{url}/chat", data={"q": "never mind"}, timeout=TIMEOUT)
    assert other.text == "Something else, then."
    sent = llm_server.requests[1]["messages"]
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "user"]
    assert '"denied":true' in sent[3]["content"]
    assert browser.get(f"{url}/pending", timeout=TIMEOUT).json() == []


# --- batch/ ------------------------------------------------------------------

BATCH = EXAMPLES / "batch"


def _calculating_model(body: dict[str, Any]) -> Calls | Text:
    """Like a model that follows the example's prompt: calculator first, then the number."""
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return Text(messages[-1]["content"])
    question = messages[-1]["content"]
    expression = question.removeprefix("What is ").removesuffix("?")
    return Calls(("calculator", {"expression": expression}))


def test_batch_script_runs_every_input_then_resumes_with_nothing_left(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    command = [sys.executable, str(BATCH / "run_batch.py"), str(results)]
    with ScriptedLlmServer(_calculating_model) as server:
        first, again = _run(command, server), _run(command, server)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert sorted(lines[:-1]) == [
        "q1: '391' (right)",
        "q2: '10' (right)",
        "q3: '57' (right)",
        "q4: '1025' (right)",
        "q5: '10' (right)",
        "q6: '9801' (right)",
    ]
    assert lines[-1] == f"0 skipped (already in {results}), 6 run"
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"6 skipped (already in {results}), 0 run\n"
    system = server.requests[0]["messages"][0]["content"]
    assert "calculator" in system and server.requests[0]["temperature"] == 0


def test_batch_command_runs_the_example_spec_and_inputs(tmp_path: Path) -> None:
    out = tmp_path / "out.sqlite"
    files = [str(BATCH / "spec.json"), str(BATCH / "inputs.jsonl"), "-o", str(out)]
    with ScriptedLlmServer(_calculating_model) as server:
        done = subprocess.run(
            [sys.executable, "-m", "agent_smith", "batch", *files, "-e", server.url],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=_env(server),
        )
    assert done.returncode == 0, done.stderr
    assert "6 result(s), 0 failed" in done.stderr
    assert {r.id: r.content for r in read_results(out)} == {
        "q1": "391",
        "q2": "10",
        "q3": "57",
        "q4": "1025",
        "q5": "10",
        "q6": "9801",
    }


# --- evals/: the demo agent measured on its dataset ----------------------------

EVALS = EXAMPLES / "evals"
_DEMO_CALLS: dict[str, tuple[str, dict[str, str]]] = {
    "What is 17 * 23?": ("calculator", {"expression": "17 * 23"}),
    "What is 2 to the power of 10?": ("calculator", {"expression": "2 ^ 10"}),
    "What is (12 + 8) / 4?": ("calculator", {"expression": "(12 + 8) / 4"}),
    "How much is 1.5 times 4?": ("calculator", {"expression": "1.5 * 4"}),
    "What does notes.txt say about the meeting?": ("read_file", {"path": "notes.txt"}),
    "Which files are in the sandbox?": ("list_files", {}),
    "What is the first item in todo.md?": ("read_file", {"path": "todo.md"}),
    "What is today's date in UTC? Use the clock tool.": ("mcp_demo__now", {}),
}


def _demo_tools_model(body: JsonObject) -> Text | Calls:
    """The right tool for each case of examples/evals, then its result as the answer."""
    messages = body["messages"]
    question = messages[-1]["content"]
    told = " returned:\n"
    if told in question:  # the small model's follow-up: the round told, in words
        return Text("Here it is: " + question.split(told, 1)[1])
    if question not in _DEMO_CALLS:  # the follow-up case: its history has the answer
        return Text("That is 782.")
    return Calls(_DEMO_CALLS[question])


def test_eval_example_measures_the_demo_agent_and_writes_the_report(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    with ScriptedLlmServer(_demo_tools_model) as server:
        done = _run([sys.executable, str(EVALS / "eval_demo_agent.py"), str(page)], server)
    assert done.returncode == 0, done.stderr
    assert "demo tools: 9 cases x 1 = 9 runs; pass rate 100.0%" in done.stdout, done.stdout
    assert f"report written to {page}" in done.stdout
    assert 'data-metric="pass_rate" data-value="1.0"' in page.read_text(encoding="utf-8")


# --- testing/: an application's own tests on the TestModel --------------------


def test_the_test_model_example_tests_pass_under_pytest() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLES / "testing")],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        cwd=EXAMPLES / "testing",
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


# --- typed stops: one readable line, never a traceback -------------------------

#: A reply that says one sentence over and over: the repetition guard stops the turn.
LOOPING = Text("Paris is sunny today and the weather is fine. " * 12)


def _looping_model(body: dict[str, Any]) -> Text:
    return LOOPING


def _asking_again(body: dict[str, Any]) -> Calls:
    """A model that asks for the same call every round: the loop guard stops the turn."""
    return Calls(("get_weather", {"city": "Paris"}))


@pytest.mark.parametrize(
    ("script", "model", "says"),
    [
        ("quickstart.py", _looping_model, "AgentStopped: agent 'agent' stopped: the reply kept"),
        ("quickstart.py", _asking_again, "AgentStopped: agent stopped: the same tool calls"),
        ("testing/weather_app.py", _looping_model, "AgentStopped: agent 'agent' stopped"),
    ],
)
def test_a_script_example_prints_a_typed_stop_as_one_line(
    script: str, model: Any, says: str
) -> None:
    with ScriptedLlmServer(model) as server:
        done = _run([sys.executable, str(EXAMPLES / script)], server)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()  # no traceback: the one line alone
    assert line.startswith(says), line


def test_the_batch_example_prints_a_stopped_input_as_one_line(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    command = [sys.executable, str(BATCH / "run_batch.py"), str(results)]
    with ScriptedLlmServer(_looping_model) as server:
        done = _run(command, server)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    *stopped, summary = done.stdout.splitlines()
    assert sorted(line.split(":")[0] for line in stopped) == [f"q{n}" for n in range(1, 7)]
    assert all("AgentStopped: " in line and "kept repeating" in line for line in stopped)
    assert summary == f"0 skipped (already in {results}), 6 run"


def test_the_flask_example_shows_a_typed_stop_as_one_line(
    flask_url: tuple[str, ScriptedLlmServer],
) -> None:
    url, llm_server = flask_url
    llm_server.script(LOOPING)
    body = requests.post(f"{url}/chat", data={"q": QUESTION}, timeout=TIMEOUT).text
    note = body.rstrip("\n").rsplit("\n", 1)[-1]
    assert note.startswith("[error: agent 'agent' stopped: the reply kept repeating")
    assert note.endswith("]")
    assert "Traceback" not in body


@pytest.mark.parametrize("skill", ["time-keeper", "release-notes"])
def test_a_skill_example_shows_a_typed_stop_as_one_line(skill: str, tmp_path: Path) -> None:
    pytest.importorskip("mcp")  # time-keeper starts the example MCP server
    argv = [sys.executable, "-m", "agent_smith", "--skill", str(EXAMPLES / "skills" / skill)]
    with ScriptedLlmServer(_looping_model) as server:
        argv += ["-e", server.url, "--no-default-mcp"]
        done = _run(argv, server, stdin="What time is it?\n/exit\n", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (error,) = [line for line in done.stderr.splitlines() if "agent-smith: error:" in line]
    assert "kept repeating" in error
