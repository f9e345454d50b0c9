"""Fuzzing the server-side tool decoding of each native reply reader: typed errors only.

Replies built around the blocks (parts, items, frames, ``executed_tools``)
of tools a provider runs itself, with arbitrary values where the provider puts its own: every
reader answers with a response or an AgentSmithError, nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agent_smith import (
    AgentSmithError,
    AnthropicClient,
    AssistantMessage,
    LlmRequest,
    LlmResponse,
    ProviderData,
    UserMessage,
)
from agent_smith.llm.anthropic_reply import AnthropicStreamDecoder, parse_message
from agent_smith.llm.gemini_reply import GeminiStreamDecoder
from agent_smith.llm.gemini_reply import parse_response as parse_gemini
from agent_smith.llm.responses_reply import ResponsesStreamDecoder
from agent_smith.llm.responses_reply import parse_response as parse_responses
from agent_smith.llm.stream_decoder import StreamDecoder
from tests.support.aws_eventstream import event
from tests.support.fuzz import QUICK, json_objects_with, json_values

_ANTHROPIC_BLOCKS = ["server_tool_use", "mcp_tool_use", "web_search_tool_result", "text"]
_RESPONSES_ITEMS = ["web_search_call", "file_search_call", "code_interpreter_call", "mcp_call"]


def typed_only(read: Callable[[], object]) -> None:
    try:
        result = read()
        if isinstance(result, Iterable):
            for _event in result:
                pass
    except AgentSmithError:
        pass  # a typed error is a fine answer to garbage


def _typed(kinds: list[str], keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects whose ``type`` is one of ``kinds``, with ``keys`` (and others) of any value."""
    return st.builds(
        lambda kind, rest: {**rest, "type": kind}, st.sampled_from(kinds), json_objects_with(keys)
    )


@QUICK
@given(
    st.lists(
        _typed(_ANTHROPIC_BLOCKS, ["id", "name", "input", "tool_use_id", "content", "text"]),
        max_size=4,
    ),
    json_values,
)
def test_anthropic_server_tool_blocks_raise_only_typed_errors(
    blocks: list[dict[str, Any]], stop: Any
) -> None:
    typed_only(lambda: parse_message({"content": blocks, "stop_reason": stop}))


@QUICK
@given(
    json_objects_with(["id", "name", "input"]),
    st.lists(json_values, max_size=4),
    json_objects_with(["tool_use_id", "content"]),
)
def test_anthropic_streamed_server_tool_raises_only_typed_errors(
    start: dict[str, Any], fragments: list[Any], result: dict[str, Any]
) -> None:
    frames = [
        {"type": "message_start", "message": {"id": "m", "model": "x"}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {**start, "type": "server_tool_use"},
        },
        *(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": f},
            }
            for f in fragments
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"tool_use_id": start.get("id"), **result, "type": "x_tool_result"},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "message_stop"},
    ]
    body = "".join(f"data: {json.dumps(f)}\n\n" for f in frames).encode()
    typed_only(lambda: AnthropicStreamDecoder(endpoint="http://fuzz").events([body]))


def _bedrock_blocks() -> st.SearchStrategy[dict[str, Any]]:
    use = st.builds(
        lambda rest: {**rest, "type": "server_tool_use"},
        json_objects_with(["toolUseId", "name", "input"]),
    )
    result = json_objects_with(["toolUseId", "content", "status", "type"])
    return st.one_of(
        st.builds(lambda u: {"toolUse": u}, use),
        st.builds(lambda r: {"toolResult": r}, result),
        st.builds(lambda v: {"toolResult": v}, json_values),
    )


@QUICK
@given(st.lists(_bedrock_blocks(), max_size=4), json_values)
@example([{"toolResult": {"toolUseId": []}}], None)  # found: an unhashable id
@example([{"toolUse": {"name": "x", "toolUseId": []}}, {"toolResult": {"toolUseId": "t"}}], None)
def test_bedrock_system_tool_blocks_raise_only_typed_errors(
    blocks: list[dict[str, Any]], stop: Any
) -> None:
    pytest.importorskip("botocore")
    from agent_smith.llm.bedrock_reply import parse_converse

    body = {"output": {"message": {"content": blocks}}, "stopReason": stop}
    typed_only(lambda: parse_converse(body))


