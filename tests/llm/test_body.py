"""The request body and headers on the wire, pinned exactly (seed §8.2)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import responses

from agent_smith import (
    ConfigError,
    LlmClient,
    LlmRequest,
    SamplingParams,
    SystemMessage,
    TokenUsage,
    ToolSchema,
    UserMessage,
)

URL = "http://llm.test:8080/v1/chat/completions"
REPLY = {
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}
MESSAGES = (SystemMessage("be brief"), UserMessage("hi"))
WIRE_MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
ADD = ToolSchema("add", "Add numbers", {"type": "object", "properties": {"a": {"type": "integer"}}})


def sent(client: LlmClient, request: LlmRequest) -> dict[str, Any]:
    with responses.RequestsMock() as mock:
        mock.post(URL, json=REPLY)
        client.complete(request)
        body = mock.calls[0].request.body
    assert isinstance(body, bytes)
    result: dict[str, Any] = json.loads(body)
    return result


def test_minimal_body() -> None:
    body = sent(LlmClient("http://llm.test:8080", "m"), LlmRequest(MESSAGES))
    assert body == {"model": "m", "messages": WIRE_MESSAGES, "stream": False}


def test_empty_model_is_omitted() -> None:
    body = sent(LlmClient("http://llm.test:8080"), LlmRequest(MESSAGES))
    assert body == {"messages": WIRE_MESSAGES, "stream": False}


def test_default_sampling_is_sent() -> None:
    defaults = SamplingParams(temperature=0.2, top_p=0.95, max_tokens=64, stop=("</s>",))
    client = LlmClient("http://llm.test:8080", "m", default_sampling=defaults)
    assert sent(client, LlmRequest(MESSAGES)) == {
        "model": "m",
        "messages": WIRE_MESSAGES,
        "stream": False,
        "temperature": 0.2,
        "top_p": 0.95,
        "max_tokens": 64,
        "stop": ["</s>"],
    }


def test_request_sampling_overrides_only_the_fields_it_sets() -> None:
    defaults = SamplingParams(temperature=0.2, top_p=0.95, max_tokens=64, extra={"seed": 1})
    client = LlmClient("http://llm.test:8080", "m", default_sampling=defaults)
    request = LlmRequest(MESSAGES, sampling=SamplingParams(temperature=0.0, extra={"top_k": 5}))
    assert sent(client, request) == {
        "model": "m",
        "messages": WIRE_MESSAGES,
        "stream": False,
        "temperature": 0.0,
        "top_p": 0.95,
        "max_tokens": 64,
        "seed": 1,
        "top_k": 5,
    }


def test_extra_is_merged_last_over_named_fields() -> None:
    sampling = SamplingParams(temperature=0.5, extra={"temperature": 0.9, "cache_prompt": True})
    body = sent(LlmClient("http://llm.test:8080", "m"), LlmRequest(MESSAGES, sampling=sampling))
    assert body == {
        "model": "m",
        "messages": WIRE_MESSAGES,
        "stream": False,
        "temperature": 0.9,
        "cache_prompt": True,
    }


@pytest.mark.parametrize("key", ["model", "messages", "tools", "tool_choice", "stream"])
def test_reserved_key_in_extra_is_a_config_error(key: str) -> None:
    client = LlmClient("http://llm.test:8080", "m")
    request = LlmRequest(MESSAGES, sampling=SamplingParams(extra={key: 1}))
    with responses.RequestsMock() as mock:
        with pytest.raises(ConfigError, match=key):
            client.complete(request)
        assert not mock.calls


def test_reserved_key_in_default_extra_is_a_config_error() -> None:
    client = LlmClient(
        "http://llm.test:8080", default_sampling=SamplingParams(extra={"stream": True})
    )
    with pytest.raises(ConfigError, match="stream"):
        client.complete(LlmRequest(MESSAGES))


def test_response_format_is_passed_through() -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    request = LlmRequest(MESSAGES, sampling=SamplingParams(response_format=fmt))
    body = sent(LlmClient("http://llm.test:8080", "m"), request)
    assert body == {
        "model": "m",
        "messages": WIRE_MESSAGES,
        "stream": False,
        "response_format": fmt,
    }


def test_tools_are_sent_with_tool_choice_auto() -> None:
    body = sent(LlmClient("http://llm.test:8080", "m"), LlmRequest(MESSAGES, tools=(ADD,)))
    assert body == {
        "model": "m",
        "messages": WIRE_MESSAGES,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "add",
                    "description": "Add numbers",
                    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
                },
            }
        ],
        "tool_choice": "auto",
        "stream": False,
    }


def test_explicit_tool_choice_is_sent() -> None:
    request = LlmRequest(MESSAGES, tools=(ADD,), tool_choice="required")
    assert sent(LlmClient("http://llm.test:8080", "m"), request)["tool_choice"] == "required"


def test_tool_choice_without_tools_is_omitted() -> None:
    request = LlmRequest(MESSAGES, tool_choice="required")
    body = sent(LlmClient("http://llm.test:8080", "m"), request)
    assert body == {"model": "m", "messages": WIRE_MESSAGES, "stream": False}


def test_streaming_asks_for_usage() -> None:
    frames = (
        b'data: {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}'
        b"\n\ndata: [DONE]\n\n"
    )
    client = LlmClient("http://llm.test:8080", "m")
    with responses.RequestsMock() as mock:
        mock.post(URL, body=frames, content_type="text/event-stream")
        list(client.stream(LlmRequest(MESSAGES)))
        body = json.loads(mock.calls[0].request.body)
        headers = mock.calls[0].request.headers
    assert body == {
        "model": "m",
        "messages": WIRE_MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert headers["Accept"] == "text/event-stream"


def test_bearer_header_only_with_a_key() -> None:
    with responses.RequestsMock() as mock:
        mock.post(URL, json=REPLY)
        mock.post(URL, json=REPLY)
        LlmClient("http://llm.test:8080", api_key="sk-123").complete(LlmRequest(MESSAGES))
        LlmClient("http://llm.test:8080").complete(LlmRequest(MESSAGES))
        with_key, without = (call.request.headers for call in mock.calls)
    assert with_key["Authorization"] == "Bearer sk-123"
    assert with_key["Content-Type"] == "application/json"
    assert "Authorization" not in without


def test_usage_is_parsed() -> None:
    with responses.RequestsMock() as mock:
        mock.post(URL, json=REPLY)
        response = LlmClient("http://llm.test:8080").complete(LlmRequest(MESSAGES))
    assert response.usage == TokenUsage(3, 1, 4)
    assert response.message.content == "ok"
    assert response.finish_reason == "stop"
