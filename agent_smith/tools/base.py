"""The tool interface: what a tool declares and what it receives and returns."""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..base.cancellation import CancellationToken
from ..base.parts import Content, Part, TextPart
from ..errors import ConfigError

if TYPE_CHECKING:
    from ..runtime import Runtime

JsonObject = dict[str, Any]

# The rule every tool name follows (what OpenAI-compatible servers accept).
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def check_tool_name(name: str, *, kind: str = "tool") -> None:
    """Raise ConfigError unless ``name`` is 1-64 letters, digits, ``_`` or ``-``."""
    if not _TOOL_NAME.fullmatch(name):
        raise ConfigError(f"{kind} name {name!r} must be 1-64 letters, digits, '_' or '-'")


@dataclass(frozen=True)
class ToolSchema:
    """Name, description and JSON-Schema ``parameters`` the model sees."""

    name: str
    description: str = ""
    parameters: JsonObject = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> JsonObject:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns: text for the model, optionally structured data and parts.

    ``parts`` are images, documents or audio (or more text) that follow the
    text: ``ToolResult("the chart", parts=(ImagePart.from_file("chart.png"),))``.
    The model receives them natively where its provider takes parts in tool
    results, otherwise in a user message right after the result.
    """

    content: str
    is_error: bool = False
    structured: Any = None
    parts: tuple[Part, ...] = ()

    def message_content(self, text: str) -> Content:
        """The content of the tool message: ``text`` alone, or ``text`` then the parts."""
        if not self.parts:
            return text
        return (TextPart(text), *self.parts) if text else self.parts


#: Whether a call needs a person's approval: always, never, or by its arguments.
ApprovalMarker = bool | Callable[[JsonObject], bool]


@dataclass(frozen=True)
class ToolOptions:
    """Per-tool settings.

    ``timeout`` in seconds overrides the agent default. ``requires_approval``
    (``True``, or a predicate of the call's arguments) makes each call wait
    for an approval before it runs (see :mod:`agent_smith.agent.approvals`).
    ``read_only`` declares that the tool only reads: it changes nothing
    outside the conversation (policy modes and approvers may rely on it).
    ``idempotent`` declares that running a call twice does no more than
    running it once: a durable turn recovered after a crash runs such a call
    again when its result was not recorded, where any other call gets an
    error result saying it may or may not have happened
    (:mod:`agent_smith.durable`).
    """

    timeout: float | None = None
    requires_approval: ApprovalMarker = False
    read_only: bool = False
    idempotent: bool = False

    def __post_init__(self) -> None:
        marker = self.requires_approval
        if not isinstance(marker, bool) and not callable(marker):
            raise ConfigError(
                "requires_approval must be True, False or a function of the arguments, "
                f"got {type(marker).__name__}"
            )


class CallingAgent(Protocol):
    """The agent that makes a tool call, as a tool sees it (``ToolContext.agent``).

    The tools layer declares what it needs of the agent instead of importing
    it: :class:`~agent_smith.Agent` satisfies this protocol. A tool that
    builds on the whole agent (a sub-agent) lives in the agent layer and
    checks for the concrete class there.
    """

    @property
    def name(self) -> str:
        """The agent's name."""
        ...

    @property
    def depth(self) -> int:
        """The agent's nesting depth: 0 for a root agent, 1 for its sub-agents..."""
        ...


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may use: its cancel token, remaining budget, etc.

    ``budget`` is the time in seconds the call may still take; ``depth`` the
    nesting depth of the agent that made the call (0 for a root agent);
    ``agent`` that agent itself (``None`` outside an agent loop), for tools
    that build on it, such as sub-agents.
    """

    cancel: CancellationToken
    budget: float
    call_id: str
    logger: logging.Logger
    runtime: Runtime
    depth: int = 0
    agent: CallingAgent | None = None


@dataclass(frozen=True)
class Said:
    """What a conversation has said so far, to check a call's arguments against.

    ``user``: the user's words; ``text``: everything, the user's words, the
    answers and the tool results.
    """

    user: str
    text: str


class Tool(ABC):
    """Base class for tools. Most users write ``@tool`` functions instead."""

    #: Run in the dispatching thread rather than on the pool: only for a tool
    #: that returns at once and never blocks, as no timeout can stop it.
    inline: ClassVar[bool] = False

    @property
    @abstractmethod
    def schema(self) -> ToolSchema:
        """The schema advertised to the model."""

    @abstractmethod
    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        """Run the tool on validated arguments; raise to report an error."""

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def options(self) -> ToolOptions:
        """Default registration options (a per-tool timeout, say)."""
        return ToolOptions()

    def ungrounded(self, args: JsonObject, said: Said) -> str | None:
        """Why ``args`` look made up (not found in the workspace nor in ``said``), or None.

        A cheap check without side effects, asked of a small model's calls
        before they are shown or run (:mod:`agent_smith.agent.grounding`):
        an ungrounded call is taken back and the model chooses again without
        this tool. The default finds nothing.
        """
        return None
