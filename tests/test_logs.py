"""Logging per DESIGN §14: named loggers, TRACE level, redaction, safe hooks."""

from __future__ import annotations

import json
import logging

import pytest

import agent_smith
from agent_smith.logs import REDACTED, TRACE, invoke_hook, redact, redact_headers, trace


def test_library_logger_has_only_a_null_handler() -> None:
    handlers = logging.getLogger("agent_smith").handlers
    assert handlers and all(isinstance(h, logging.NullHandler) for h in handlers)
    assert logging.getLogger("agent_smith").level == logging.NOTSET
    assert agent_smith.TRACE == TRACE


def test_trace_is_below_debug_and_named() -> None:
    assert TRACE < logging.DEBUG
    assert logging.getLevelName(TRACE) == "TRACE"


@pytest.mark.parametrize(
    "header",
    [
        "Authorization",
        "authorization",
        "X-Api-Key",
        "Api-Key",
        "x-goog-api-key",
        "X-Amz-Security-Token",
        "Cookie",
        "Set-Cookie",
    ],
)
def test_secret_headers_are_redacted(header: str) -> None:
    shown = redact_headers({header: "Bearer sk-1", "Content-Type": "application/json"})
    assert shown == {header: REDACTED, "Content-Type": "application/json"}


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "apiKey",
        "API-KEY",
        "access_token",
        "accessToken",
        "bearer",
        "Password",
        "refresh_token",
        "id_token",
        "subject_token",
        "client_secret",
        "client_assertion",
        "code_verifier",
        "private_key_pem",
    ],
)
def test_secret_json_fields_are_redacted_at_any_depth(key: str) -> None:
    body = {"outer": [{"inner": {key: "s3cret", "keep": 1}}]}
    assert redact(body) == {"outer": [{"inner": {key: REDACTED, "keep": 1}}]}
    assert "s3cret" not in redact(json.dumps(body))


def test_non_json_text_is_left_alone() -> None:
    assert redact("plain words") == "plain words"


def test_trace_costs_nothing_when_disabled(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("agent_smith.test")
    with caplog.at_level(logging.DEBUG, logger="agent_smith"):
        trace(logger, "body", {"password": "x"})
    assert caplog.records == []


def test_invoke_hook_logs_and_swallows_hook_errors(caplog: pytest.LogCaptureFixture) -> None:
    def broken(_: object) -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.WARNING, logger="agent_smith"):
        invoke_hook(broken, 1, name="on_test")
    assert "on_test raised" in caplog.text
