from __future__ import annotations

import pytest

import agent_smith as a


@pytest.mark.parametrize(
    ("error", "fields"),
    [
        (a.ParseError("bad frame", offset=7), {"offset": 7}),
        (a.ToolError("boom", tool_name="calc", retryable=True), {"tool_name": "calc"}),
        (a.McpError("nope", server="fs", rpc_code=-32601), {"server": "fs", "rpc_code": -32601}),
        (a.McpProtocolError("v", server="fs"), {"server": "fs", "rpc_code": None}),
        (a.TransportError("x", operation="post", endpoint_or_server="h"), {"operation": "post"}),
        (
            a.TransportError("x", operation="post", endpoint_or_server="h", http_status=405),
            {"http_status": 405},
        ),
        (
            a.McpAuthError("x", server="web", http_status=400, oauth_error="invalid_grant"),
            {"server": "web", "http_status": 400, "oauth_error": "invalid_grant"},
        ),
        (a.LlmApiError("x", http_status=401, body_excerpt="{}"), {"http_status": 401}),
        (a.AgentTimeoutError("t", operation="tool", budget=1.5), {"budget": 1.5}),
        (a.CancelledError("c", operation="send"), {"operation": "send"}),
        (a.SkillError("s", skill_name="web"), {"skill_name": "web"}),
        (a.AgentStopped("s", condition="deadline"), {"condition": "deadline"}),
        (a.TruncatedReplyError("cut"), {"finish_reason": "length"}),
        (a.SessionError("bad", store="chats.db"), {"store": "chats.db"}),
        (a.ResultsError("bad", path="out.jsonl"), {"path": "out.jsonl"}),
    ],
)
def test_every_error_is_an_agent_smith_error_with_its_fields(
    error: a.AgentSmithError, fields: dict[str, object]
) -> None:
    assert isinstance(error, a.AgentSmithError)
    for name, value in fields.items():
        assert getattr(error, name) == value
    assert str(error) == error.message


def test_timeout_error_is_also_a_builtin_timeout() -> None:
    with pytest.raises(TimeoutError):
        raise a.AgentTimeoutError("slow", operation="tool", budget=1.0)


def test_truncated_reply_is_a_parse_error() -> None:
    assert issubclass(a.TruncatedReplyError, a.ParseError)
