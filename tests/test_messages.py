"""Messages: strict parsing of untrusted server JSON and whole-history round trips."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_smith import (
    AssistantMessage,
    ConfigError,
    LlmResponse,
    Message,
    ParseError,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolMessage,
    UserMessage,
    message_from_openai,
    messages_from_json,
    messages_to_json,
)
from agent_smith.base.history_json import message_from_dict, message_to_dict
from agent_smith.messages import ProviderData


def reply(message: Any, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], **extra}


def call(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": "{}"},
    }
    base.update(overrides)
    return base


MALFORMED: list[tuple[str, Any, str]] = [
    ("body not an object", ["choices"], "response must be a JSON object"),
    ("missing choices", {"id": "x"}, "no choices"),
    ("empty choices", {"choices": []}, "no choices"),
    ("choice not an object", {"choices": ["hi"]}, r"choices\[0\] must be a JSON object"),
    ("message missing", {"choices": [{"finish_reason": "stop"}]}, "message must be a JSON object"),
    (
        "non-string content",
        reply({"role": "assistant", "content": 42}),
        "content must be a string or a list of parts",
    ),
    (
        "finish_reason not a string",
        {"choices": [{"message": {"content": "x"}, "finish_reason": 1}]},
        "finish_reason must be a string",
    ),
    ("tool_calls not an array", reply({"tool_calls": {"id": "c1"}}), "tool_calls must be an array"),
    ("tool call not an object", reply({"tool_calls": ["f()"]}), r"tool_calls\[0\] must be"),
    ("tool call with a numeric id", reply({"tool_calls": [call(id=7)]}), "has no string id"),
    (
        "tool call without name",
        reply({"tool_calls": [call(function={"arguments": "{}"})]}),
        "has no string name",
    ),
    (
        "tool call without function",
        reply({"tool_calls": [call(function=None)]}),
        r"function must be a JSON object",
    ),
    (
        "arguments of the wrong type",
        reply({"tool_calls": [call(function={"name": "f", "arguments": 7})]}),
        "arguments must be a string",
    ),
    (
        "reasoning not a string",
        reply({"content": "x", "reasoning_content": ["a"]}),
        "reasoning_content must be a string",
    ),
    ("usage not an object", reply({"content": "x"}, usage=[1]), "usage must be a JSON object"),
    (
        "usage count of the wrong type",
        reply({"content": "x"}, usage={"prompt_tokens": "3"}),
        "prompt_tokens must be a non-negative integer",
    ),
    (
        "negative usage count",
        reply({"content": "x"}, usage={"completion_tokens": -1}),
        "completion_tokens must be a non-negative integer",
    ),
]


@pytest.mark.parametrize(("case", "body", "message"), MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_reply_raises_parse_error(case: str, body: Any, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        LlmResponse.from_openai(body)


@pytest.mark.parametrize(
    ("case", "arguments", "message"),
    [
        ("arguments not JSON", "{oops", "arguments are not valid JSON"),
        ("arguments JSON but not an object", "[1, 2]", "must be a JSON object, got list"),
        ("arguments a JSON string", '"text"', "must be a JSON object, got str"),
    ],
)
def test_strict_arguments_raise_parse_error(case: str, arguments: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        ToolCall.from_wire("c1", "f", arguments)
    body = reply({"tool_calls": [call(function={"name": "f", "arguments": arguments})]})
    with pytest.raises(ParseError, match="arguments"):
        LlmResponse.from_openai(body, lenient_arguments=False)


def test_openai_usage_details_give_the_cached_and_the_reasoning_tokens() -> None:
    # The usage object as OpenAI's chat completions reference shows it (and llama-server
    # sends prompt_tokens_details.cached_tokens as well).
    usage = {
        "prompt_tokens": 2006,
        "completion_tokens": 300,
        "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 64, "audio_tokens": 0},
    }
    parsed = LlmResponse.from_openai(reply({"content": "hi"}, usage=usage))
    assert parsed.usage == TokenUsage(2006, 300, 2306, cache_read=1920, reasoning=64)
    broken = usage | {"completion_tokens_details": {"reasoning_tokens": "many"}}
    with pytest.raises(ParseError, match=r"completion_tokens_details\.reasoning_tokens"):
        LlmResponse.from_openai(reply({"content": "hi"}, usage=broken))


def test_lenient_arguments_are_kept_for_the_model_to_fix() -> None:
    body = reply({"tool_calls": [call(function={"name": "f", "arguments": "{oops"})]})
    parsed = LlmResponse.from_openai(body)
    assert parsed.message.tool_calls[0].invalid_arguments == "{oops"
    assert parsed.message.tool_calls[0].arguments == {}


def test_llama_server_reply_is_accepted() -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "Xk2pQ",
                            "type": "function",
                            "function": {"name": "add", "arguments": '{"a":\n 1}'},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        "timings": {"predicted_ms": 3.2},
    }
    parsed = LlmResponse.from_openai(body)
    assert parsed.finish_reason == "tool_calls"
    assert parsed.message.tool_calls == (ToolCall("Xk2pQ", "add", {"a": 1}),)
    assert parsed.usage == TokenUsage(10, 5, 15)


def test_message_from_openai_rejects_unknown_role_and_bad_tool_message() -> None:
    with pytest.raises(ParseError, match="role must be one of"):
        message_from_openai({"role": "wizard", "content": "x"})
    with pytest.raises(ParseError, match="role must be one of"):
        message_from_openai({"role": ["user"], "content": "x"})
    with pytest.raises(ParseError, match="tool_call_id"):
        message_from_openai({"role": "tool", "content": "x"})


def test_whole_history_round_trips_through_json() -> None:
    history = [
        SystemMessage("be brief"),
        UserMessage("add 1 and 2 — ünïcode 🌍"),
        AssistantMessage(
            "",
            (ToolCall("c1", "add", {"a": 1, "b": 2}), ToolCall("c2", "f", {}, "{bad")),
            TokenUsage(10, 5, 15, cache_read=4, reasoning=2),
            "thinking",
        ),
        ToolMessage("c1", "add", "3"),
        ToolMessage("c2", "f", "arguments were not JSON", is_error=True),
        AssistantMessage("It is 3."),
    ]
    text = messages_to_json(history)
    assert messages_from_json(text) == history
    assert messages_to_json(messages_from_json(text)) == text


def test_json_form_is_the_dataclass_fields_after_the_role() -> None:
    history: list[Message] = [
        SystemMessage("be brief"),
        UserMessage("hi"),
        AssistantMessage(
            "", (ToolCall("c1", "add", {"a": [1, {"b": 2}]}),), TokenUsage(1, 2, 3), "r"
        ),
        AssistantMessage("plain"),
        ToolMessage("c1", "add", "3", is_error=True),
    ]
    for message in history:
        assert message_to_dict(message) == {"role": message.role, **message.to_dict()}
        assert message_from_dict(message_to_dict(message)) == message


def test_only_messages_have_a_json_form() -> None:
    with pytest.raises(ConfigError, match="not a message: dict"):
        messages_to_json([{"role": "user", "content": "hi"}])  # type: ignore[list-item]


def test_missing_optional_fields_take_their_defaults() -> None:
    assert messages_from_json(
        '[{"role": "assistant"}, {"role": "tool", "tool_call_id": "c",'
        ' "name": "f", "content": "x"}]'
    ) == [
        AssistantMessage(),
        ToolMessage("c", "f", "x"),
    ]


def test_wire_form_round_trips_and_keeps_internal_fields_off_the_wire() -> None:
    history = [
        UserMessage("hi"),
        AssistantMessage("", (ToolCall("c1", "add", {"a": 1}),), reasoning="secret thoughts"),
        ToolMessage("c1", "add", "boom", is_error=True),
    ]
    wire = [m.to_openai() for m in history]
    assert "reasoning_content" not in wire[1]
    assert "is_error" not in wire[2]
    assert [message_from_openai(w) for w in wire] == [
        UserMessage("hi"),
        AssistantMessage("", (ToolCall("c1", "add", {"a": 1}),)),
        ToolMessage("c1", "", "boom"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "history is not valid JSON"),
        ('{"role": "user"}', "history must be a JSON array"),
        ('[{"role": "alien", "content": "x"}]', "unknown role"),
        ('[{"role": ["user"], "content": "x"}]', "unknown role"),
        ('[{"role": "user"}]', r"history\[0\] is not a valid user message"),
        ('[{"role": "user", "content": 5}]', "'content' must be str, got int"),
        (
            '[{"role": "tool", "tool_call_id": "c1", "name": "f", "content": "x", "is_error": 1}]',
            "'is_error' must be bool",
        ),
        ('[{"role": "assistant", "tool_calls": {}}]', "'tool_calls' must be list"),
        (
            '[{"role": "assistant", "tool_calls": [{"id": "a", "name": "f", "arguments": "x"}]}]',
            r"history\[0\]\.tool_calls\[0\] is not a valid tool call: 'arguments' must be dict",
        ),
        ('[{"role": "assistant", "usage": {"total": true}}]', "'total' must be int, got bool"),
    ],
)
def test_corrupt_history_raises_parse_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        messages_from_json(text)


def test_provider_data_round_trips_and_is_replayed_only_to_its_provider() -> None:
    signed = {"blocks": [{"type": "thinking", "thinking": "hmm", "signature": "c2ln"}]}
    turn = AssistantMessage(
        "", (ToolCall("c1", "add", {"a": 1}),), provider_data=ProviderData("anthropic", signed)
    )
    loaded = messages_from_json(messages_to_json([UserMessage("hi"), turn]))
    assert loaded[1] == turn
    assert turn.replay_for("anthropic") == signed
    assert turn.replay_for("gemini") is None
    assert "provider_data" not in json.dumps(turn.to_openai())  # never on another dialect's wire


def test_bad_provider_data_in_a_stored_history_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match=r"history\[0\]\.provider_data.*'provider'"):
        messages_from_json('[{"role": "assistant", "provider_data": {"data": 1}}]')
