"""Media that arrives from outside as a media type and bytes or a URL, made into a part.

An MCP tool result, a Vercel AI SDK file part, an AG-UI image part and the
dev UI's dropped file each say what they carry by media type only: which
part that is (:class:`~agent_smith.parts.ImagePart`, ``AudioPart`` or
``DocumentPart``) is decided here, once. Browsers and the Vercel AI SDK carry
bytes as ``data:`` URLs (RFC 2397), read and written here too.
"""

from __future__ import annotations

import base64
import binascii

from ..errors import ConfigError, PartError
from .parts import AudioPart, DocumentPart, ImagePart, MediaPart, normal_media_type

_KINDS: tuple[type[ImagePart] | type[AudioPart] | type[DocumentPart], ...] = (
    ImagePart,
    AudioPart,
    DocumentPart,
)


def media_part(
    media_type: str, *, data: bytes | None = None, url: str | None = None, name: str | None = None
) -> MediaPart:
    """The part of the kind that takes ``media_type``; ConfigError when no kind does."""
    normal = normal_media_type(media_type)
    for kind in _KINDS:
        if any(normal.startswith(family) for family in kind.families):
            return kind(media_type, data=data, url=url, name=name)
    raise ConfigError(
        f"media type {media_type!r} is no image, audio or document (PDF or text) a model can read"
    )


def decode_base64(encoded: str, *, what: str) -> bytes:
    """Strict base64 (no stray characters); PartError naming ``what`` when it is not."""
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as err:
        raise PartError(
            f"{what}: the data is not valid base64 ({err})", part=what, reason="encoding"
        ) from err


def from_data_url(url: str, *, what: str, name: str | None = None) -> MediaPart:
    """The part a ``data:<media type>;base64,<data>`` URL carries; PartError if it is malformed."""
    head, comma, encoded = url.partition(",")
    fields = head.removeprefix("data:").split(";")
    if not url.startswith("data:") or not comma or fields[-1] != "base64" or "/" not in fields[0]:
        raise PartError(
            f"{what}: expected a data:<type>;base64,... URL", part=what, reason="encoding"
        )
    return media_part(fields[0], data=decode_base64(encoded, what=what), name=name)


def to_data_url(part: MediaPart) -> str:
    """The part as a URL a browser shows: its own URL, or a ``data:`` URL of its bytes."""
    if part.data is None:
        return str(part.url)
    return f"data:{part.media_type};base64,{base64.b64encode(part.data).decode('ascii')}"
