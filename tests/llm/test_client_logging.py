"""Wire logging at TRACE never shows credentials (seed §16.4)."""

from __future__ import annotations

import logging

import pytest

from agent_smith import TRACE, LlmClient, LlmRequest, SamplingParams, UserMessage
from tests.support.llm_server import ScriptedLlmServer

SECRETS = ("sk-live-KEY-123", "tok-ACCESS-456", "hunter2-PASSWORD")


def test_trace_logging_never_shows_secrets(
    llm_server: ScriptedLlmServer, caplog: pytest.LogCaptureFixture
) -> None:
    extra = {"api_key": SECRETS[0], "access_token": SECRETS[1], "password": SECRETS[2]}
    request = LlmRequest((UserMessage("hi"),), sampling=SamplingParams(extra=extra))
    client = LlmClient(llm_server.url, "m", api_key=SECRETS[0])
    with caplog.at_level(TRACE, logger="agent_smith"):
        client.complete(request)
        list(client.stream(request))
    # The secrets did go over the wire (so the test would catch a leak) ...
    assert llm_server.headers[0]["Authorization"] == f"Bearer {SECRETS[0]}"
    assert llm_server.requests[0]["password"] == SECRETS[2]
    # ... and the log is full of wire bodies, but none of the secrets.
    wire = [r for r in caplog.records if r.levelno == TRACE]
    assert any("request body" in r.getMessage() for r in wire)
    assert any("sse frame" in r.getMessage() for r in wire)
    assert any("Authorization" in r.getMessage() for r in wire)
    text = "\n".join(r.getMessage() for r in caplog.records)
    for secret in SECRETS:
        assert secret not in text
    assert all(r.name.startswith("agent_smith.llm") for r in caplog.records)


def test_client_logs_nothing_without_a_configured_level(
    llm_server: ScriptedLlmServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="agent_smith"):
        LlmClient(llm_server.url).complete(LlmRequest((UserMessage("hi"),)))
    assert caplog.records == []
