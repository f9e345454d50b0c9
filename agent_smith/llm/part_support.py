"""Which content parts a model takes, and the checks made before a request is sent.

Each provider client declares a :class:`PartSupport` on its
:class:`~agent_smith.llm.model.ModelCapabilities`: the media types it takes
(an image, a document, audio), which kinds it takes by URL, which it takes
inside a tool result, and its size limit per kind. Before a request's body
is built, :func:`check_parts` refuses what the provider would reject in a
user's message with a :class:`~agent_smith.errors.PartError` naming the
part: a kind or media type it does not take, bytes that are not what their
media type says (magic bytes), bytes over its limit, a URL it cannot take
or one inside the private ranges (the web toolkit's SSRF rules). Nothing
is dropped silently.

A tool's result is not the user's to fix, and refusing it would refuse
every later request of the conversation too: :func:`place_tool_parts`
moves the parts of tool results that a provider takes only in a user
message into one right after those results, as the providers' own guides
do, and replaces a part it would refuse by a note saying so (the model
reads why; the log says it at INFO).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..base.parts import (
    Content,
    MediaPart,
    TextPart,
    content_text,
    normal_media_type,
    sniff_media_type,
)
from ..errors import PartError
from ..messages import Message, ToolMessage, UserMessage

log = logging.getLogger(__name__)

_MB = 1024 * 1024

#: Images every provider with vision takes.
COMMON_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

# Media types whose magic bytes the sniffer knows: bytes declared as one of
# these must start with them.
_SNIFFED = frozenset(
    {"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "audio/wav"}
)


@dataclass(frozen=True)
class PartSupport:
    """The content parts a model takes (see the module doc).

    ``media_types`` are the types taken (``"text/*"`` takes every text type);
    ``urls`` and ``in_tool_results`` are part kinds (``"image"``,
    ``"document"``, ``"audio"``); ``max_bytes`` pairs a kind with the most
    bytes one part of it may carry.
    """

    media_types: frozenset[str] = frozenset()
    urls: frozenset[str] = frozenset()
    in_tool_results: frozenset[str] = frozenset()
    max_bytes: tuple[tuple[str, int], ...] = ()

    def takes(self, media_type: str) -> bool:
        """Whether a part of ``media_type`` may be sent."""
        bare = normal_media_type(media_type)
        family = bare.split("/", 1)[0] + "/"
        if bare.endswith("/*"):  # a URL whose exact type is unknown: any of the family
            return any(taken.startswith(family) for taken in self.media_types)
        return bare in self.media_types or family + "*" in self.media_types

    def limit(self, kind: str) -> int | None:
        """The most bytes one part of ``kind`` may carry, if the provider says."""
        return dict(self.max_bytes).get(kind)

    @property
    def kinds(self) -> frozenset[str]:
        """The part kinds taken at all."""
        found = set()
        for media_type in self.media_types:
            if media_type.startswith("image/"):
                found.add("image")
            elif media_type.startswith("audio/"):
                found.add("audio")
            else:
                found.add("document")
        return frozenset(found)


#: A model that takes text only.
NO_PARTS = PartSupport()


#: A model that takes every part kind the library knows, anywhere (a test model's default).
ANY_PARTS = PartSupport(
    media_types=frozenset({"image/*", "audio/*", "application/pdf", "text/*"}),
    urls=frozenset({"image", "document", "audio"}),
    in_tool_results=frozenset({"image", "document", "audio"}),
)


def check_parts(messages: Sequence[Message], support: PartSupport, who: str) -> None:
    """Raise PartError for the first part of a user message in ``messages`` that ``who``
    would not take (tool results: :func:`place_tool_parts`)."""
    for index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            check_content(message.content, f"messages[{index}]", support, who)


def check_content(content: Content, where: str, support: PartSupport, who: str) -> None:
    """Raise PartError for the first part of ``content`` (named ``where.content[i]``) that
    ``who`` would not take; nothing to do for a string."""
    if isinstance(content, str):
        return
    for position, part in enumerate(content):
        if not isinstance(part, TextPart):
            _check(part, f"{where}.content[{position}]", support, who)


def _check(part: MediaPart, where: str, support: PartSupport, who: str) -> None:
    named = f"{where} {part.describe()}"
    if not support.takes(part.media_type):
        taken = ", ".join(sorted(support.media_types)) or "text only"
        raise PartError(
            f"{who} does not take {named} (it takes {taken})", part=named, reason="unsupported"
        )
    if part.data is None:
        _check_url(str(part.url), part, named, support, who)
        return
    declared = normal_media_type(part.media_type)
    sniffed = sniff_media_type(part.data)
    if (sniffed is not None and sniffed != declared) or (sniffed is None and declared in _SNIFFED):
        raise PartError(
            f"{named}: the bytes are {sniffed or 'not recognised'}, not {part.media_type}",
            part=named,
            reason="media_type",
        )
    if declared.startswith("text/"):
        try:
            part.data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise PartError(
                f"{named}: a text document must be UTF-8 ({err.reason} at byte {err.start})",
                part=named,
                reason="media_type",
            ) from err
    limit = support.limit(part.kind)
    if limit is not None and len(part.data) > limit:
        raise PartError(
            f"{named} is over the {limit / _MB:g} MB {who} takes for one {part.kind}",
            part=named,
            reason="too_large",
        )


def _check_url(url: str, part: MediaPart, named: str, support: PartSupport, who: str) -> None:
    if part.kind not in support.urls:
        raise PartError(
            f"{who} does not take a {part.kind} by URL ({named}): give its bytes",
            part=named,
            reason="unsupported",
        )
    # The web toolkit's rules, imported here: most requests carry no URL part.
    from ..toolkits.ssrf import blocked_reason, resolve

    split = urlsplit(url)
    try:
        addresses = resolve(split.hostname or "", split.port or 443)
    except (OSError, ValueError, UnicodeError):
        return  # not resolvable here: the provider fetches it, or says it cannot
    for address in addresses:
        reason = blocked_reason(address)
        if reason is not None:
            raise PartError(
                f"{named} points inside the private ranges ({reason})",
                part=named,
                reason="private_url",
            )


def place_tool_parts(
    messages: Sequence[Message], support: PartSupport, who: str
) -> Sequence[Message]:
    """``messages`` with their tool results' parts where ``who`` takes them (``messages``
    itself when no result has parts): a part taken in a tool result stays; one taken only
    in a user message follows the run of results in one; one refused becomes a note."""
    if not any(isinstance(m, ToolMessage) and not isinstance(m.content, str) for m in messages):
        return messages
    placed: list[Message] = []
    held: list[TextPart | MediaPart] = []
    for index, message in enumerate(messages):
        if held and not isinstance(message, ToolMessage):  # the run of results is over
            placed.append(UserMessage(tuple(held)))
            held = []
        if isinstance(message, ToolMessage) and not isinstance(message.content, str):
            kept, away = _sorted_parts(message.content, f"messages[{index}]", support, who)
            if away:
                held.append(TextPart(f"The result of {message.name} ({message.tool_call_id}):"))
                held.extend(away)
            if away or kept != message.content:
                media = any(not isinstance(p, TextPart) for p in kept)
                content = kept if media else content_text(kept)
                message = ToolMessage(message.tool_call_id, message.name, content, message.is_error)
        placed.append(message)
    if held:
        placed.append(UserMessage(tuple(held)))
    return placed


def _sorted_parts(
    content: tuple[TextPart | MediaPart, ...], where: str, support: PartSupport, who: str
) -> tuple[tuple[TextPart | MediaPart, ...], tuple[MediaPart, ...]]:
    """A tool result's parts that stay in it (refused ones as notes), and those that go after."""
    kept: list[TextPart | MediaPart] = []
    away: list[MediaPart] = []
    for position, part in enumerate(content):
        if isinstance(part, TextPart):
            kept.append(part)
            continue
        try:
            _check(part, f"{where}.content[{position}]", support, who)
        except PartError as err:
            log.info("a tool result's part is not sent: %s", err)
            kept.append(TextPart(f"[not sent: {err}]"))
            continue
        (away if part.kind not in support.in_tool_results else kept).append(part)
    return tuple(kept), tuple(away)
