"""Reasoning in every OpenAI-compatible form reaches ReasoningDelta and the reply, never history."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from agent_smith import (
    Agent,
    Finished,
    LlmClient,
    LlmRequest,
    ReasoningDelta,
    Runtime,
    TokenDelta,
    UserMessage,
)
from agent_smith.llm.stream_decoder import StreamDecoder
from agent_smith.llm.think_tags import ThinkSplitter, split_events
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer

REQUEST = LlmRequest((UserMessage("hi"),))


def frames(*deltas: dict[str, object]) -> list[bytes]:
    chunks = [
        f"data: {json.dumps({'choices': [{'index': 0, 'delta': d, 'finish_reason': None}]})}\n\n"
        for d in deltas
    ]
    chunks.append(
        f"data: {json.dumps({'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})}\n\n"
    )
    chunks.append("data: [DONE]\n\n")
    return [c.encode() for c in chunks]


@pytest.mark.parametrize(
    "delta",
    [
        {"reasoning_content": "Let me think."},
        {"reasoning": "Let me think."},
        {
            "reasoning_details": [
                {"type": "reasoning.text", "text": "Let me "},
                {"type": "reasoning.summary", "summary": "think."},
                {"type": "reasoning.encrypted", "data": "opaque"},
            ]
        },
    ],
)
def test_every_streamed_reasoning_field_becomes_reasoning(delta: dict[str, object]) -> None:
    events = list(StreamDecoder(endpoint="e").events(frames(delta, {"content": "Hi."})))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Let me think."
    message = events[-1].response.message  # type: ignore[union-attr]
    assert (message.content, message.reasoning) == ("Hi.", "Let me think.")
    assert "reasoning" not in json.dumps(message.to_openai())  # never sent back


@pytest.mark.parametrize(
    "field",
    [
        {"reasoning_content": "Thought."},
        {"reasoning": "Thought."},
        {"reasoning_details": [{"type": "reasoning.text", "text": "Thought."}]},
    ],
)
def test_every_whole_reply_reasoning_field_becomes_reasoning(
    field: dict[str, object], llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    message = {"role": "assistant", "content": "Hi.", **field}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    llm_server.script(Raw(200, json.dumps(body)))
    reply = LlmClient(llm_server.url, runtime=runtime).complete(REQUEST)
    assert reply.message.reasoning == "Thought."


def split(pieces: list[str]) -> list[tuple[bool, str]]:
    splitter = ThinkSplitter()
    out = [p for text in pieces for p in splitter.feed(text)] + splitter.flush()
    merged: list[tuple[bool, str]] = []
    for thinking, text in out:
        if merged and merged[-1][0] == thinking:
            merged[-1] = (thinking, merged[-1][1] + text)
        else:
            merged.append((thinking, text))
    return merged


def test_think_tags_split_at_every_position_give_the_same_pieces() -> None:
    text = "<think>\nHmm, 2+2.\n</think>\n\nIt is 4."
    expected = [(True, "\nHmm, 2+2.\n"), (False, "It is 4.")]
    for cut in range(len(text) + 1):
        assert split([text[:cut], text[cut:]]) == expected, cut
    assert split(list(text)) == expected


def test_text_that_only_looks_like_a_tag_is_kept() -> None:
    assert split(["a <thin", "king> b <"]) == [(False, "a <thinking> b <")]


def test_think_tags_are_split_out_of_a_stream_when_asked(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(
        Chunks(*frames({"content": "<thi"}, {"content": "nk>Plan.</th"}, {"content": "ink>Done."}))
    )
    model = LlmClient(llm_server.url, runtime=runtime, think_tags=True)
    with Agent(model, runtime=runtime) as agent:
        events = list(agent.stream("hi"))
        history = agent.memory.messages()
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Plan."
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "Done."
    assert history[-1].content == "Done."  # the history never holds the thinking


def test_think_tags_are_split_out_of_a_whole_reply(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "<think>Plan.</think>\nDone."},
                "finish_reason": "stop",
            }
        ]
    }
    llm_server.script(Raw(200, json.dumps(body)), Raw(200, json.dumps(body)))
    split_reply = LlmClient(llm_server.url, runtime=runtime, think_tags=True).complete(REQUEST)
    assert (split_reply.message.content, split_reply.message.reasoning) == ("Done.", "Plan.")
    kept = LlmClient(llm_server.url, runtime=runtime).complete(REQUEST)  # off by default
    assert kept.message.content == "<think>Plan.</think>\nDone."


def test_closing_the_split_stream_closes_the_source() -> None:
    closed: list[bool] = []

    def source() -> Iterator[TokenDelta | Finished]:
        try:
            yield TokenDelta("<think>a")
            yield TokenDelta("b")
        finally:
            closed.append(True)

    events = split_events(source())  # type: ignore[arg-type]
    next(events)
    events.close()
    assert closed == [True]
