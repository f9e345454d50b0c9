"""Bytes in a JSON request body, base64-encoded once, when the body is serialised.

A provider puts a :class:`Base64Data` where its wire format wants a base64
string (an image's ``data``, an OpenAI ``data:`` URL); the body dict holds a
reference to the part's bytes, never a copy. :func:`encode_body` turns the
body into the bytes sent: JSON text with each blob's base64 written into
one buffer a slice at a time, so sending a large image holds its bytes and
the body, no whole base64 string and no joined copy
(``scripts/bench_image_memory.py`` measures it). A body without blobs is
encoded exactly as before, at the same cost.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from .._internal import json_output

# Stands for blob N in the JSON text until the base64 is spliced in.
_MARK = "\ue000agent_smith-blob-{}\ue000"

# Bytes base64-encoded at a time (a multiple of 3: the slices' base64 joins up).
_SLICE = 3 * 256 * 1024


class Base64Data:
    """Bytes that go on the wire as base64 text, after ``prefix`` (``"data:image/png;base64,"``)."""

    __slots__ = ("data", "prefix")

    def __init__(self, data: bytes, prefix: str = "") -> None:
        self.data = data
        self.prefix = prefix

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Base64Data):
            return NotImplemented
        return self.data == other.data and self.prefix == other.prefix

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:  # logged bodies show a size, never the bytes
        return f"{self.prefix}<base64 of {len(self.data)} bytes>"

    def text(self) -> str:
        """The wire text: the prefix and the base64 (for the rare caller that needs a string)."""
        return self.prefix + base64.b64encode(self.data).decode("ascii")


def data_url_prefix(media_type: str) -> str:
    """The start of a ``data:`` URL of base64 bytes of ``media_type``."""
    return f"data:{media_type};base64,"


def encode_body(body: Any) -> bytes:
    """``body`` as UTF-8 JSON bytes, each :class:`Base64Data` written as its base64 string."""
    try:
        return json_output.dumps(body).encode("utf-8")
    except TypeError:
        pass  # a blob: the slow path below
    blobs: list[Base64Data] = []

    def mark(value: object) -> str:
        if not isinstance(value, Base64Data):
            raise TypeError(f"{type(value).__name__} is not JSON serialisable")
        blobs.append(value)
        return _MARK.format(len(blobs) - 1)

    text = json.JSONEncoder(ensure_ascii=False, default=mark).encode(body)
    pieces: list[bytes | Base64Data] = []
    for index, blob in enumerate(blobs):
        before, text = text.split(_MARK.format(index), 1)
        pieces.append((before + blob.prefix).encode("utf-8"))
        pieces.append(blob)
    pieces.append(text.encode("utf-8"))
    return _joined(pieces)


def _joined(pieces: list[bytes | Base64Data]) -> bytes:
    """The pieces in one buffer, each blob's base64 written into it a slice at a time.

    A bytearray, which ``requests`` sends as it is: no joined copy, and no
    whole base64 string of a blob beside the body.
    """
    sizes = [len(p) if isinstance(p, bytes) else 4 * -(-len(p.data) // 3) for p in pieces]
    body = bytearray(sum(sizes))
    at = 0
    for piece, size in zip(pieces, sizes, strict=True):
        if isinstance(piece, bytes):
            body[at : at + size] = piece
        else:
            view = memoryview(piece.data)
            for start in range(0, len(view), _SLICE):
                encoded = base64.b64encode(view[start : start + _SLICE])
                body[at : at + len(encoded)] = encoded
                at += len(encoded)
            continue
        at += size
    return body  # type: ignore[return-value]  # bytes-like: sent, hashed and measured alike
