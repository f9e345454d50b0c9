"""Every provider sends each part kind in its native form, as the providers' recorded requests do.

Each fixture (tests/llm/fixtures/SOURCES.md) is a request a provider accepted
(or, once, refused) and its reply, recorded by another project. A test takes
the recorded media bytes or URL, builds the same conversation in neutral
messages, sends it to a scripted server on 127.0.0.1 that answers with the
recorded reply, and compares the parts of the body we sent, and where they
sit (inside a tool result or not), with the recorded ones; the recorded reply
must read back.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_smith import (
    AnthropicClient,
    AssistantMessage,
    AudioPart,
    DocumentPart,
    GeminiClient,
    ImagePart,
    LlmApiError,
    LlmClient,
    LlmRequest,
    OllamaClient,
    ResponsesClient,
    Runtime,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_smith.base.parts import Part
from agent_smith.llm.bedrock import BedrockClient
from tests.support.llm_server import Raw, ScriptedLlmServer

FIXTURES = Path(__file__).parent / "fixtures"
JsonObject = dict[str, Any]

# The containers that make a part "inside a tool result" in each dialect.
_TOOL_RESULT_TYPES = {"tool_result", "function_call_output"}
_TOOL_RESULT_KEYS = {"toolResult", "functionResponse"}


def _camel(key: str) -> str:
    """Gemini's JSON takes ``file_uri`` and ``fileUri`` alike (proto JSON): compare one spelling."""
    head, *rest = key.split("_")
    return head + "".join(word.title() for word in rest)


