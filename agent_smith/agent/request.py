"""One user turn and its per-turn options: :class:`AgentRequest`.

``Agent.send`` and ``Agent.stream`` take a string, parts (strings and
:class:`~agent_smith.ImagePart`, ``DocumentPart``, ``AudioPart`` in order), a
``UserMessage`` or an ``AgentRequest``; :func:`as_request` turns any of them,
with the ``images`` and typed-output keywords of those calls, into one request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.parts import ImagePart, Part, as_parts, image
from ..errors import ConfigError
from ..llm.part_support import check_content
from ..llm.request import SamplingParams
from ..messages import UserMessage
from .output import OutputMode, check_output_options

if TYPE_CHECKING:
    from ..llm.model import ChatModel


@dataclass(frozen=True)
class AgentRequest:
    """One user turn with per-turn options (``None``: the agent's defaults).

    ``output_type`` asks for a typed final answer, ``output_mode`` says how
    (see :mod:`agent_smith.agent.output`); ConfigError at once when either
    is not usable.
    """

    message: str | UserMessage | Sequence[Part | str]
    sampling: SamplingParams | None = None
    stream: bool | None = None
    output_type: Any = None
    output_mode: OutputMode | None = None

    def __post_init__(self) -> None:
        check_output_options(self.output_type, self.output_mode)

    @cached_property
    def user_message(self) -> UserMessage:
        """:attr:`message` as a UserMessage (made once: a turn asks several times)."""
        m = self.message
        return m if isinstance(m, UserMessage) else UserMessage(m)  # type: ignore[arg-type]


#: What ``Agent.send`` and ``Agent.stream`` accept as a turn.
RequestLike = str | Sequence[Part | str] | UserMessage | AgentRequest

#: What ``images=`` takes: a file path, bytes (media type sniffed), an http(s) URL or a part.
ImageLike = str | Path | bytes | ImagePart


def as_request(
    request: RequestLike,
    output_type: Any = None,
    output_mode: OutputMode | None = None,
    images: Sequence[ImageLike] = (),
) -> AgentRequest:
    """``request`` as an AgentRequest, with ``output_type``/``output_mode`` when given and
    ``images`` after its text (each read now: ConfigError naming a file that cannot be)."""
    if images:
        request = _with_images(request, images)
    if not isinstance(request, AgentRequest):
        return AgentRequest(request, output_type=output_type, output_mode=output_mode)
    if output_type is not None:
        request = replace(request, output_type=output_type)
    return request if output_mode is None else replace(request, output_mode=output_mode)


def _with_images(request: RequestLike, images: Sequence[ImageLike]) -> RequestLike:
    """``request`` with ``images`` as image parts after its content."""
    if isinstance(images, (str, bytes, Path)):
        raise ConfigError("images= takes a list of images (paths, bytes, URLs or ImageParts)")
    added = tuple(image(item) for item in images)
    if isinstance(request, AgentRequest):
        return replace(request, message=_appended(request.message, added))
    return _appended(request, added)


def _appended(
    message: str | Sequence[Part | str] | UserMessage, added: tuple[Part, ...]
) -> UserMessage:
    content = message.content if isinstance(message, UserMessage) else message
    before = (content,) if isinstance(content, str) else tuple(content)
    return UserMessage((*as_parts(before), *added))


def refuse_unsendable(message: UserMessage, llm: ChatModel) -> None:
    """PartError naming the first part of the turn's ``message`` that ``llm`` does not take.

    Checked before the message joins the history, so a refused image leaves
    the conversation as it was (the client checks every request again).
    """
    if isinstance(message.content, str):
        return
    caps = llm.capabilities
    who = f"the model ({caps.provider}{' ' + caps.model if caps.model else ''})"
    check_content(message.content, "message", caps.parts, who)
