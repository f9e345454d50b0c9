"""A part a provider would refuse is a PartError naming it before any request is sent.

Each client is pointed at a scripted server on 127.0.0.1 that would answer;
the test asserts the error's reason and part, and that the server saw nothing.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from agent_smith import (
    AnthropicClient,
    AssistantMessage,
    AudioPart,
    DocumentPart,
    GeminiClient,
    ImagePart,
    LlmClient,
    LlmRequest,
    OllamaClient,
    PartError,
    PartSupport,
    ResponsesClient,
    Runtime,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_smith.base.parts import MediaPart
from agent_smith.llm.bedrock import BedrockClient
from agent_smith.llm.wire_bytes import Base64Data, encode_body
from tests.support.llm_server import ScriptedLlmServer, Text

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
GIF = b"GIF89a" + b"\x00" * 16
PDF = b"%PDF-1.4\n%fake\n"
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
MB = 1024 * 1024

Client = Callable[[str, Runtime], Any]
CLIENTS: dict[str, Client] = {
    "openai-chat": lambda url, rt: LlmClient(url, "gpt-4o", runtime=rt, max_retries=0),
    "responses": lambda url, rt: ResponsesClient(url, "gpt-4o", runtime=rt, max_retries=0),
    "anthropic": lambda url, rt: AnthropicClient(url, "claude", runtime=rt, max_retries=0),
    "gemini": lambda url, rt: GeminiClient(url, "gemini-2.5-flash", runtime=rt, max_retries=0),
    "ollama": lambda url, rt: OllamaClient(url, "llava", runtime=rt, max_retries=0),
    "bedrock": lambda url, rt: BedrockClient(url, "claude", runtime=rt, max_retries=0),
    "text-only server": lambda url, rt: LlmClient(
        url, "", runtime=rt, max_retries=0, parts=PartSupport()
    ),
}

# (provider, a part it cannot take, the reason): every kind each provider refuses.
REFUSED: list[tuple[str, MediaPart, str]] = [
    ("openai-chat", AudioPart("audio/flac", data=b"fLaC" + b"\x00" * 8), "unsupported"),
    (
        "openai-chat",
        DocumentPart("application/pdf", url="https://example.com/a.pdf"),
        "unsupported",
    ),
    ("responses", AudioPart("audio/wav", data=WAV), "unsupported"),
    ("anthropic", AudioPart("audio/wav", data=WAV), "unsupported"),
    ("gemini", ImagePart("image/gif", data=GIF), "unsupported"),
    ("ollama", DocumentPart("application/pdf", data=PDF), "unsupported"),
    ("ollama", ImagePart("image/png", url="https://example.com/a.png"), "unsupported"),
    ("ollama", AudioPart("audio/wav", data=WAV), "unsupported"),
    ("bedrock", ImagePart("image/png", url="https://example.com/a.png"), "unsupported"),
    ("bedrock", AudioPart("audio/wav", data=WAV), "unsupported"),
    ("text-only server", ImagePart("image/png", data=PNG), "unsupported"),
    ("anthropic", ImagePart("image/png", data=PNG + b"\x00" * (5 * MB)), "too_large"),
    ("bedrock", DocumentPart("application/pdf", data=PDF + b"\x00" * (5 * MB)), "too_large"),
    ("gemini", ImagePart("image/jpeg", data=PNG), "media_type"),
    ("responses", DocumentPart("application/pdf", data=b"not a pdf"), "media_type"),
    ("anthropic", DocumentPart("text/plain", data=b"caf\xe9"), "media_type"),
    ("anthropic", ImagePart("image/png", url="http://127.0.0.1:8080/a.png"), "private_url"),
    ("responses", ImagePart("image/png", url="http://169.254.169.254/latest/a.png"), "private_url"),
    ("gemini", AudioPart("audio/wav", url="http://[::1]/a.wav"), "private_url"),
    ("anthropic", DocumentPart("application/pdf", url="http://10.1.2.3/a.pdf"), "private_url"),
]


@pytest.mark.parametrize(
    ("provider", "part", "reason"),
    REFUSED,
    ids=[f"{p}-{part.kind}-{reason}" for p, part, reason in REFUSED],
)
def test_a_part_the_provider_would_refuse_is_a_part_error_before_the_request(
    provider: str,
    part: MediaPart,
    reason: str,
    llm_server: ScriptedLlmServer,
    runtime: Runtime,
    aws_credentials: None,
) -> None:
    llm_server.script(Text("never read"))
    client = CLIENTS[provider](llm_server.url, runtime)

    with pytest.raises(PartError) as caught:
        client.complete(LlmRequest((UserMessage(("What is this?", part)),)))

    assert caught.value.reason == reason
    assert caught.value.part.startswith(f"messages[0].content[1] {part.kind} ({part.media_type}")
    assert llm_server.requests == []


def test_streaming_checks_the_parts_before_the_request_too(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Text("never read"))
    client = CLIENTS["anthropic"](llm_server.url, runtime)
    request = LlmRequest((UserMessage(("hear", AudioPart("audio/wav", data=WAV))),))
    with pytest.raises(PartError, match="does not take"):
        list(client.stream(request))
    assert llm_server.requests == []


def test_a_tools_image_follows_the_results_in_a_user_message_where_tools_take_no_parts(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Text("A chart."))
    chart = ImagePart("image/png", data=PNG)
    history = (
        UserMessage("Draw it."),
        AssistantMessage("", (ToolCall("c1", "draw", {}), ToolCall("c2", "note", {}))),
        ToolMessage("c1", "draw", ("the chart", chart)),
        ToolMessage("c2", "note", "noted"),
    )

    CLIENTS["openai-chat"](llm_server.url, runtime).complete(LlmRequest(history))

    sent = llm_server.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user"]
    assert sent[2]["content"] == "the chart"
    assert sent[4]["content"] == [
        {"type": "text", "text": "The result of draw (c1):"},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
        },
    ]


def test_a_body_with_bytes_is_the_json_of_their_base64_written_once() -> None:
    body = {"messages": [{"data": Base64Data(PNG, "data:image/png;base64,"), "text": "é"}]}

    sent = encode_body(body)

    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert json.loads(sent) == {"messages": [{"data": url, "text": "é"}]}
    assert json.loads(encode_body({"plain": [1, "é"]})) == {"plain": [1, "é"]}


def test_a_tools_part_the_model_refuses_is_sent_as_a_note_so_the_conversation_goes_on(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Text("I cannot see it."))
    history = (
        UserMessage("Take a screenshot."),
        AssistantMessage("", (ToolCall("c1", "screenshot", {}),)),
        ToolMessage("c1", "screenshot", ("the screen", ImagePart("image/png", data=PNG))),
    )

    reply = CLIENTS["text-only server"](llm_server.url, runtime).complete(LlmRequest(history))

    assert reply.message.content == "I cannot see it."
    sent = llm_server.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[2]["content"].startswith(
        "the screen\n[not sent: LLM server does not take messages[2].content[1] image (image/png"
    )
