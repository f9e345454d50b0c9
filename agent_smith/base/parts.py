"""Content parts: text, images, documents and audio inside a message.

A user message's or a tool result's ``content`` is either a string (the fast
path, as cheap as a plain message) or a tuple of frozen parts, in order:
:class:`TextPart`, :class:`ImagePart`, :class:`DocumentPart` and
:class:`AudioPart`. A media part carries its media type and either its
bytes (``data``) or a URL (``url``), never both. Bytes stay raw in memory;
each provider base64-encodes them once, when it builds a request body.

The JSON form (:func:`part_to_dict` / :func:`part_from_dict`) is what
histories, sessions and paused turns store: ``{"type": "image",
"media_type": "image/png", "data": "<base64>"}`` inline, or ``"url"``
instead of ``"data"`` for a part given by reference (a URL stays a URL in
the history; the bytes are never copied into it). A part's bytes are
bounded by :data:`MAX_PART_BYTES`.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from ..errors import ConfigError, ParseError, PartError

JsonObject = dict[str, Any]

#: The most bytes one part may carry (no provider takes more in one request).
MAX_PART_BYTES = 64 * 1024 * 1024

#: The URL schemes a part may point to (the provider or the library fetches them).
URL_SCHEMES = frozenset({"http", "https"})

# Magic bytes of the media types the library recognises: (offset, prefix, media type).
_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "image/png"),
    (0, b"\xff\xd8\xff", "image/jpeg"),
    (0, b"GIF87a", "image/gif"),
    (0, b"GIF89a", "image/gif"),
    (8, b"WEBP", "image/webp"),  # after "RIFF" and a length
    (0, b"%PDF-", "application/pdf"),
    (8, b"WAVE", "audio/wav"),  # after "RIFF" and a length
    (0, b"ID3", "audio/mpeg"),
    (0, b"\xff\xfb", "audio/mpeg"),
    (0, b"\xff\xf3", "audio/mpeg"),
    (0, b"\xff\xf2", "audio/mpeg"),
    (0, b"fLaC", "audio/flac"),
    (0, b"OggS", "audio/ogg"),
)

# Spellings that name the same media type as the one the sniffer returns.
_ALIASES = {
    "image/jpg": "image/jpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/mp3": "audio/mpeg",
    "audio/x-flac": "audio/flac",
}


def sniff_media_type(data: bytes) -> str | None:
    """The media type the magic bytes at the start of ``data`` announce, or None."""
    for offset, prefix, media_type in _MAGIC:
        if data.startswith(prefix, offset):
            if offset == 8 and not data.startswith(b"RIFF"):
                continue
            return media_type
    return None


def normal_media_type(media_type: str) -> str:
    """``media_type`` lower-cased, without parameters, common aliases resolved."""
    bare = media_type.split(";", 1)[0].strip().lower()
    return _ALIASES.get(bare, bare)


@dataclass(frozen=True)
class TextPart:
    """Text among other parts."""

    text: str
    kind: ClassVar[str] = "text"


@dataclass(frozen=True)
class _MediaPart:
    """A part with a media type and either its bytes or a URL (see the subclasses).

    ``name`` is an optional file name (OpenAI's ``file`` parts and Bedrock's
    documents want one; the others ignore it).
    """

    media_type: str
    data: bytes | None = None
    url: str | None = None
    name: str | None = None
    kind: ClassVar[str] = ""
    #: The media type families this kind accepts (a prefix, or a whole type).
    families: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.media_type, str) or "/" not in self.media_type:
            raise ConfigError(f"{self.kind} part: media_type must be like 'type/subtype'")
        if not any(
            normal_media_type(self.media_type).startswith(family) for family in self.families
        ):
            raise ConfigError(
                f"{self.kind} part: media type {self.media_type!r} is not one of "
                f"{', '.join(self.families)}"
            )
        if (self.data is None) == (self.url is None):
            raise ConfigError(f"{self.kind} part: give either data or url, not both or neither")
        if self.data is not None:
            if not isinstance(self.data, bytes):
                raise ConfigError(
                    f"{self.kind} part: data must be bytes, got {type(self.data).__name__}"
                )
            if len(self.data) > MAX_PART_BYTES:
                raise PartError(
                    f"{self.kind} part of {_size(len(self.data))} is over the "
                    f"{_size(MAX_PART_BYTES)} a part may carry",
                    part=self.describe(),
                    reason="too_large",
                )
        elif not isinstance(self.url, str) or urlsplit(self.url).scheme not in URL_SCHEMES:
            raise ConfigError(f"{self.kind} part: url must be http(s), got {self.url!r}")

    @classmethod
    def from_bytes(
        cls, data: bytes, media_type: str | None = None, *, name: str | None = None
    ) -> Any:
        """A part of ``data``; the media type sniffed from its magic bytes when not given."""
        kind = media_type or sniff_media_type(data)
        if kind is None:
            raise ConfigError(f"{cls.kind} part: cannot tell the media type of the bytes; give one")
        return cls(kind, data=data, name=name)

    @classmethod
    def from_file(cls, path: str | Path, media_type: str | None = None) -> Any:
        """A part of the file at ``path`` (its bytes read now), media type sniffed or guessed."""
        file = Path(path)
        try:
            data = file.read_bytes()
        except OSError as err:
            raise ConfigError(f"{cls.kind} part: cannot read {str(file)!r}: {err}") from err
        kind = media_type or sniff_media_type(data) or mimetypes.guess_type(file.name)[0]
        if kind is None:
            raise ConfigError(f"{cls.kind} part: cannot tell the media type of {str(file)!r}")
        return cls(kind, data=data, name=file.name)

    @property
    def size(self) -> int:
        """The number of bytes carried (0 for a URL part)."""
        return 0 if self.data is None else len(self.data)

    def describe(self) -> str:
        """What the part is, for error messages: kind, media type and size or URL."""
        where = _size(len(self.data)) if self.data is not None else str(self.url)[:80]
        return f"{self.kind} ({self.media_type}, {where})"


@dataclass(frozen=True)
class ImagePart(_MediaPart):
    """An image: ``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``..."""

    kind: ClassVar[str] = "image"
    families: ClassVar[tuple[str, ...]] = ("image/",)


@dataclass(frozen=True)
class DocumentPart(_MediaPart):
    """A document: a PDF (``application/pdf``) or a text file (``text/plain``, ``text/csv``...)."""

    kind: ClassVar[str] = "document"
    families: ClassVar[tuple[str, ...]] = ("application/pdf", "text/")

    @property
    def is_text(self) -> bool:
        """A text file (``text/*``), which providers without documents may take as text."""
        return normal_media_type(self.media_type).startswith("text/")

    def as_text(self) -> str:
        """A text document as text for the model: its name (if any) on a line, then its text."""
        text = (self.data or b"").decode("utf-8", errors="replace")
        return f"{self.name}:\n{text}" if self.name else text


@dataclass(frozen=True)
class AudioPart(_MediaPart):
    """Audio: ``audio/wav``, ``audio/mpeg``, ``audio/flac``, ``audio/ogg``..."""

    kind: ClassVar[str] = "audio"
    families: ClassVar[tuple[str, ...]] = ("audio/",)


MediaPart = ImagePart | DocumentPart | AudioPart
Part = TextPart | ImagePart | DocumentPart | AudioPart

#: A message's content: a string, or parts in order.
Content = str | tuple[Part, ...]

_MEDIA_KINDS: dict[str, type[_MediaPart]] = {
    cls.kind: cls for cls in (ImagePart, DocumentPart, AudioPart)
}


def content_text(content: Content) -> str:
    """The text of ``content``: itself if a string, else its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


def media_parts(content: Content) -> tuple[MediaPart, ...]:
    """The images, documents and audio in ``content`` (none for a string)."""
    if isinstance(content, str):
        return ()
    return tuple(part for part in content if not isinstance(part, TextPart))


#: Rough tokens of one image, whatever its size: Anthropic's figure for a ~1.15-megapixel
#: image (OpenAI's high detail and Gemini's tiles cost less); a URL part counts the same.
IMAGE_TOKENS = 1600


def estimated_tokens(part: MediaPart) -> int:
    """A rough count of the tokens ``part`` costs a model, for estimates before sending.

    An image (or any part by URL) :data:`IMAGE_TOKENS`; a text document its
    characters / 4; a PDF a token per 40 bytes (a 60 kB page of text and
    images is ~1,500 tokens); audio a token per 500 bytes (32 tokens a
    second, as Gemini counts it, of 128 kbit/s MP3).
    """
    if part.data is None or isinstance(part, ImagePart):
        return IMAGE_TOKENS
    if isinstance(part, DocumentPart):
        return len(part.data) // (4 if part.is_text else 40)
    return len(part.data) // 500


def as_parts(items: Iterable[object]) -> tuple[Part, ...]:
    """``items`` as parts: a part stays, a string becomes a :class:`TextPart`."""
    if isinstance(items, str) or not isinstance(items, Iterable):
        raise ConfigError(f"content must be a string or parts, got {type(items).__name__}")
    parts: list[Part] = []
    for item in items:
        if isinstance(item, str):
            parts.append(TextPart(item))
        elif isinstance(item, (TextPart, ImagePart, DocumentPart, AudioPart)):
            parts.append(item)
        else:
            raise ConfigError(f"content parts must be parts or strings, got {type(item).__name__}")
    return tuple(parts)


def image(source: str | Path | bytes | ImagePart, media_type: str | None = None) -> ImagePart:
    """An image part from a file path, bytes or an http(s) URL (a part is returned as it is)."""
    if isinstance(source, ImagePart):
        return source
    if isinstance(source, bytes):
        return ImagePart.from_bytes(source, media_type)  # type: ignore[no-any-return]
    if isinstance(source, str) and urlsplit(source).scheme in URL_SCHEMES:
        guessed = media_type or mimetypes.guess_type(urlsplit(source).path)[0] or "image/*"
        return ImagePart(guessed, url=source)
    return ImagePart.from_file(source, media_type)  # type: ignore[no-any-return]


def part_to_dict(part: Part) -> JsonObject:
    """A part in the stored JSON form: its bytes base64-encoded inline, or its URL."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    stored: JsonObject = {"type": part.kind, "media_type": part.media_type}
    if part.data is not None:
        stored["data"] = base64.b64encode(part.data).decode("ascii")
    else:
        stored["url"] = part.url
    if part.name is not None:
        stored["name"] = part.name
    return stored


def part_from_dict(data: object, where: str) -> Part:
    """Read a part written by :func:`part_to_dict`; ParseError or PartError naming ``where``."""
    if not isinstance(data, dict):
        raise ParseError(f"{where} must be an object, got {type(data).__name__}")
    kind = data.get("type")
    if kind == "text":
        text = data.get("text")
        if not isinstance(text, str):
            raise ParseError(f"{where}: a text part needs a string 'text'")
        return TextPart(text)
    cls = _MEDIA_KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ParseError(f"{where} has unknown part type {kind!r}")
    media_type, encoded, url, name = (data.get(k) for k in ("media_type", "data", "url", "name"))
    if not isinstance(media_type, str):
        raise ParseError(f"{where}: a {kind} part needs a string 'media_type'")
    if name is not None and not isinstance(name, str):
        raise ParseError(f"{where}: 'name' must be a string")
    try:
        if isinstance(encoded, str):
            try:
                raw = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError) as err:
                raise PartError(
                    f"{where}: the {kind} part's data is not valid base64 ({err})",
                    part=f"{where} ({kind}, {media_type})",
                    reason="encoding",
                ) from err
            return cls(media_type, data=raw, name=name)  # type: ignore[return-value]
        if isinstance(url, str):
            return cls(media_type, url=url, name=name)  # type: ignore[return-value]
    except ConfigError as err:
        raise ParseError(f"{where}: {err}") from err
    raise ParseError(f"{where}: a {kind} part needs a base64 'data' or a 'url' string")


def content_to_json(content: Content) -> str | list[JsonObject]:
    """Content in the stored JSON form: a string as it is, parts as a list of objects."""
    if isinstance(content, str):
        return content
    return [part_to_dict(part) for part in content]


def content_from_json(data: object, where: str) -> Content:
    """Read content written by :func:`content_to_json`; ParseError naming ``where``."""
    if isinstance(data, str):
        return data
    if not isinstance(data, list):
        raise ParseError(f"{where} must be a string or a list of parts")
    return parts_from_json(data, where)


def parts_from_json(data: list[object], where: str) -> tuple[Part, ...]:
    """Read a list of stored parts; ParseError or PartError naming the part."""
    return tuple(part_from_dict(item, f"{where}[{i}]") for i, item in enumerate(data))


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MB"
    if count >= 1024:
        return f"{count / 1024:.1f} kB"
    return f"{count} bytes"
