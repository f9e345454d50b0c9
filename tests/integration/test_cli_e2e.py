"""The agent-smith CLI as a user runs it: a subprocess fed on stdin, against a scripted server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import AgentConfig
from tests.integration.conftest import require_local_llama
from tests.support.llm_server import (
    Calls,
    Chunks,
    Drop,
    Raw,
    Reply,
    ScriptedLlmServer,
    Text,
    sse_frames,
)
from tests.support.pipes import MODEL_TIMEOUT, PipeReader
from tests.support.ports import free_port
from tests.support.signals import default_sigint

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
TINY_SERVER = REPO / "tests" / "integration" / "servers" / "tiny_server.py"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER_URL", "LLAMA_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_cli(*args: str, stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_smith", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=_env(),
        cwd=cwd,
    )


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m.get("role") == "tool"]


def calculator_then_echo(body: dict[str, Any]) -> Reply:
    """A model that calls the calculator, then the MCP echo tool, then answers."""
    results = _tool_results(body)
    if not results:
        return Calls(("calculator", {"expression": "(2 + 3) * 4"}))
    if len(results) == 1:
        echo = next(t["function"] for t in body["tools"] if t["function"]["name"].endswith("echo"))
        (arg,) = echo["parameters"].get("required") or list(echo["parameters"]["properties"])
        return Calls((echo["name"], {arg: "hello from the test"}))
    return Text(f"The answer is {results[0]['content']}; the echo said {results[1]['content']}.")


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("agent-smith: error:")]


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("the notes\n", encoding="utf-8")
    return tmp_path


def test_cli_calls_the_calculator_and_the_mcp_echo_then_prints_the_answer(
    sandbox: Path,
) -> None:
    with ScriptedLlmServer(calculator_then_echo) as server:
        done = run_cli("-e", server.url, stdin="What is (2 + 3) * 4?\n/exit\n", cwd=sandbox)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert '[tool] calculator {"expression": "(2 + 3) * 4"}' in lines
    assert "[tool] calculator -> 20" in lines
    assert any(
        line.startswith("[tool] mcp_demo__echo") and "hello from the test" in line for line in lines
    )
    echo_results = [line for line in lines if line.startswith("[tool] mcp_demo__echo ->")]
    assert len(echo_results) == 1 and "hello from the test" in echo_results[0]
    assert done.stdout.startswith("The answer is 20; the echo said")
    assert done.stdout.endswith(".\n")
    offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {"calculator", "read_file", "run_command", "mcp_demo__echo", "mcp_demo__now"} <= offered
    assert all(body["stream"] for body in server.requests)


def test_cli_reads_a_sandboxed_file_and_refuses_to_leave_the_sandbox(sandbox: Path) -> None:
    def reader(body: dict[str, Any]) -> Reply:
        results = _tool_results(body)
        if not results:
            return Calls(("read_file", {"path": "notes.txt"}))
        if len(results) == 1:
            return Calls(("read_file", {"path": "../outside.txt"}))
        return Text("Read it.")

    with ScriptedLlmServer(reader) as server:
        done = run_cli(
            "-e", server.url, "--no-default-mcp", "--sandbox", str(sandbox), stdin="go\n", cwd=REPO
        )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "[tool] read_file -> the notes" in lines
    assert any("read_file failed:" in line and "'..' is not allowed" in line for line in lines)
    assert done.stdout == "Read it.\n"


def test_cli_without_streaming_prints_the_whole_answer(sandbox: Path) -> None:
    with ScriptedLlmServer() as server:
        server.script(Calls(("calculator", {"expression": "2^10"})), Text("It is 1024."))
        done = run_cli(
            "-e", server.url, "--no-default-mcp", "--no-stream", stdin="2^10?\n", cwd=sandbox
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is 1024.\n"
    assert "[tool] calculator -> 1024" in done.stderr.splitlines()
    assert not any(body.get("stream") for body in server.requests)


def test_cli_sends_the_api_key_and_never_prints_it(sandbox: Path) -> None:
    with ScriptedLlmServer() as server:
        server.script(Text("hi"))
        done = run_cli(
            "-e", server.url, "-k", "sk-secret-123", "--no-default-mcp", stdin="hi\n", cwd=sandbox
        )
    assert done.returncode == 0, done.stderr
    assert server.headers[0]["Authorization"] == "Bearer sk-secret-123"
    assert "sk-secret-123" not in done.stdout + done.stderr


def test_cli_says_in_one_line_when_the_server_is_unreachable(sandbox: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    done = run_cli("-e", url, "--no-default-mcp", stdin="hello\n", cwd=sandbox)
    assert done.returncode == 1
    # At start, before the REPL: one line, no banner, no retries, no traceback.
    assert done.stderr.splitlines() == [
        line for line in done.stderr.splitlines() if line.startswith("agent-smith: error:")
    ]
    (line,) = _error_lines(done.stderr)
    assert f"nothing answers at {url} (" in line
    assert "--endpoint URL" in line and "--local" in line
    assert done.stdout == ""


def test_cli_keeps_retry_warnings_off_the_screen_when_the_server_goes_away(
    sandbox: Path,
) -> None:
    def first_then_gone(body: dict[str, Any]) -> Reply:
        return Text("First answer.") if len(server.requests) == 1 else Drop()

    with ScriptedLlmServer(first_then_gone) as server:
        done = run_cli("-e", server.url, "--no-default-mcp", stdin="hi\nagain\n", cwd=sandbox)
    assert done.returncode == 1
    assert done.stdout == "First answer.\n"
    # The client retried quietly; then one line says what happened.
    assert len(server.requests) == 1 + 4  # the second turn: a try and three retries
    assert "retry 1/3" not in done.stderr and "[llm]" not in done.stderr
    (line,) = _error_lines(done.stderr)
    assert "--endpoint" in line


def test_cli_says_in_one_line_when_the_key_is_refused(sandbox: Path) -> None:
    refused = Raw(401, '{"error": {"message": "Invalid API Key", "type": "authentication_error"}}')
    with ScriptedLlmServer(lambda body: refused) as server:
        done = run_cli(
            "-e", server.url, "-k", "sk-wrong", "--no-default-mcp", stdin="hello\n", cwd=sandbox
        )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    (line,) = _error_lines(done.stderr)
    assert "HTTP 401" in line and "--api-key" in line
    assert "sk-wrong" not in done.stderr


def test_cli_says_in_one_line_when_the_server_has_no_tool_support(sandbox: Path) -> None:
    body = '{"error": {"code": 500, "message": "tools param requires --jinja flag"}}'
    with ScriptedLlmServer(lambda _: Raw(500, body)) as server:
        done = run_cli("-e", server.url, "--no-default-mcp", stdin="hello\n", cwd=sandbox)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    (line,) = _error_lines(done.stderr)
    assert "does not accept tool calls" in line and "--jinja" in line


def test_cli_refuses_an_mcp_server_that_does_not_start(sandbox: Path) -> None:
    with ScriptedLlmServer() as server:
        done = run_cli(
            "-e",
            server.url,
            "--no-default-mcp",
            "--mcp",
            f"{sys.executable} -c 'import sys; sys.exit(3)'",
            stdin="",
            cwd=sandbox,
        )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    (line,) = _error_lines(done.stderr)
    assert "--mcp" in line
    assert server.requests == []


def test_cli_activates_a_skill_folder(sandbox: Path) -> None:
    skill = REPO / "examples" / "skills" / "release-notes"
    with ScriptedLlmServer() as server:
        server.script(Text("ok"))
        done = run_cli(
            "-e", server.url, "--no-default-mcp", "--skill", str(skill), stdin="hi\n", cwd=sandbox
        )
    assert done.returncode == 0, done.stderr
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system"
    assert "release" in system["content"].lower()


def test_cli_banner_names_each_skill_and_its_mcp_servers(sandbox: Path) -> None:
    pytest.importorskip("mcp")
    skills = REPO / "examples" / "skills"
    with ScriptedLlmServer() as server:
        done = run_cli(
            *("-e", server.url, "--no-default-mcp"),
            *("--skill", str(skills / "time-keeper"), "--skill", str(skills / "release-notes")),
            stdin="/exit\n",
            cwd=sandbox,
        )
    assert done.returncode == 0, done.stderr
    (banner,) = [line for line in done.stderr.splitlines() if line.startswith("agent-smith 0")]
    assert "; skill time-keeper (MCP: example); skill release-notes. /help" in banner


def test_cli_reports_a_missing_skill_folder_in_one_line(sandbox: Path) -> None:
    done = run_cli(
        "-e", "http://127.0.0.1:9", "--no-default-mcp", "--skill", "nope", stdin="", cwd=sandbox
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    (line,) = _error_lines(done.stderr)
    assert "--skill nope" in line


def _skill_with_a_stubborn_server(folder: Path, pid_file: Path, *, context: str = "") -> Path:
    """A skill whose MCP server outlives its stdin (so only a close() stops it)."""
    folder.mkdir()
    command = ["${PYTHON}", str(TINY_SERVER), "--stubborn", "--pid-file", str(pid_file)]
    manifest: dict[str, Any] = {
        "name": "with-server",
        "system_prompt_file": "prompt.md",
        "mcp_servers": [{"alias": "tiny", "command": command}],
    }
    (folder / "prompt.md").write_text("Use the tiny server.", encoding="utf-8")
    if context:
        manifest["context_file"] = "context.json"
        (folder / "context.json").write_text(json.dumps(context), encoding="utf-8")
    (folder / "skill.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def _running(pid: int) -> bool:
    """Is ``pid`` a live process (a zombie that only waits to be reaped is not)?"""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def skill_server_pid(tmp_path: Path) -> Iterator[Path]:
    """Where the skill's server writes its pid; a server left running is killed afterwards."""
    pid_file = tmp_path / "server.pid"
    yield pid_file
    if pid_file.exists() and _running(pid := int(pid_file.read_text())):
        os.kill(pid, signal.SIGKILL)


