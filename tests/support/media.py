"""Small, valid media files for tests, made here: a PNG, a WAV and a PDF.

Real files, not just magic bytes: llama.cpp decodes the PNG, a browser shows
it, and each sniffs as its media type.
"""

from __future__ import annotations

import base64
import struct
import zlib


def png(width: int = 8, height: int = 8, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A PNG of one colour (8-bit RGB, no interlace)."""
    row = b"\x00" + bytes(rgb) * width  # filter byte "none", then the pixels

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def wav(samples: int = 80) -> bytes:
    """A WAV of silence: 8 kHz, 16-bit mono."""
    data = b"\x00\x00" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


PNG = png()
WAV = wav()
#: The smallest file that sniffs as a PDF (what the tests check is the path, not the reader).
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
