"""Images, audio and documents that tools return reach the model as parts, not as text.

Against real MCP servers in real subprocesses: the npm reference server
(server-everything's ``get-tiny-image``: text, a PNG, text) and the official
Python SDK's (``media``: audio and an embedded PDF resource); and a ``@tool``
that returns a :class:`ToolResult` with an image. The model is the scripted
chat-completions server, whose recorded requests show what the model was sent.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AudioPart,
    DocumentPart,
    ImagePart,
    LlmClient,
    McpClient,
    Runtime,
    ServerConfig,
    TextPart,
    ToolMessage,
    ToolResult,
    tool,
)
from tests.integration.peers import require_npm_bin
from tests.integration.servers import sdk_stdio
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.media import PNG

pytestmark = pytest.mark.usefixtures("no_thread_leak")


def images_sent(request: dict[str, Any]) -> list[str]:
    """Every ``image_url`` URL in a chat-completions request, wherever the message put it."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if value.get("type") == "image_url":
                found.append(value["image_url"]["url"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(request["messages"])
    return found


@pytest.fixture
def llm(llm_server: ScriptedLlmServer, runtime: Runtime) -> LlmClient:
    return LlmClient(llm_server.url, "test", runtime=runtime)


@pytest.fixture
def everything() -> Iterator[ServerConfig]:
    binary = require_npm_bin("mcp-server-everything")
    yield ServerConfig(alias="everything", command=(str(binary), "stdio"))


def test_server_everythings_tiny_image_is_an_image_part_between_its_texts(
    everything: ServerConfig,
) -> None:
    with McpClient.connect(everything) as client:
        result = client.call_tool("get-tiny-image", {})
    (image,) = result.parts
    assert isinstance(image, ImagePart) and image.media_type == "image/png"
    assert image.data is not None and image.data.startswith(b"\x89PNG\r\n\x1a\n")
    lines = result.content.split("\n")
    assert lines[0] == "Here's the image you requested:"
    assert lines[1].startswith("[image: image/png, ")  # where the image was, for the model
    assert lines[2] == "The image above is the MCP logo."


def test_an_mcp_tools_image_reaches_the_model_as_an_image(
    everything: ServerConfig, llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("mcp_everything__get-tiny-image", {})), Text("The MCP logo."))
    with Agent(llm, runtime=runtime) as agent:
        agent.connect_mcp(everything)
        assert agent.send("Show me the logo").content == "The MCP logo."
        result = next(m for m in agent.history if isinstance(m, ToolMessage))
    (image,) = [p for p in result.content if isinstance(p, ImagePart)]
    assert image.data is not None
    expected = "data:image/png;base64," + base64.b64encode(image.data).decode("ascii")
    assert images_sent(llm_server.requests[0]) == []
    assert images_sent(llm_server.requests[1]) == [expected]


def test_the_sdk_servers_audio_and_embedded_pdf_become_parts() -> None:
    with McpClient.connect(sdk_stdio()) as client:
        result = client.call_tool("media", {})
    audio, paper = result.parts
    assert isinstance(audio, AudioPart) and audio.media_type == "audio/wav"
    assert audio.data is not None and audio.data[8:12] == b"WAVE"
    assert isinstance(paper, DocumentPart) and paper.media_type == "application/pdf"
    assert (paper.name, paper.data is not None and paper.data[:5]) == ("paper.pdf", b"%PDF-")
    assert result.content.startswith("a sound and a paper\n[audio: audio/wav, ")


@tool
def draw_chart(title: str) -> ToolResult:
    """Draw a chart and return it as an image."""
    return ToolResult(f"the chart {title!r}", parts=(ImagePart("image/png", data=PNG),))


def test_a_tool_function_returns_an_image_the_model_sees(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("draw_chart", {"title": "sales"})), Text("A red square."))
    with Agent(llm, tools=[draw_chart], runtime=runtime) as agent:
        assert agent.send("Draw the sales chart").content == "A red square."
        result = next(m for m in agent.history if isinstance(m, ToolMessage))
    assert result.content == (TextPart("the chart 'sales'"), ImagePart("image/png", data=PNG))
    expected = "data:image/png;base64," + base64.b64encode(PNG).decode("ascii")
    assert images_sent(llm_server.requests[1]) == [expected]