# Gemini takes base64 in either alphabet (Google's SDK writes the URL-safe one).
_STANDARD_BASE64 = str.maketrans("-_", "+/")


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            _camel(k): v.translate(_STANDARD_BASE64) if k == "data" else _normal(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _media(
    value: Any, is_part: Callable[[JsonObject], bool], inside: bool = False
) -> Iterator[Any]:
    """Every wire part ``is_part`` picks, with whether it sits inside a tool result."""
    if isinstance(value, dict):
        if is_part(value):
            yield inside, _normal(value)
            return
        inside = inside or value.get("type") in _TOOL_RESULT_TYPES
        for key, item in value.items():
            yield from _media(item, is_part, inside or key in _TOOL_RESULT_KEYS)
    elif isinstance(value, list):
        for item in value:
            yield from _media(item, is_part, inside)


def _data_url(url: str) -> tuple[str, bytes]:
    head, data = url.split(",", 1)
    return head.removeprefix("data:").removesuffix(";base64"), base64.b64decode(data)


# -- each dialect: which wire objects are parts, and the neutral part a recorded one is


def _anthropic_part(wire: JsonObject) -> Part:
    source = wire["source"]
    if wire["type"] == "document" and source["type"] == "text":
        return DocumentPart(source["mediaType"], data=source["data"].encode())
    kind = ImagePart if wire["type"] == "image" else DocumentPart
    if source["type"] == "url":
        return kind("image/*" if kind is ImagePart else "application/pdf", url=source["url"])
    return kind(source["mediaType"], data=base64.b64decode(source["data"]))


def _openai_part(wire: JsonObject) -> Part:
    if wire["type"] == "image_url":
        url = wire["imageUrl"]["url"]
        if url.startswith("data:"):
            media_type, data = _data_url(url)
            return ImagePart(media_type, data=data)
        return ImagePart("image/*", url=url)
    if wire["type"] == "input_audio":
        audio = wire["inputAudio"]
        return AudioPart(f"audio/{audio['format']}", data=base64.b64decode(audio["data"]))
    media_type, data = _data_url(wire["file"]["fileData"])
    return DocumentPart(media_type, data=data, name=wire["file"]["filename"])


def _responses_part(wire: JsonObject) -> Part:
    if wire["type"] == "input_image":
        return ImagePart("image/*", url=wire["imageUrl"])
    media_type, data = _data_url(wire["fileData"])
    return DocumentPart(media_type, data=data, name=wire["filename"])


def _gemini_part(wire: JsonObject) -> Part:
    inline, given = wire.get("inlineData"), wire.get("fileData")
    media_type = (inline or given)["mimeType"]
    kind = {"image": ImagePart, "audio": AudioPart}.get(media_type.split("/")[0], DocumentPart)
    if inline is not None:
        return kind(media_type, data=base64.b64decode(inline["data"]))
    return kind(media_type, url=given["fileUri"])


def _bedrock_part(wire: JsonObject) -> Part:
    if "image" in wire:
        image = wire["image"]
        return ImagePart(
            f"image/{image['format']}", data=base64.b64decode(image["source"]["bytes"])
        )
    document = wire["document"]
    media_type = {"pdf": "application/pdf", "txt": "text/plain"}[document["format"]]
    return DocumentPart(media_type, data=base64.b64decode(document["source"]["bytes"]))


@dataclass(frozen=True)
class Dialect:
    client: Callable[[str, Runtime], Any]
    is_part: Callable[[JsonObject], bool]
    part: Callable[[JsonObject], Part]
    reply_text: Callable[[JsonObject], str]


DIALECTS = {
    "anthropic": Dialect(
        lambda url, runtime: AnthropicClient(url, "claude-sonnet-4-5", runtime=runtime),
        lambda d: d.get("type") in ("image", "document") and "source" in d,
        _anthropic_part,
        lambda r: "".join(b["text"] for b in r["content"] if b["type"] == "text"),
    ),
    "openai-chat": Dialect(
        lambda url, runtime: LlmClient(url, "gpt-5-mini", runtime=runtime, max_retries=0),
        lambda d: d.get("type") in ("image_url", "input_audio", "file"),
        _openai_part,
        lambda r: r["choices"][0]["message"]["content"],
    ),
    "responses": Dialect(
        lambda url, runtime: ResponsesClient(url, "gpt-5-mini", runtime=runtime),
        lambda d: d.get("type") in ("input_image", "input_file"),
        _responses_part,
        lambda r: "".join(
            c["text"] for item in r["output"] if item["type"] == "message" for c in item["content"]
        ),
    ),
    "gemini": Dialect(
        lambda url, runtime: GeminiClient(url, "gemini-2.5-flash", runtime=runtime),
        lambda d: "inlineData" in d or "inline_data" in d or "fileData" in d or "file_data" in d,
        _gemini_part,
        lambda r: "".join(
            p["text"] for p in r["candidates"][0]["content"]["parts"] if not p.get("thought")
        ),
    ),
    "bedrock": Dialect(
        lambda url, runtime: BedrockClient(url, "us.anthropic.claude-sonnet-4-5", runtime=runtime),
        lambda d: "image" in d or "document" in d,
        _bedrock_part,
        lambda r: "".join(b.get("text", "") for b in r["output"]["message"]["content"]),
    ),
}

CASES = [
    ("anthropic", "pydantic-ai--anthropic-image-url.json"),
    ("anthropic", "pydantic-ai--anthropic-text-document.json"),
    ("anthropic", "pydantic-ai--anthropic-tool-result-image.json"),
    ("anthropic", "pydantic-ai--anthropic-tool-result-document.json"),
    ("openai-chat", "pydantic-ai--openai-chat-image-url-tool-response.json"),
    ("openai-chat", "pydantic-ai--openai-chat-tool-result-document.json"),
    ("responses", "pydantic-ai--responses-image-url.json"),
    ("responses", "pydantic-ai--responses-tool-result-document.json"),
    ("gemini", "pydantic-ai--gemini-image-url.json"),
    ("gemini", "pydantic-ai--gemini-audio-url.json"),
    ("gemini", "pydantic-ai--gemini-text-document.json"),
    ("gemini", "pydantic-ai--gemini-tool-result-document.json"),
    ("bedrock", "pydantic-ai--bedrock-text-document.json"),
    ("bedrock", "pydantic-ai--bedrock-tool-result-image.json"),
    ("bedrock", "pydantic-ai--bedrock-tool-result-document.json"),
]


def _recorded(name: str) -> tuple[JsonObject, JsonObject]:
    fixture = json.loads((FIXTURES / name).read_text())
    request = fixture["request"]
    return (json.loads(request) if isinstance(request, str) else request), fixture["response"]


def _history(parts: list[Part], *, in_tool_result: bool) -> tuple[Any, ...]:
    """The recorded conversation in neutral messages: the parts asked about, or a tool's result."""
    if not in_tool_result:
        return (UserMessage(("What is in this?", *parts)),)
    call = ToolCall("call_1", "get_file", {})
    return (
        UserMessage("Use the get_file tool, then describe what you received."),
        AssistantMessage("", (call,)),
        ToolMessage("call_1", "get_file", tuple(parts)),
    )


@pytest.mark.parametrize(("dialect", "fixture"), CASES, ids=[name for _, name in CASES])
def test_parts_go_out_as_the_provider_recorded_them_and_the_reply_reads_back(
    dialect: str,
    fixture: str,
    llm_server: ScriptedLlmServer,
    runtime: Runtime,
    aws_credentials: None,
) -> None:
    spec = DIALECTS[dialect]
    request, response = _recorded(fixture)
    recorded = list(_media(request, spec.is_part))
    assert recorded, "the fixture carries parts"
    parts = [spec.part(wire) for _, wire in recorded]
    llm_server.script(Raw(200, json.dumps(response)))

    reply = spec.client(llm_server.url, runtime).complete(
        LlmRequest(_history(parts, in_tool_result="tool-re" in fixture))
    )

    sent = list(_media(llm_server.requests[0], spec.is_part))
    if dialect in ("openai-chat", "gemini"):  # neither takes parts in a tool result
        assert all(not inside for inside, _ in recorded)
    assert sent == recorded
    assert reply.message.content == spec.reply_text(response)


def test_ollama_sends_images_in_the_messages_images_list_as_its_docs_show(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    request, response = _recorded("ollama--chat-with-images.json")
    asked = request["messages"][0]
    image = ImagePart("image/png", data=base64.b64decode(asked["images"][0]))
    llm_server.script(Raw(200, json.dumps(response)))

    reply = OllamaClient(llm_server.url, "llava", runtime=runtime).complete(
        LlmRequest((UserMessage((asked["content"], image)),))
    )

    sent = llm_server.requests[0]["messages"][0]
    assert sent == {"role": "user", "content": asked["content"], "images": asked["images"]}
    assert reply.message.content == response["message"]["content"]


def test_audio_after_a_tool_result_goes_as_input_audio_and_a_refusal_reads_plainly(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    request, response = _recorded("pydantic-ai--openai-chat-tool-result-audio.json")
    spec = DIALECTS["openai-chat"]
    recorded = list(_media(request, spec.is_part))
    llm_server.script(Raw(400, json.dumps(response)))

    with pytest.raises(LlmApiError) as caught:
        spec.client(llm_server.url, runtime).complete(
            LlmRequest(_history([spec.part(w) for _, w in recorded], in_tool_result=True))
        )

    assert list(_media(llm_server.requests[0], spec.is_part)) == recorded
    assert caught.value.http_status == 400
    assert "Content blocks are expected to be either text or image_url" in str(caught.value)