@QUICK
@given(
    json_objects_with(["toolUseId", "name", "type", "status"]),
    st.sampled_from(["toolUse", "toolResult"]),
    st.lists(json_values, max_size=3),
)
def test_bedrock_streamed_system_tool_frames_raise_only_typed_errors(
    start: dict[str, Any], kind: str, deltas: list[Any]
) -> None:
    pytest.importorskip("botocore")
    from agent_smith.llm.bedrock_reply import BedrockStreamDecoder

    frames = [
        event("messageStart", {"role": "assistant"}),
        event("contentBlockStart", {"contentBlockIndex": 0, "start": {kind: start}}),
        *(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {kind: d}}) for d in deltas),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "end_turn"}),
        event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 1}}),
    ]
    typed_only(lambda: BedrockStreamDecoder(endpoint="http://fuzz").events(frames))


_GEMINI_PARTS = st.one_of(
    st.builds(lambda v: {"executableCode": v}, json_values),
    st.builds(lambda v: {"codeExecutionResult": v}, json_values),
    json_objects_with(["text", "thoughtSignature", "executableCode", "codeExecutionResult"]),
)


@QUICK
@given(
    st.lists(_GEMINI_PARTS, max_size=4),
    json_values | json_objects_with(["webSearchQueries", "groundingChunks", "searchEntryPoint"]),
    st.booleans(),
)
@example(parts=[{"text": None}], grounding={}, streamed=False)  # found: "text": null
def test_gemini_code_execution_and_grounding_raise_only_typed_errors(
    parts: list[Any], grounding: Any, streamed: bool
) -> None:
    chunk = {
        "candidates": [
            {"content": {"parts": parts}, "groundingMetadata": grounding, "finishReason": "STOP"}
        ]
    }
    if streamed:
        body = f"data: {json.dumps(chunk)}\r\n\r\n".encode()
        typed_only(lambda: GeminiStreamDecoder(endpoint="http://fuzz").events([body]))
    else:
        typed_only(lambda: parse_gemini(chunk, endpoint="http://fuzz"))


@QUICK
@given(
    st.lists(
        _typed(_RESPONSES_ITEMS, ["id", "name", "action", "queries", "results", "code", "outputs"]),
        max_size=4,
    )
)
def test_responses_server_tool_items_raise_only_typed_errors(items: list[dict[str, Any]]) -> None:
    typed_only(lambda: parse_responses({"output": items, "status": "completed"}, endpoint="x"))


@QUICK
@given(
    st.lists(json_objects_with(["delta", "refusal", "item_id"]), max_size=4),
    st.lists(
        _typed(_RESPONSES_ITEMS, ["id", "name", "action", "queries", "results", "code"]), max_size=3
    ),
)
def test_responses_streamed_refusal_and_server_items_raise_only_typed_errors(
    deltas: list[dict[str, Any]], items: list[dict[str, Any]]
) -> None:
    frames = [{**d, "type": "response.refusal.delta"} for d in deltas]
    frames += [{"type": "response.output_item.done", "item": item} for item in items]
    frames.append({"type": "response.completed", "response": {"output": [], "status": "completed"}})
    body = "".join(f"data: {json.dumps(f)}\n\n" for f in frames).encode()
    typed_only(lambda: ResponsesStreamDecoder(endpoint="http://fuzz").events([body]))


@QUICK
@given(
    st.lists(json_values | json_objects_with(["index", "type", "arguments", "output"]), max_size=4)
)
def test_executed_tools_of_an_openai_compatible_reply_raise_only_typed_errors(
    ran: list[Any],
) -> None:
    message = {"role": "assistant", "content": "ok", "executed_tools": ran}
    body = {"choices": [{"message": message, "finish_reason": "stop"}]}
    typed_only(lambda: LlmResponse.from_openai(body))
    delta = {"choices": [{"delta": {"executed_tools": ran}, "finish_reason": "stop"}]}
    frames = f"data: {json.dumps(delta)}\n\ndata: [DONE]\n\n".encode()
    typed_only(lambda: StreamDecoder(endpoint="http://fuzz").events([frames]))


@QUICK
@given(json_values | json_objects_with(["id", "expires_at"]))
def test_a_stored_anthropic_sandbox_of_any_shape_never_breaks_a_request(held: Any) -> None:
    turn = AssistantMessage("ok", provider_data=ProviderData("anthropic", {"container": held}))
    body = AnthropicClient("http://fuzz", "m").body(
        LlmRequest((UserMessage("a"), turn, UserMessage("b"))), stream=False
    )
    assert body.get("container") is None or isinstance(body["container"], str)
