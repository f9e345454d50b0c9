from __future__ import annotations

import base64

from agent_smith.mcp.content import content_text


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
