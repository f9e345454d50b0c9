"""The truncation helpers: text cut to a byte budget on a UTF-8 boundary, or to one short line.

Tool results, context blocks and log excerpts that may be large all go
through :func:`truncate_utf8` so the cut and its marker look the same
everywhere (seed §10.4). A message shown on one line (an error in a results
file) goes through :func:`one_line`.
"""

from __future__ import annotations

TRUNCATION_MARKER = "\n…[truncated, original size {size} bytes]"


def truncate_utf8(text: str, max_bytes: int) -> str:
    """Return ``text`` unchanged if its UTF-8 form fits in ``max_bytes``.

    Otherwise keep the longest prefix of at most ``max_bytes`` bytes that ends
    on a character boundary and append the marker
    ``\\n…[truncated, original size N bytes]`` (N is the original UTF-8 size).
    The marker itself is not counted against ``max_bytes``.
    """
    if max_bytes < 0:
        raise ValueError("max_bytes must not be negative")
    # Fast path: a str of n code points is at most 4n bytes in UTF-8.
    if len(text) * 4 <= max_bytes:
        return text
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return utf8_prefix(data, max_bytes).decode("utf-8") + TRUNCATION_MARKER.format(size=len(data))


def utf8_prefix(data: bytes, max_bytes: int) -> bytes:
    """The longest prefix of ``data`` (UTF-8) within ``max_bytes`` that splits no character."""
    if len(data) <= max_bytes:
        return data
    cut = max_bytes
    # Back up over continuation bytes (0b10xxxxxx) so no character is split.
    while cut > 0 and data[cut] & 0xC0 == 0x80:
        cut -= 1
    return data[:cut]


def one_line(text: str, max_chars: int) -> str:
    """``text`` with every run of whitespace made one space, at most ``max_chars`` long.

    A longer text keeps its first ``max_chars - 1`` characters and ends in ``…``.
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 1] + "…"
