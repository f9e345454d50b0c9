"""The Skill value and the rule that turns a skill's name into a tool prefix.

A skill bundles a system prompt, tools, MCP clients and context data that an
agent switches on with ``agent.activate(skill)`` and off with
``agent.deactivate(name)`` (seed §12). The skill's own tools reach the model
as ``<normalized_name>__<tool>``; :func:`normalize_skill_name` defines that
prefix.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._internal.closing import Closeable
from ..errors import AgentSmithError, SkillError
from ..tools.base import Tool
from ..tools.function import make_tool

if TYPE_CHECKING:
    from ..mcp.client import McpClient

log = logging.getLogger("agent_smith.skill")

# Words of ASCII letters and digits, the first starting with a letter, joined
# by exactly one separator ('-', '_', '.' or a space).
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_. ][A-Za-z0-9]+)*")
_SEPARATOR = re.compile(r"[-_. ]")


#: Longest tool prefix a skill name may give: ``<prefix>__<tool>`` must fit the
#: 64-character tool names of the OpenAI format with room for the tool's own name.
MAX_PREFIX_LENGTH = 32


def normalize_skill_name(name: str) -> str:
    """The tool prefix of a skill: ``"Web-Search"`` -> ``"web_search"``.

    Rule: surrounding whitespace is ignored; the name must be words of ASCII
    letters and digits, the first word starting with a letter, joined by
    single separators (``-``, ``_``, ``.`` or a space). The result is the
    name lower-cased with each separator replaced by ``_``, at most
    :data:`MAX_PREFIX_LENGTH` characters (tool names the model sees are capped
    at 64, and the prefix must leave room for ``__<tool>``), so it matches
    ``[a-z][a-z0-9]*(_[a-z0-9]+)*``: it never contains ``__`` and never ends
    in ``_``, which keeps ``<skill>__<tool>`` splittable at its first ``__``.

    Anything else is refused with :class:`SkillError` rather than guessed at:
    an empty name, a leading digit or separator, a trailing separator, two
    separators in a row, or any other character (dropping ``+`` or ``é``
    would silently give ``c++`` and ``c`` the same prefix). Names that differ
    only in case or separator (``Web Search``, ``web-search``) share a prefix
    on purpose: an agent treats them as the same skill.
    """
    if not isinstance(name, str):
        raise SkillError(f"skill name must be a string, got {type(name).__name__}", skill_name="?")
    stripped = name.strip()
    if not _NAME.fullmatch(stripped):
        raise SkillError(
            f"skill name {name!r} cannot be normalised: use ASCII letters and digits, "
            "starting with a letter, with single '-', '_', '.' or spaces between words",
            skill_name=name,
        )
    prefix = _SEPARATOR.sub("_", stripped).lower()
    if len(prefix) > MAX_PREFIX_LENGTH:
        raise SkillError(
            f"skill name {name!r} is too long: its tool prefix may have at most "
            f"{MAX_PREFIX_LENGTH} characters",
            skill_name=name,
        )
    return prefix


def _as_tool(item: Tool | Callable[..., Any], skill_name: str) -> Tool:
    if isinstance(item, Tool):
        return item
    if callable(item):
        try:
            return make_tool(item)
        except AgentSmithError as err:
            raise SkillError(
                f"skill {skill_name!r}: cannot make a tool of {item!r}: {err}",
                skill_name=skill_name,
            ) from err
    raise SkillError(
        f"skill {skill_name!r}: tools must be Tool objects or functions, got {item!r}",
        skill_name=skill_name,
    )


@dataclass(frozen=True)
class Skill(Closeable):
    """A named bundle of system prompt, tools, MCP clients and context data.

    ``tools`` may hold :class:`~agent_smith.Tool` objects or plain functions
    (wrapped with ``make_tool``); lists are stored as tuples. Their names stay
    unprefixed here; the agent adds the ``<normalized_name>__`` prefix when
    it activates the skill. ``context_data`` is any JSON value shown to the
    model under its own heading (``None``: no context section).

    A skill made by :func:`load_skill` owns the MCP clients it connected and
    closes them in :meth:`close`; clients passed in by the caller stay the
    caller's to close.
    """

    name: str
    system_prompt: str = ""
    tools: tuple[Tool, ...] = ()
    mcp_clients: tuple[McpClient, ...] = ()
    context_data: Any = None
    description: str = ""
    _owned: list[McpClient] = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tools = tuple(_as_tool(t, self.name) for t in self.tools)
        object.__setattr__(self, "tools", tools)
        object.__setattr__(self, "mcp_clients", tuple(self.mcp_clients))

    @property
    def normalized_name(self) -> str:
        """The tool prefix (see :func:`normalize_skill_name`); raises SkillError."""
        return normalize_skill_name(self.name)

    def close(self) -> None:
        """Close the MCP clients this skill connected itself; safe to call twice."""
        close_clients(self._owned, skill_name=self.name)


def close_clients(clients: list[McpClient], *, skill_name: str) -> None:
    """Close and remove every client in ``clients``, newest first."""
    while clients:
        client = clients.pop()
        try:
            client.close()
        except Exception:
            # Closing is best effort: one stuck server must not keep the others open.
            log.warning("skill %r: closing an MCP client failed", skill_name, exc_info=True)


def adopt_clients(skill: Skill, clients: list[McpClient]) -> Skill:
    """Mark ``clients`` as owned by ``skill`` (closed by ``skill.close()``)."""
    skill._owned.extend(clients)
    return skill
