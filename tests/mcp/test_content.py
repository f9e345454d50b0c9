from __future__ import annotations

import base64

import pytest

from agent_smith import AudioPart, DocumentPart, ImagePart, McpError
from agent_smith.mcp.content import content_parts, content_text
from tests.support.media import PDF, PNG, WAV, b64


def test_text_blocks_are_joined_and_other_content_is_described() -> None:
    png = base64.b64encode(b"x" * 1234).decode()
    blocks = [
        {"type": "text", "text": "first"},
        {"type": "image", "mimeType": "image/png", "data": png},
        {"type": "audio", "mimeType": "audio/wav", "data": base64.b64encode(b"ab").decode()},
        {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
        {"type": "resource", "resource": {"uri": "x://t", "text": "embedded text"}},
        {"type": "resource", "resource": {"uri": "x://b", "mimeType": "app/bin", "blob": "AAAA"}},
        {"type": "mystery"},
    ]
    assert content_text(blocks).split("\n") == [
        "first",
        "[image: image/png, 1234 bytes]",
        "[audio: audio/wav, 2 bytes]",
        "[resource link: file:///a.txt (a)]",
        "embedded text",
        "[resource: x://b, app/bin, 3 bytes]",
        "[mystery content]",
    ]


def test_resource_read_contents_keep_text_and_describe_blobs() -> None:
    contents = [
        {"uri": "a://1", "text": "hello"},
        {"uri": "a://2", "blob": "AAA=", "mimeType": "x/y"},
    ]
    assert content_text(contents) == "hello\n[resource: a://2, x/y, 2 bytes]"


def test_missing_content_is_empty_text() -> None:
    assert content_text(None) == ""


def test_images_audio_and_binary_resources_become_parts_in_order() -> None:
    blocks = [
        {"type": "text", "text": "a chart and its sound"},
        {"type": "image", "mimeType": "image/png", "data": b64(PNG)},
        {"type": "audio", "mimeType": "audio/wav", "data": b64(WAV)},
        {
            "type": "resource",
            "resource": {
                "uri": "file:///r/report.pdf",
                "mimeType": "application/pdf",
                "blob": b64(PDF),
            },
        },
        {
            "type": "resource",
            "resource": {"uri": "x://t", "mimeType": "text/plain", "text": "inline"},
        },
        {"type": "resource_link", "uri": "file:///b.png", "mimeType": "image/png"},
    ]
    parts = content_parts(blocks, server="charts")
    assert parts == (
        ImagePart("image/png", data=PNG),
        AudioPart("audio/wav", data=WAV),
        DocumentPart("application/pdf", data=PDF, name="report.pdf"),
    )


def test_a_blob_no_model_reads_stays_a_description_only() -> None:
    blocks = [
        {
            "type": "resource",
            "resource": {"uri": "x://z", "mimeType": "application/gzip", "blob": "AAAA"},
        }
    ]
    assert content_parts(blocks, server="s") == ()
    assert content_text(blocks) == "[resource: x://z, application/gzip, 3 bytes]"


def test_image_data_that_is_not_base64_is_the_servers_error_naming_the_block() -> None:
    blocks = [
        {"type": "text", "text": "x"},
        {"type": "image", "mimeType": "image/png", "data": "not base64!"},
    ]
    with pytest.raises(McpError, match=r"'shots' sent image content \(content\[1\]\)") as caught:
        content_parts(blocks, server="shots")
    assert caught.value.server == "shots"
