"""One user turn and its per-turn options: :class:`AgentRequest`.

``Agent.send`` and ``Agent.stream`` take a string, a ``UserMessage`` or an
``AgentRequest``; :func:`as_request` turns any of them, with the typed-output
keywords of those calls, into one request.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ..llm.request import SamplingParams
from ..messages import UserMessage
from .output import OutputMode, check_output_options


@dataclass(frozen=True)
class AgentRequest:
    """One user turn with per-turn options (``None``: the agent's defaults).

    ``output_type`` asks for a typed final answer, ``output_mode`` says how
    (see :mod:`agent_smith.agent.output`); ConfigError at once when either
    is not usable.
    """

    message: str | UserMessage
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
        return m if isinstance(m, UserMessage) else UserMessage(m)


#: What ``Agent.send`` and ``Agent.stream`` accept as a turn.
RequestLike = str | UserMessage | AgentRequest


def as_request(
    request: RequestLike, output_type: Any = None, output_mode: OutputMode | None = None
) -> AgentRequest:
    """``request`` as an AgentRequest, with ``output_type``/``output_mode`` when given."""
    if not isinstance(request, AgentRequest):
        return AgentRequest(request, output_type=output_type, output_mode=output_mode)
    if output_type is not None:
        request = replace(request, output_type=output_type)
    return request if output_mode is None else replace(request, output_mode=output_mode)
