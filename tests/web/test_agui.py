"""AG-UI: agent events -> events in the order the protocol's client verifies; run input."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_smith import AudioPart, DocumentPart, ImagePart, ParseError, TextPart
from agent_smith.agent.approvals import ApprovalRequest, ApprovalRequested, Decision
from agent_smith.agent.events import AssistantTurn, FinalAnswer, ToolCallRequested, ToolResultReady
from agent_smith.llm.events import ReasoningDelta, TokenDelta
from agent_smith.messages import AssistantMessage, TokenUsage, ToolCall, ToolMessage
from agent_smith.web.agui import AguiStream, read_run_input
from agent_smith.web.stream import TurnFailed, TurnPaused, WebEvent
from tests.support.media import PNG, WAV, b64

CALL = ToolCall("call_1", "get_weather", {"city": "Paris"})


def events(items: list[WebEvent]) -> list[dict[str, Any]]:
    mapper = AguiStream(thread_id="t", run_id="r")
    frames = [*mapper.begin()]
    for item in items:
        frames += mapper.event(item)
    frames += mapper.end()
    return [json.loads(frame[6:-2]) for frame in frames]


def test_a_turn_maps_to_a_run_of_steps_messages_and_tool_calls() -> None:
    reply = AssistantMessage("Sunny.", usage=TokenUsage(3, 2, 5))
    got = events(
        [
            AssistantTurn(AssistantMessage("", [CALL])),
            ToolCallRequested(CALL),
            ToolResultReady(ToolMessage("call_1", "get_weather", "Sunny in Paris")),
            ReasoningDelta("hm"),
            TokenDelta("Sunny."),
            AssistantTurn(reply),
            FinalAnswer(reply),
        ]
    )
    assert got == [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STEP_STARTED", "stepName": "round 1"},
        {"type": "TOOL_CALL_START", "toolCallId": "call_1", "toolCallName": "get_weather",
         "parentMessageId": "r-1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "call_1", "delta": '{"city": "Paris"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "call_1"},
        {"type": "TOOL_CALL_RESULT", "messageId": "r-result-call_1", "toolCallId": "call_1",
         "content": "Sunny in Paris", "role": "tool"},
        {"type": "STEP_FINISHED", "stepName": "round 1"},
        {"type": "STEP_STARTED", "stepName": "round 2"},
        {"type": "REASONING_START", "messageId": "r-2-reasoning"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r-2-reasoning", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r-2-reasoning", "delta": "hm"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r-2-reasoning"},
        {"type": "REASONING_END", "messageId": "r-2-reasoning"},
        {"type": "TEXT_MESSAGE_START", "messageId": "r-2", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "r-2", "delta": "Sunny."},
        {"type": "TEXT_MESSAGE_END", "messageId": "r-2"},
        {"type": "STEP_FINISHED", "stepName": "round 2"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
         "usage": [{"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}], "result": "Sunny."},
    ]  # fmt: skip


def test_a_paused_turn_finishes_the_run_with_an_interrupt_per_waiting_call() -> None:
    call = ToolCall("call_2", "save_note", {"text": "x"})
    request = ApprovalRequest(call)
    got = events(
        [
            AssistantTurn(AssistantMessage("", [call])),
            ToolCallRequested(call),
            ApprovalRequested(request),
            TurnPaused((request,), TokenUsage()),
        ]
    )
    assert got[-2] == {"type": "STEP_FINISHED", "stepName": "round 1"}
    assert got[-1]["outcome"] == {
        "type": "interrupt",
        "interrupts": [
            {
                "id": "call_2",
                "reason": "tool_approval",
                "message": "save_note needs approval",
                "toolCallId": "call_2",
                "metadata": {"toolName": "save_note", "arguments": {"text": "x"}},
            }
        ],
    }


def test_an_error_closes_what_is_open_then_reports_run_error() -> None:
    got = events([TokenDelta("Hal"), TurnFailed("boom", "LlmApiError")])
    assert [e["type"] for e in got[-3:]] == ["TEXT_MESSAGE_END", "STEP_FINISHED", "RUN_ERROR"]
    assert got[-1] == {"type": "RUN_ERROR", "message": "boom", "code": "LlmApiError"}


def test_reads_the_last_user_message_in_either_content_form() -> None:
    plain = {"threadId": "t", "runId": "r", "messages": [{"role": "user", "content": "hi"}]}
    assert read_run_input(plain).content == "hi"
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    rich = {"threadId": "t", "runId": "r", "messages": [{"role": "user", "content": parts}]}
    assert read_run_input(rich).content == "ab"


def run_of(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"threadId": "t", "runId": "r", "messages": [{"role": "user", "content": list(parts)}]}


def test_images_audio_and_documents_in_a_user_message_become_parts_in_order() -> None:
    image = {
        "type": "image",
        "source": {"type": "data", "value": b64(PNG), "mimeType": "image/png"},
    }
    linked = {
        "type": "document",
        "source": {"type": "url", "value": "https://x.test/a.pdf", "mimeType": "application/pdf"},
    }
    sound = {
        "type": "audio",
        "source": {"type": "data", "value": b64(WAV), "mimeType": "audio/wav"},
    }
    run = read_run_input(run_of({"type": "text", "text": "What is this?"}, image, linked, sound))
    assert run.content == (
        TextPart("What is this?"),
        ImagePart("image/png", data=PNG),
        DocumentPart("application/pdf", url="https://x.test/a.pdf"),
        AudioPart("audio/wav", data=WAV),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("part", "message"),
    [
        ({"type": "image"}, "needs a 'data' or 'url' source"),
        ({"type": "image", "source": {"type": "data", "value": "@@", "mimeType": "image/png"}},
         "not valid base64"),
        ({"type": "image", "source": {"type": "file", "value": "file-1"}}, "'data' or 'url'"),
        ({"type": "video", "source": {"type": "url", "value": "https://x.test/v.mp4"}},
         "'video', which no model here takes"),
        ({"type": "image", "source": {"type": "data", "value": "AAAA", "mimeType": "video/mp4"}},
         "no image, audio or document"),
    ],
)  # fmt: skip
def test_a_media_part_that_cannot_be_read_is_a_parse_error_naming_it(
    part: dict[str, Any], message: str
) -> None:
    with pytest.raises(ParseError, match=message) as caught:
        read_run_input(run_of({"type": "text", "text": "x"}, part))
    assert "part 1" in str(caught.value)


def test_a_tool_result_with_an_image_is_sent_as_content_parts() -> None:
    result = ToolMessage(
        "call_1", "chart", (TextPart("the chart"), ImagePart("image/png", data=PNG))
    )
    got = events([ToolResultReady(result)])
    assert got[-1]["content"] == [
        {"type": "text", "text": "the chart"},
        {"type": "image", "source": {"type": "data", "value": b64(PNG), "mimeType": "image/png"}},
    ]


def test_reads_resume_entries_as_decisions() -> None:
    body = {
        "threadId": "t",
        "runId": "r2",
        "messages": [],
        "resume": [
            {"interruptId": "a", "status": "resolved", "payload": {"approved": True}},
            {
                "interruptId": "b",
                "status": "resolved",
                "payload": {"approved": False, "reason": "no"},
            },
            {"interruptId": "c", "status": "cancelled"},
        ],
    }
    run = read_run_input(body)
    assert (run.thread_id, run.run_id, run.content) == ("t", "r2", None)
    assert dict(run.decisions) == {
        "a": Decision.approve(),
        "b": Decision.deny("no"),
        "c": Decision.deny("denied by the user"),
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("x", "RunAgentInput"),
        ({"runId": "r", "messages": []}, "threadId"),
        ({"threadId": "t", "messages": []}, "runId"),
        ({"threadId": "t", "runId": "r"}, "'messages'"),
        ({"threadId": "t", "runId": "r", "messages": [{"role": "assistant", "content": "x"}]},
         "last message must be the user's"),
        ({"threadId": "t", "runId": "r", "messages": [{"role": "user", "content": 3}]}, "content"),
        ({"threadId": "t", "runId": "r", "messages": [], "resume": [{"status": "resolved"}]},
         "interruptId"),
        ({"threadId": "t", "runId": "r", "messages": [],
          "resume": [{"interruptId": "a", "status": "resolved"}]}, "payload.approved"),
        ({"threadId": "t", "runId": "r", "messages": [],
          "resume": [{"interruptId": "a", "status": "maybe"}]}, "'resolved' or 'cancelled'"),
    ],
)  # fmt: skip
def test_malformed_run_input_raises_parse_error_saying_why(body: object, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read_run_input(body)
