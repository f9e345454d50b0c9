"""The demo CLI speaking a native provider: ``--provider anthropic`` against its wire fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_cli_e2e import run_cli
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.provider_wire import speak, tool_outputs


@pytest.mark.parametrize("provider", ["anthropic", "gemini", "ollama", "responses", "bedrock"])
def test_the_cli_runs_a_tool_round_on_a_native_provider(provider: str, tmp_path: Path) -> None:
    with ScriptedLlmServer() as server:
        speak(
            server,
            provider,
            Calls(("calculator", {"expression": "6 * 7"})),
            Text("It is 42."),
        )
        done = run_cli(
            "--provider",
            provider,
            "-e",
            server.url,
            "-m",
            "wire-model",
            "-k",
            "secret-key-123",
            "--no-default-mcp",
            stdin="What is 6 * 7?\n/exit\n",
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stderr
    assert "[tool] calculator -> 42" in done.stderr.splitlines()
    assert done.stdout == "It is 42.\n"
    assert tool_outputs(provider, server.requests[1]) == ["42"]
    assert "secret-key-123" not in done.stdout + done.stderr
