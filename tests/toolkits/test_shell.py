"""The shell toolkit with real subprocesses: confinement, limits, and killing the whole group."""

from __future__ import annotations

import os
import select
import shlex
import signal
import sys
import threading
from pathlib import Path

import pytest

from agent_smith import ShellPolicy, ShellToolkit, ToolError
from agent_smith.base.cancellation import CancellationSource
from agent_smith.tools.base import ToolContext

WAIT = 10.0
PYTHON = shlex.quote(sys.executable)
# A process that ignores SIGTERM, says its pid, and would live for ten minutes.
STUBBORN = (
    f"{PYTHON} -c 'import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    'open(sys.argv[1], "w").write(str(os.getpid())); time.sleep(600)\''
)


def _policy(root: Path, **overrides: object) -> ShellPolicy:
    options: dict[str, object] = {"timeout": 30.0, "kill_grace": 0.5}
    options.update(overrides)
    return ShellPolicy(root=root, **options)  # type: ignore[arg-type]


def _dies(pid: int) -> bool:
    """Whether process ``pid`` (not our child) ends within WAIT, watched through a pidfd."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], WAIT)
        if not ready:  # the test fails; leave no process behind all the same
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        return bool(ready)
    finally:
        os.close(fd)


def test_a_command_runs_in_the_workspace_and_reports_its_exit_code(root: Path) -> None:
    shell = ShellToolkit(_policy(root))
    (root / "sub").mkdir()
    assert shell.run("pwd; echo out; echo err >&2; exit 3", cwd="sub") == (
        f"{os.path.realpath(root / 'sub')}\nout\nerr\n\n[exit code 3]"
    )


def test_the_working_directory_must_be_inside_the_workspace(root: Path, outside: Path) -> None:
    shell = ShellToolkit(_policy(root))
    (root / "door").symlink_to(outside)
    for cwd in ("..", str(outside), "door"):
        with pytest.raises(ToolError, match=r"outside the workspace|not allowed"):
            shell.run("ls", cwd=cwd)
    (root / "file").write_text("x")
    with pytest.raises(ToolError, match="not a folder"):
        shell.run("ls", cwd="file")


def test_the_command_sees_only_the_policy_environment(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_SMITH_TEST_SECRET", "leaked")
    shell = ShellToolkit(_policy(root, env={"PATH": "/usr/bin:/bin", "GREETING": "hi"}))
    out = shell.run("env")
    assert "GREETING=hi" in out
    assert "AGENT_SMITH_TEST_SECRET" not in out


def test_stdin_is_empty_so_a_reader_does_not_wait(root: Path) -> None:
    assert ShellToolkit(_policy(root)).run("cat; echo done") == "done\n\n[exit code 0]"


def test_a_timeout_kills_a_grandchild_that_ignores_sigterm(root: Path) -> None:
    shell = ShellToolkit(_policy(root, timeout=1.0))
    with pytest.raises(ToolError, match=r"timed out after 1 s; the command and its children"):
        shell.run(f"{STUBBORN} pid & wait")
    assert _dies(int((root / "pid").read_text()))


def test_a_grandchild_that_does_not_hold_the_output_is_killed_too(root: Path) -> None:
    shell = ShellToolkit(_policy(root, timeout=1.0))
    with pytest.raises(ToolError, match="timed out"):
        shell.run(f"{STUBBORN} pid > /dev/null 2>&1 & wait")
    assert _dies(int((root / "pid").read_text()))


def test_background_processes_left_behind_are_killed_when_the_command_ends(root: Path) -> None:
    os.mkfifo(root / "ready")
    shell = ShellToolkit(_policy(root))
    # The background child writes its pid into the FIFO; once the foreground
    # `cat` has read it, the shell exits, and the child would live on.
    out = shell.run(f"{STUBBORN} ready > /dev/null 2>&1 & cat ready > pid")
    assert out.endswith("[exit code 0]")
    assert _dies(int((root / "pid").read_text()))


def test_an_output_flood_is_capped_keeping_head_and_tail(root: Path) -> None:
    shell = ShellToolkit(_policy(root, max_output_bytes=1000))
    out = shell.run("echo START; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo END")
    assert out.startswith("START\n")
    assert out.endswith("END\n\n[exit code 0]")
    assert "bytes of output left out]" in out
    assert len(out) < 1200


def test_a_flood_that_never_ends_is_stopped_by_the_timeout(root: Path) -> None:
    shell = ShellToolkit(_policy(root, timeout=1.0, max_output_bytes=1000))
    with pytest.raises(ToolError, match="timed out") as raised:
        shell.run("yes")
    assert len(str(raised.value)) < 1200


def test_a_call_may_shorten_the_timeout_but_not_extend_it(root: Path) -> None:
    shell = ShellToolkit(_policy(root, timeout=1.0))
    with pytest.raises(ToolError, match="timed out after 1 s"):
        shell.run("sleep 30", timeout=60)
    with pytest.raises(ToolError, match="positive"):
        shell.run("ls", timeout=0)


def test_cancelling_the_call_stops_the_command_at_once(root: Path, context: ToolContext) -> None:
    fifo = root / "started"
    os.mkfifo(fifo)
    source = CancellationSource()
    ctx = ToolContext(source.token, 30.0, "c", context.logger, context.runtime)
    shell = ShellToolkit(_policy(root, timeout=600.0))
    errors: list[BaseException] = []

    def run() -> None:
        try:
            shell.run(f"echo go > started; {STUBBORN} pid", ctx=ctx)
        except ToolError as err:
            errors.append(err)

    thread = threading.Thread(target=run, name="test-shell")
    thread.start()
    with open(fifo) as handle:  # returns once the command is running
        assert handle.read() == "go\n"
    source.cancel()
    thread.join(WAIT)
    assert not thread.is_alive()
    assert "cancelled" in str(errors[0])


def test_a_command_that_cannot_start_is_an_error_result(root: Path, context: ToolContext) -> None:
    shell = ShellToolkit(_policy(root, shell="/no/such/shell"))
    (run_command,) = shell.tools()
    result = run_command.invoke({"command": "ls"}, context)
    assert result.is_error and "cannot start the command" in result.content


def test_an_empty_or_huge_command_is_refused(root: Path) -> None:
    shell = ShellToolkit(_policy(root))
    for command in ("", "   ", "x" * 10_001, "ls\0rm"):
        with pytest.raises(ToolError, match="1-10000 characters"):
            shell.run(command)


def test_the_tool_asks_for_approval_per_call_from_the_classified_command(root: Path) -> None:
    (run_command,) = ShellToolkit(_policy(root)).tools()
    assert run_command.options.read_only is False
    marker = run_command.options.requires_approval
    assert callable(marker)
    assert marker({"command": "ls -la"}) is False
    assert marker({"command": "echo x > notes.txt"}) is False
    assert marker({"command": "rm -rf ."}) is True
    assert marker({"command": "cat /etc/passwd"}) is True
    assert marker({"command": "ls", "cwd": "../.."}) is True
    assert marker({"command": 42}) is True


def test_writes_can_be_made_to_ask_too(root: Path) -> None:
    shell = ShellToolkit(_policy(root, approve_writes=True))
    assert shell.needs_approval({"command": "echo x > notes.txt"}) is True
    assert shell.needs_approval({"command": "ls"}) is False
