"""The CLI asks before write_file runs: y/N at a terminal (a real pty), --yes, no terminal.

And before a shell command that is not read-only: a listing runs free, a deletion is asked about.
And, the same way, whether to open the page an MCP server asks the user to visit.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.approvals import denied, tool_contents
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.pipes import PipeReader

REPO = Path(__file__).resolve().parents[2]
TINY_SERVER = REPO / "tests" / "integration" / "servers" / "tiny_server.py"
TIMEOUT = 60.0
WRITE = Calls(("write_file", {"path": "note.txt", "content": "remember the milk"}))
PROMPT = '[approve] write_file {"path": "note.txt", "content": "remember the milk"}? [y/N] '


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER_URL", "LLAMA_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def _cli(url: str, *flags: str) -> list[str]:
    return [sys.executable, "-m", "agent_smith", "-e", url, "--no-default-mcp", *flags]


def _piped(
    url: str, flags: tuple[str, ...], lines: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """The CLI run with ``lines`` piped in (no terminal), to its end."""
    return subprocess.run(
        _cli(url, *flags),
        input=lines,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=_env(),
        cwd=cwd,
    )


@pytest.mark.parametrize("flags", [(), ("--yes",)], ids=["no-terminal", "yes"])
def test_piped_input_denies_unless_yes_approves(tmp_path: Path, flags: tuple[str, ...]) -> None:
    approve = bool(flags)
    with ScriptedLlmServer() as server:
        server.script(WRITE, Text("Done." if approve else "Not written."), Text("Yes?"))
        # "y" on the next line is conversation, never an answer to the question.
        done = _piped(server.url, flags, "note the milk\ny\n", tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "note.txt").exists() is approve
    lines = done.stderr.splitlines()
    shown = PROMPT.removesuffix("? [y/N] ")
    if approve:
        assert f"{shown} -> approved (--yes)" in lines
        assert tool_contents(server.requests[1]) == ["created note.txt (17 bytes)"]
    else:
        assert any(line.startswith(f"{shown} -> denied: no terminal") for line in lines)
        assert any(line.startswith("[tool] write_file denied: no terminal") for line in lines)
        assert "denied" in tool_contents(server.requests[1])[0]
    assert server.requests[2]["messages"][-1] == {"role": "user", "content": "y"}


@pytest.mark.parametrize("flags", [(), ("--yes",)], ids=["no-terminal", "yes"])
def test_the_shell_runs_a_listing_free_and_asks_before_deleting(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    (tmp_path / "old.txt").write_text("old\n")
    (tmp_path / "keep.txt").write_text("keep\n")
    # The two calls run in parallel once approved: the listing must not race the deletion.
    listing_call = ("run_command", {"command": "ls keep.txt"})
    calls = Calls(listing_call, ("run_command", {"command": "rm old.txt"}))
    with ScriptedLlmServer() as server:
        server.script(calls, Text("Done."))
        done = _piped(server.url, flags, "tidy up\n", tmp_path)
    assert done.returncode == 0, done.stderr
    asked = [line for line in done.stderr.splitlines() if line.startswith("[approve]")]
    assert len(asked) == 1 and '"rm old.txt"' in asked[0]  # the listing was not asked about
    listing, deletion = tool_contents(server.requests[1])
    assert listing == "keep.txt\n\n[exit code 0]"
    assert (tmp_path / "old.txt").exists() is not flags
    assert ("denied" in deletion) is not flags


@pytest.fixture
def terminal() -> Iterator[tuple[int, int, list[subprocess.Popen[bytes]]]]:
    """A pseudo-terminal (we type on ``controller``, the CLI reads ``tty``) and the processes."""
    controller, tty = pty.openpty()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        yield controller, tty, procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(TIMEOUT)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        os.close(controller)
        os.close(tty)


@pytest.mark.parametrize("answer", ["y", "n"])
def test_at_a_terminal_the_cli_asks_y_n_and_does_what_it_was_told(
    tmp_path: Path, terminal: tuple[int, int, list[subprocess.Popen[bytes]]], answer: str
) -> None:
    keyboard, tty, procs = terminal
    with ScriptedLlmServer() as server:
        server.script(WRITE, Text("Done." if answer == "y" else "Not written."))
        proc = subprocess.Popen(
            _cli(server.url),
            stdin=tty,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
            cwd=tmp_path,
        )
        procs.append(proc)
        assert proc.stdout is not None and proc.stderr is not None
        out = PipeReader(proc.stdout, "out")
        PipeReader(proc.stderr, "err")
        out.wait_for("> ")
        os.write(keyboard, b"note the milk\n")
        out.wait_for(PROMPT)  # asked, and nothing was written yet
        assert not (tmp_path / "note.txt").exists()
        os.write(keyboard, f"{answer}\n".encode())
        out.wait_for("Done." if answer == "y" else "Not written.")
        os.write(keyboard, b"/exit\n")
        assert proc.wait(TIMEOUT) == 0
    assert (tmp_path / "note.txt").exists() is (answer == "y")
    expected = "created note.txt (17 bytes)" if answer == "y" else denied("the user said no")
    assert tool_contents(server.requests[1]) == [expected]


def test_at_a_terminal_an_mcp_servers_page_is_opened_on_yes_and_the_server_hears_accept(
    tmp_path: Path, terminal: tuple[int, int, list[subprocess.Popen[bytes]]]
) -> None:
    keyboard, tty, procs = terminal
    # The "browser" (webbrowser runs $BROWSER) only notes the address it was given.
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    note = f"open({str(opened)!r}, 'a').write(sys.argv[1] + '\\n')"
    browser.write_text(f"#!{sys.executable}\nimport sys\n{note}\n")
    browser.chmod(0o755)
    url = "https://example.com/sign-in?session=42"  # what tiny_server's ``visit`` asks for
    with ScriptedLlmServer() as server:
        server.script(Calls(("mcp_tiny_server__visit", {})), Text("Signed in."))
        proc = subprocess.Popen(
            _cli(server.url, "--mcp", f"{sys.executable} {TINY_SERVER}"),
            stdin=tty,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**_env(), "BROWSER": str(browser)},
            cwd=tmp_path,
        )
        procs.append(proc)
        assert proc.stdout is not None and proc.stderr is not None
        out = PipeReader(proc.stdout, "out")
        err = PipeReader(proc.stderr, "err")
        out.wait_for("> ")
        os.write(keyboard, b"sign me in\n")
        out.wait_for(f"  {url}\nOpen it in your browser? [y/N] ")
        err.wait_for("[mcp tiny_server] asks you to visit a page: Sign in to the example service.")
        os.write(keyboard, b"y\n")
        out.wait_for("Done on that page? [y/N] ")
        assert opened.read_text() == f"{url}\n"  # opened, and the server still waits
        assert len(server.requests) == 1
        os.write(keyboard, b"y\n")
        out.wait_for("Signed in.")
        os.write(keyboard, b"/exit\n")
        assert proc.wait(TIMEOUT) == 0
    assert tool_contents(server.requests[1]) == ['{"action": "accept"}']
