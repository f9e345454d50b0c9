"""MCP content as text: text kept, everything else described, never dropped.

Also the one place MCP content becomes chat messages (``prompts/get``).
"""

from __future__ import annotations

from typing import Any

from ..errors import McpError, McpProtocolError
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
