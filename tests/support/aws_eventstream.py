"""AWS event-stream frames (the ``application/vnd.amazon.eventstream`` encoding) for wire fakes.

A frame: total length and headers length (big-endian u32 each), the CRC32 of
those 8 bytes, the headers (name length u8, name, type 7 = string, value
length u16, value), the payload, then the CRC32 of everything before it.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message."""
    encoded = b"".join(
        struct.pack("!B", len(name))
        + name.encode()
        + struct.pack("!BH", 7, len(value))
        + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    head = prelude + struct.pack("!I", zlib.crc32(prelude)) + encoded + payload
    return head + struct.pack("!I", zlib.crc32(head))


def event(kind: str, body: dict[str, Any]) -> bytes:
    """A ``ConverseStream`` event frame."""
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return frame(headers, json.dumps(body).encode())


def exception(kind: str, message: str) -> bytes:
    """An exception frame (``:message-type: exception``)."""
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return frame(headers, json.dumps({"message": message}).encode())


def converse_stream(text: str = "", calls: Any = (), *, stop: str | None = None) -> list[bytes]:
    """The frames of a reply: text word by word, or tool uses with their input in pieces."""
    frames = [event("messageStart", {"role": "assistant"})]
    if calls:
        for index, (name, args) in enumerate(calls):
            start = {"toolUse": {"toolUseId": f"tooluse_{index}", "name": name}}
            frames.append(event("contentBlockStart", {"contentBlockIndex": index, "start": start}))
            raw = json.dumps(args)
            for cut in range(0, len(raw), 6):
                delta = {"toolUse": {"input": raw[cut : cut + 6]}}
                frames.append(
                    event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
                )
            frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
    else:
        for i, word in enumerate(text.split(" ")):
            delta = {"text": word if i == 0 else " " + word}
            frames.append(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": delta}))
        frames.append(event("contentBlockStop", {"contentBlockIndex": 0}))
    frames.append(
        event("messageStop", {"stopReason": stop or ("tool_use" if calls else "end_turn")})
    )
    usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15, "cacheReadInputTokens": 4}
    frames.append(event("metadata", {"usage": usage, "metrics": {"latencyMs": 12}}))
    return frames
