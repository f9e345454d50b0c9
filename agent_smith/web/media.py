"""Images, documents and audio in the web protocols' messages, both ways.

Coming in, a user message is text and files: the Vercel AI SDK's ``file``
parts (a ``data:`` URL or an http(s) URL with its ``mediaType``) and AG-UI's
``image`` / ``audio`` / ``document`` parts (a ``data`` or ``url`` source)
become :mod:`~agent_smith.base.parts` parts, in order, and a message of text
alone stays a string. Going out, a tool result's or a stored user message's
parts become the protocol's own again (:func:`media_of`). A part that cannot
be read is a ParseError naming it: the client gets a 400, never a turn that
fails later.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base.media_input import from_data_url, media_part
from ..base.parts import Content, MediaPart, Part, TextPart, media_parts
from ..errors import ConfigError, ParseError, PartError
from ..messages import Message, ToolMessage, UserMessage


def read_part(media_type: object, url: object, *, where: str, name: object = None) -> MediaPart:
    """A file given by a ``data:`` URL or an http(s) URL and its media type; ParseError if bad."""
    if not isinstance(url, str) or not url:
        raise ParseError(f"{where} needs its URL (a data: or http(s) URL)")
    filename = name if isinstance(name, str) and name else None
    try:
        if url.startswith("data:"):
            return from_data_url(url, what=where, name=filename)
        if not isinstance(media_type, str):
            raise ParseError(f"{where} needs its media type")
        return media_part(media_type, url=url, name=filename)
    except (ConfigError, PartError) as err:
        raise ParseError(f"{where}: {err}") from err


def user_content(pieces: Sequence[str | MediaPart], *, empty: str) -> Content:
    """Text pieces and files, in order, as a message's content; ParseError ``empty`` if none.

    Text alone is one string (the cheap form); with files, each text piece
    that is not blank is a :class:`TextPart` in its place.
    """
    if all(isinstance(piece, str) for piece in pieces):
        text = "".join(piece for piece in pieces if isinstance(piece, str))
        if not text.strip():
            raise ParseError(empty)
        return text
    parts: list[Part] = []
    for piece in pieces:
        if not isinstance(piece, str):
            parts.append(piece)
        elif piece.strip():
            parts.append(TextPart(piece))
    return tuple(parts)


def media_of(message: Message) -> tuple[MediaPart, ...]:
    """The images, documents and audio a user message or a tool result carries (none else)."""
    if isinstance(message, UserMessage | ToolMessage):
        return media_parts(message.content)
    return ()