needs_proc = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="process checks read /proc (Linux)"
)


@needs_proc
def test_cli_stops_a_skills_mcp_server_when_it_exits(
    sandbox: Path, tmp_path: Path, skill_server_pid: Path
) -> None:
    skill = _skill_with_a_stubborn_server(tmp_path / "skill", skill_server_pid)
    with ScriptedLlmServer() as server:
        server.script(Text("ok"))
        done = run_cli(
            "-e", server.url, "--no-default-mcp", "--skill", str(skill), stdin="hi\n", cwd=sandbox
        )
    assert done.returncode == 0, done.stderr
    assert "mcp_tiny__echo" in {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert not _running(int(skill_server_pid.read_text())), "the skill server outlived the CLI"


@needs_proc
def test_cli_stops_a_skills_mcp_server_when_the_skill_cannot_be_activated(
    sandbox: Path, tmp_path: Path, skill_server_pid: Path
) -> None:
    too_big = "x" * (AgentConfig().skill_context_max_bytes + 1)
    skill = _skill_with_a_stubborn_server(tmp_path / "skill", skill_server_pid, context=too_big)
    done = run_cli(
        "-e", "http://127.0.0.1:9", "--no-default-mcp", "--skill", str(skill), stdin="", cwd=sandbox
    )
    assert done.returncode == 1
    (line,) = _error_lines(done.stderr)
    assert f"--skill {skill}:" in line and "skill_context_max_bytes" in line
    assert skill_server_pid.exists(), "the skill's MCP server should have started"
    assert not _running(int(skill_server_pid.read_text())), "the skill server outlived the CLI"


def test_console_script_and_module_both_show_help() -> None:
    script = Path(sys.executable).with_name("agent-smith")
    for argv in ([str(script), "--help"], [sys.executable, "-m", "agent_smith", "--help"]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, env=_env())
        assert done.returncode == 0, done.stderr
        assert "--endpoint" in done.stdout and "--mcp" in done.stdout


# --- Ctrl-C ------------------------------------------------------------------


@pytest.fixture
def cli_process(sandbox: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> tuple[subprocess.Popen[bytes], PipeReader, PipeReader]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_smith", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
            cwd=sandbox,
            start_new_session=True,  # its own process group, like a job in a terminal
            preexec_fn=default_sigint,  # Ctrl-C reaches it also from a background job
        )
        procs.append(proc)
        return proc, PipeReader(proc.stdout, "out"), PipeReader(proc.stderr, "err")

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(TIMEOUT)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_ctrl_c_cancels_the_reply_not_the_program(cli_process: Any) -> None:
    gate = threading.Event()
    frames = list(sse_frames(Text("First words and then much more."), {}))
    with ScriptedLlmServer() as server:
        server.script(Chunks(*frames[:3], gate, *frames[3:]), Text("Second reply."))
        proc, out, err = cli_process("-e", server.url, "--no-default-mcp")
        assert proc.stdin is not None
        proc.stdin.write(b"tell me a story\n")
        proc.stdin.flush()
        out.wait_for("First words")  # the reply is streaming, and stalled at the gate
        proc.send_signal(signal.SIGINT)
        err.wait_for("(reply cancelled)")
        proc.stdin.write(b"and now?\n")
        proc.stdin.flush()
        out.wait_for("Second reply.")
        proc.stdin.write(b"/exit\n")
        proc.stdin.flush()
        assert proc.wait(TIMEOUT) == 0
    assert out.text() == "First words\nSecond reply.\n"
    assert "Traceback" not in err.text()
    assert server.requests[1]["messages"][-1] == {"role": "user", "content": "and now?"}


def test_ctrl_c_at_the_prompt_discards_the_line_and_keeps_running(cli_process: Any) -> None:
    with ScriptedLlmServer() as server:
        server.script(Text("Still here."))
        proc, out, err = cli_process("-e", server.url, "--no-default-mcp")
        err.wait_for("/exit or Ctrl-D quits")  # the banner: the REPL is reading input
        proc.send_signal(signal.SIGINT)
        # Wait for the discarded line's newline: input racing a signal can be lost
        # inside CPython's read, which a user at a terminal never runs into.
        err.wait_for("quits.\n\n")
        assert proc.stdin is not None
        proc.stdin.write(b"are you there?\n")
        proc.stdin.flush()
        out.wait_for("Still here.")
        proc.stdin.close()  # Ctrl-D
        assert proc.wait(TIMEOUT) == 0
    assert json.dumps(server.requests[0]["messages"][-1]) == json.dumps(
        {"role": "user", "content": "are you there?"}
    )


@pytest.mark.llama
@pytest.mark.slow
def test_cli_serves_a_local_model_that_survives_a_terminal_ctrl_c(cli_process: Any) -> None:
    model = require_local_llama()
    proc, out, err = cli_process("--serve-model", str(model), "--no-default-mcp")
    err.wait_for("/exit or Ctrl-D quits", timeout=MODEL_TIMEOUT)
    # A terminal's Ctrl-C goes to the whole foreground process group: llama.cpp's
    # process must not be in it, or the server dies with the user's first Ctrl-C.
    os.killpg(proc.pid, signal.SIGINT)
    err.wait_for("quits.\n\n")
    assert proc.stdin is not None
    proc.stdin.write(b"What is 17 times 23?\n/exit\n")
    proc.stdin.flush()
    assert proc.wait(MODEL_TIMEOUT) == 0
    assert out.text().strip()  # a real model's words: some, whatever they are
    lines = err.text().splitlines()
    # The served model (the default local one, at --serve-model's temperature 0)
    # calls the calculator, by writing the call as text the agent recovers.
    assert '[tool] calculator {"expression": "17 * 23"}' in lines
    assert "[tool] calculator -> 391" in lines
    assert "Traceback" not in err.text()
