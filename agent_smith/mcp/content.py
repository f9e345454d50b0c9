"""MCP content as text and parts: text kept, everything else described, never dropped.

Images, audio and embedded resources that hold an image, audio, a PDF or a
text file as a ``blob`` also become parts (:func:`content_parts`), which a
tool result carries to the model beside the text; the text keeps a short
description where each one was. Also the one place MCP content becomes chat
messages (``prompts/get``).
"""

from __future__ import annotations

import posixpath
from typing import Any
from urllib.parse import urlsplit

from ..base.media_input import decode_base64, media_part
from ..base.parts import MediaPart
from ..errors import ConfigError, McpError, McpProtocolError, PartError
from ..messages import AssistantMessage, Message, UserMessage


def content_text(blocks: object) -> str:
    """Join a ``content`` (or resource ``contents``) list into one text.

    Text blocks are kept verbatim; images, audio, blobs and links become a
    short bracketed description such as ``[image: image/png, 1234 bytes]``.
    """
    if not isinstance(blocks, list):
        return ""
    return "\n".join(describe_block(block) for block in blocks)


def describe_block(block: object) -> str:
    """One content block as text (see :func:`content_text`)."""
    if not isinstance(block, dict):
        return f"[unreadable content: {type(block).__name__}]"
    kind = block.get("type")
    if isinstance(block.get("text"), str) and kind in (None, "text"):
        return str(block["text"])
    if kind in ("image", "audio"):
        mime = block.get("mimeType", "unknown type")
        return f"[{kind}: {mime}, {_size(block.get('data'))} bytes]"
    if kind == "resource_link":
        name = f" ({block['name']})" if isinstance(block.get("name"), str) else ""
        return f"[resource link: {block.get('uri', '?')}{name}]"
    if kind == "resource":
        return describe_resource(block.get("resource"))
    if kind is None and "uri" in block:  # an entry of resources/read ``contents``
        return describe_resource(block)
    return f"[{kind or 'unknown'} content]"


def describe_resource(resource: object) -> str:
    """A resource's text, or a description of its binary ``blob``."""
    if not isinstance(resource, dict):
        return "[resource]"
    if isinstance(resource.get("text"), str):
        return str(resource["text"])
    mime = resource.get("mimeType", "unknown type")
    return f"[resource: {resource.get('uri', '?')}, {mime}, {_size(resource.get('blob'))} bytes]"


def content_parts(blocks: object, *, server: str) -> tuple[MediaPart, ...]:
    """The images, audio and binary resources of a ``content`` list, as parts, in order.

    A block whose media type no part takes (``application/gzip``, say) stays
    a description in the text only. Data that is not base64 is the server's
    mistake: McpError naming the block.
    """
    if not isinstance(blocks, list):
        return ()
    parts = []
    for index, block in enumerate(blocks):
        part = _block_part(block, f"content[{index}]", server)
        if part is not None:
            parts.append(part)
    return tuple(parts)


def _block_part(block: object, where: str, server: str) -> MediaPart | None:
    if not isinstance(block, dict):
        return None
    kind, name = block.get("type"), None
    if kind in ("image", "audio"):
        encoded, media_type = block.get("data"), block.get("mimeType")
    elif kind == "resource" and isinstance(block.get("resource"), dict):
        resource = block["resource"]
        encoded, media_type = resource.get("blob"), resource.get("mimeType")
        uri = resource.get("uri")
        if isinstance(uri, str):
            name = posixpath.basename(urlsplit(uri).path) or None
    else:
        return None
    if not isinstance(encoded, str) or not isinstance(media_type, str):
        return None
    try:
        return media_part(media_type, data=decode_base64(encoded, what=where), name=name)
    except PartError as err:
        raise McpError(
            f"MCP server {server!r} sent {kind} content ({where}) whose data is not base64",
            server=server,
        ) from err
    except ConfigError:  # a media type no part takes: the text describes it
        return None


def _size(data: Any) -> int:
    """Decoded size of base64 text, without decoding it."""
    if not isinstance(data, str):
        return 0
    data = data.strip()
    padding = len(data) - len(data.rstrip("="))
    return max(0, len(data) * 3 // 4 - padding)


def prompt_messages(result: dict[str, Any], *, prompt: str, server: str) -> list[Message]:
    """A ``prompts/get`` result as messages; McpError if a message is not text."""
    items = result.get("messages")
    if not isinstance(items, list):
        raise McpProtocolError(
            f"MCP server {server!r}: prompts/get result has no list of messages", server=server
        )
    messages: list[Message] = []
    for item in items:
        content = item.get("content") if isinstance(item, dict) else None
        if not isinstance(content, dict) or content.get("type") != "text":
            kind = content.get("type") if isinstance(content, dict) else "missing"
            raise McpError(
                f"prompt {prompt!r} of MCP server {server!r} has {kind} content,"
                " which cannot become a text message",
                server=server,
            )
        text = str(content.get("text", ""))
        role = item.get("role")
        messages.append(
            AssistantMessage(content=text) if role == "assistant" else UserMessage(text)
        )
    return messages
