"""The Vercel AI SDK UI message stream: agent events -> chunks, request bodies, stored history."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_smith import AudioPart, DocumentPart, ImagePart, ParseError, TextPart
from agent_smith.agent.approvals import ApprovalRequest, ApprovalRequested, Decision
from agent_smith.agent.events import AssistantTurn, FinalAnswer, ToolCallRequested, ToolResultReady
from agent_smith.agent.paused import PausedTurn
from agent_smith.llm.events import ReasoningDelta, ServerToolUsed, TokenDelta, ToolCallStarted
from agent_smith.messages import AssistantMessage, TokenUsage, ToolCall, ToolMessage, UserMessage
from agent_smith.tools.dispatch import error_content
from agent_smith.web.stream import TurnFailed, TurnPaused, WebEvent
from agent_smith.web.vercel import UiMessageStream, read_chat_request, ui_messages
from tests.support.media import PNG, WAV, b64

CALL = ToolCall("call_1", "get_weather", {"city": "Paris"})
USAGE = TokenUsage(12, 3, 15)


def chunks(events: list[WebEvent], *, message_id: str | None = "m1") -> list[Any]:
    mapper = UiMessageStream(message_id=message_id)
    frames = [*mapper.begin()]
    for event in events:
        frames += mapper.event(event)
    frames += mapper.end()
    out = []
    for frame in frames:
        assert frame.startswith(b"data: ") and frame.endswith(b"\n\n")
        data = frame[6:-2].decode()
        out.append(data if data == "[DONE]" else json.loads(data))
    return out


def test_a_tool_the_provider_ran_is_a_provider_executed_tool_part() -> None:
    used = ServerToolUsed("web_search", "srvtoolu_1", {"query": "news"}, ({"url": "u"},))
    reply = AssistantMessage("Found.", usage=USAGE)
    got = chunks([TokenDelta("Found."), used, AssistantTurn(reply), FinalAnswer(reply)])
    assert got[1:7] == [
        {"type": "start-step"},
        {"type": "text-start", "id": "text-1"},
        {"type": "text-delta", "id": "text-1", "delta": "Found."},
        {"type": "text-end", "id": "text-1"},
        {
            "type": "tool-input-start",
            "toolCallId": "srvtoolu_1",
            "toolName": "web_search",
            "dynamic": True,
        },
        {
            "type": "tool-input-available",
            "toolCallId": "srvtoolu_1",
            "toolName": "web_search",
            "input": {"query": "news"},
            "dynamic": True,
            "providerExecuted": True,
        },
    ]
    assert got[7] == {
        "type": "tool-output-available",
        "toolCallId": "srvtoolu_1",
        "output": [{"url": "u"}],
        "dynamic": True,
        "providerExecuted": True,
    }
    assert {"type": "finish", "finishReason": "stop"}.items() <= got[-2].items()


def test_a_streamed_turn_with_a_tool_call_maps_to_steps_and_parts() -> None:
    reply = AssistantMessage("Sunny.", usage=USAGE)
    got = chunks(
        [
            ToolCallStarted("call_1", "get_weather", 0),
            AssistantTurn(AssistantMessage("", [CALL])),
            ToolCallRequested(CALL),
            ToolResultReady(ToolMessage("call_1", "get_weather", "Sunny in Paris")),
            ReasoningDelta("hm"),
            TokenDelta("Sun"),
            TokenDelta("ny."),
            AssistantTurn(reply),
            FinalAnswer(reply),
        ]
    )
    assert got == [
        {"type": "start", "messageId": "m1"},
        {"type": "start-step"},
        {
            "type": "tool-input-start",
            "toolCallId": "call_1",
            "toolName": "get_weather",
            "dynamic": True,
        },
        {
            "type": "tool-input-available",
            "toolCallId": "call_1",
            "toolName": "get_weather",
            "input": {"city": "Paris"},
            "dynamic": True,
        },
        {
            "type": "tool-output-available",
            "toolCallId": "call_1",
            "output": "Sunny in Paris",
            "dynamic": True,
        },
        {"type": "finish-step"},
        {"type": "start-step"},
        {"type": "reasoning-start", "id": "reasoning-1"},
        {"type": "reasoning-delta", "id": "reasoning-1", "delta": "hm"},
        {"type": "reasoning-end", "id": "reasoning-1"},
        {"type": "text-start", "id": "text-2"},
        {"type": "text-delta", "id": "text-2", "delta": "Sun"},
        {"type": "text-delta", "id": "text-2", "delta": "ny."},
        {"type": "text-end", "id": "text-2"},
        {"type": "finish-step"},
        {
            "type": "finish",
            "finishReason": "stop",
            "messageMetadata": {"usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15}},
        },
        "[DONE]",
    ]


def test_a_reply_that_was_not_streamed_is_sent_whole() -> None:
    reply = AssistantMessage("All done.", reasoning="think")
    got = chunks([AssistantTurn(reply), FinalAnswer(reply)])
    kinds = [c["type"] for c in got[:-1]]
    assert kinds[:8] == [
        "start",
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
    ]
    assert got[6]["delta"] == "All done."


def test_an_approval_request_and_a_pause_end_the_message_waiting() -> None:
    call = ToolCall("call_2", "save_note", {"text": "x"})
    request = ApprovalRequest(call)
    got = chunks(
        [
            AssistantTurn(AssistantMessage("", [call])),
            ToolCallRequested(call),
            ApprovalRequested(request),
            TurnPaused((request,), USAGE),
        ]
    )
    assert {"type": "tool-approval-request", "approvalId": "call_2", "toolCallId": "call_2"} in got
    assert got[-2] == {
        "type": "finish",
        "finishReason": "tool-calls",
        "messageMetadata": {
            "usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15},
            "paused": True,
        },
    }


def test_a_resumed_turn_confirms_its_decisions_then_maps_errors_and_denials() -> None:
    failed = ToolMessage("c1", "t", error_content("boom"), is_error=True)
    denied = ToolMessage("c2", "t", error_content("denied: no", denied=True), is_error=True)
    mapper = UiMessageStream(
        message_id=None, decisions={"c1": Decision.approve(), "c2": Decision.deny("no")}
    )
    frames = (
        mapper.begin()
        + mapper.event(ToolResultReady(failed))
        + mapper.event(ToolResultReady(denied))
    )
    got = [json.loads(frame[6:-2]) for frame in frames]
    assert got == [
        {"type": "start"},  # a resumed turn continues the client's message
        {"type": "tool-approval-response", "approvalId": "c1", "approved": True},
        {"type": "tool-approval-response", "approvalId": "c2", "approved": False, "reason": "no"},
        {"type": "tool-output-error", "toolCallId": "c1", "errorText": "boom"},
        {"type": "tool-output-denied", "toolCallId": "c2"},
    ]


def test_an_error_closes_open_parts_then_reports() -> None:
    got = chunks([TokenDelta("Hal"), TurnFailed("the server went away", "TransportError")])
    assert [c["type"] for c in got[-3:-1]] == ["text-end", "error"]
    assert got[-1] == "[DONE]"
    assert got[-2]["errorText"] == "the server went away"


def user(text: str) -> dict[str, Any]:
    return {"id": "u", "role": "user", "parts": [{"type": "text", "text": text}]}


def test_reads_the_last_user_message_only() -> None:
    ask = read_chat_request({"id": "c", "messages": [user("old"), user("new")]})
    assert (ask.conversation, ask.content, dict(ask.decisions)) == ("c", "new", {})


def test_reads_approval_responses_as_decisions() -> None:
    parts = [
        {"type": "step-start"},
        {"type": "dynamic-tool", "toolCallId": "a", "state": "approval-responded",
         "approval": {"id": "a", "approved": True}},
        {"type": "tool-save", "toolCallId": "b", "state": "approval-responded",
         "approval": {"id": "b", "approved": False, "reason": "no"}},
        {"type": "dynamic-tool", "toolCallId": "c", "state": "output-available"},
    ]  # fmt: skip
    ask = read_chat_request({"id": "c", "messages": [{"role": "assistant", "parts": parts}]})
    assert ask.content is None
    assert dict(ask.decisions) == {"a": Decision.approve(), "b": Decision.deny("no")}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "must be a JSON object"),
        ({"messages": [user("x")]}, "'id'"),
        ({"id": "c", "messages": "x"}, "'messages'"),
        ({"id": "c", "messages": [{"role": "user"}]}, "'parts' list"),
        ({"id": "c", "messages": [user("  ")]}, "no text and no file"),
        ({"id": "c", "messages": [{"role": "assistant", "parts": []}]}, "answers no approval"),
        (
            {"id": "c", "messages": [{"role": "assistant", "parts": [
                {"type": "dynamic-tool", "toolCallId": "a", "state": "approval-responded"}]}]},
            "approval.approved",
        ),
        ({"id": "c", "messages": [{"role": "system", "parts": []}]}, "not 'system'"),
        ({"id": "c", "messages": [user("x")], "trigger": "regenerate-message"}, "regenerating"),
    ],
)  # fmt: skip
def test_malformed_requests_raise_parse_error_saying_why(body: object, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read_chat_request(body)


def test_a_stored_history_becomes_ui_messages() -> None:
    save = ToolCall("call_9", "save_note", {"text": "x"})
    history = [
        UserMessage("Weather?"),
        AssistantMessage("", [CALL], usage=TokenUsage(5, 1, 6)),
        ToolMessage("call_1", "get_weather", "Sunny"),
        AssistantMessage("Sunny.", reasoning="r", usage=TokenUsage(7, 2, 9, 4, reasoning=1)),
        UserMessage("Save x"),
        AssistantMessage("", [save]),
    ]
    paused = PausedTurn("agent", ("call_9",), (ApprovalRequest(save),))
    got = ui_messages(history, paused)
    assert [(m["id"], m["role"]) for m in got] == [
        ("m0", "user"),
        ("m1", "assistant"),
        ("m4", "user"),
        ("m5", "assistant"),
    ]
    assert got[1]["parts"] == [
        {"type": "step-start"},
        {
            "type": "dynamic-tool",
            "toolName": "get_weather",
            "toolCallId": "call_1",
            "state": "output-available",
            "input": {"city": "Paris"},
            "output": "Sunny",
        },
        {"type": "step-start"},
        {"type": "reasoning", "text": "r", "state": "done"},
        {"type": "text", "text": "Sunny.", "state": "done"},
    ]
    assert got[1]["metadata"]["usage"] == {
        "inputTokens": 12,
        "outputTokens": 3,
        "totalTokens": 15,
        "reasoningTokens": 1,  # the AI SDK's optional counts, when the server gave them
        "cachedInputTokens": 4,
    }
    waiting = got[3]["parts"][1]
    assert (waiting["state"], waiting["approval"]) == ("approval-requested", {"id": "call_9"})


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{b64(data)}"


def test_files_in_the_user_message_become_parts_in_order() -> None:
    parts = [
        {"type": "file", "mediaType": "image/png", "filename": "red.png",
         "url": data_url("image/png", PNG)},
        {"type": "file", "mediaType": "application/pdf", "url": "https://x.test/doc.pdf"},
        {"type": "text", "text": "What are these?"},
    ]  # fmt: skip
    ask = read_chat_request({"id": "c", "messages": [{"role": "user", "parts": parts}]})
    assert ask.content == (
        ImagePart("image/png", data=PNG, name="red.png"),
        DocumentPart("application/pdf", url="https://x.test/doc.pdf"),
        TextPart("What are these?"),
    )


def test_a_file_alone_is_a_message() -> None:
    parts = [{"type": "file", "mediaType": "audio/wav", "url": data_url("audio/wav", WAV)}]
    ask = read_chat_request({"id": "c", "messages": [{"role": "user", "parts": parts}]})
    assert ask.content == (AudioPart("audio/wav", data=WAV),)


@pytest.mark.parametrize(
    ("file", "message"),
    [
        ({"type": "file", "mediaType": "image/png"}, "needs its URL"),
        ({"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,@@"},
         "not valid base64"),
        ({"type": "file", "mediaType": "image/png", "url": "data:image/png,raw"},
         "data:<type>;base64"),
        ({"type": "file", "mediaType": "video/mp4", "url": "https://x.test/v.mp4"},
         "no image, audio or document"),
        ({"type": "file", "mediaType": "image/png", "url": "ftp://x.test/a.png"}, "http"),
    ],
)  # fmt: skip
def test_a_file_that_cannot_be_read_is_a_parse_error_naming_it(
    file: dict[str, Any], message: str
) -> None:
    parts = [{"type": "text", "text": "see"}, file]
    with pytest.raises(ParseError, match=message) as caught:
        read_chat_request({"id": "c", "messages": [{"role": "user", "parts": parts}]})
    assert "part 1 (a file)" in str(caught.value)


def test_a_tool_results_image_follows_its_output_as_a_file_chunk() -> None:
    image = ImagePart("image/png", data=PNG, name="chart.png")
    result = ToolMessage("call_1", "chart", (TextPart("the chart"), image))
    got = chunks([ToolCallRequested(CALL), ToolResultReady(result)])
    output, file = got[-3:-1]
    assert output["output"] == "the chart"
    assert file == {
        "type": "file",
        "mediaType": "image/png",
        "url": data_url("image/png", PNG),
        "filename": "chart.png",
    }


def test_a_stored_history_keeps_its_files() -> None:
    history = [
        UserMessage((TextPart("What is this?"), ImagePart("image/png", data=PNG))),
        AssistantMessage("", [CALL]),
        ToolMessage("call_1", "get_weather", (TextPart("Sunny"), ImagePart("image/png", data=PNG))),
        AssistantMessage("A red square."),
    ]
    question, answer = ui_messages(history)
    file = {"type": "file", "mediaType": "image/png", "url": data_url("image/png", PNG)}
    assert question["parts"] == [{"type": "text", "text": "What is this?"}, file]
    assert [p["type"] for p in answer["parts"]] == [
        "step-start", "dynamic-tool", "file", "step-start", "text"
    ]  # fmt: skip
    assert answer["parts"][2] == file
