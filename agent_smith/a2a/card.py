"""Agent cards: the card an agent_smith agent publishes, and the check of a remote one.

:func:`agent_card` describes an :class:`~agent_smith.Agent` for A2A
callers: its name and description, one skill per tool and per active
skill, streaming on, the two HTTP bindings at one URL, and the security
schemes the server asks for. :func:`read_card` checks a card fetched from a
remote agent (the fields the protocol requires, with their types) and picks
the interface to call: :class:`RemoteCard`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import A2AProtocolError
from ..tools.base import ToolSchema
from .wire import HTTP_JSON, JSONRPC, PROTOCOL_VERSION, JsonObject

#: ``security_schemes`` for a server whose callers send ``Authorization: Bearer <token>``.
BEARER_SCHEME: Mapping[str, JsonObject] = {
    "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}
}

_TEXT = ["text/plain"]
_REQUIRED = (
    "name",
    "description",
    "supportedInterfaces",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)


def agent_card(
    *,
    name: str,
    description: str,
    url: str,
    tools: Sequence[ToolSchema] = (),
    skills: Sequence[tuple[str, str]] = (),
    version: str = "1.0.0",
    security_schemes: Mapping[str, JsonObject] | None = None,
) -> JsonObject:
    """The card of an agent served at ``url`` (both bindings there), as JSON.

    ``tools`` and ``skills`` (name, description) become the card's skills;
    an agent with neither gets one skill named after itself, as the protocol
    wants at least a description of what it does.
    """
    listed = [_skill(t.name, t.description, "tool") for t in tools]
    listed += [_skill(skill, about, "skill") for skill, about in skills]
    if not listed:
        listed = [_skill(name, description, "agent")]
    card: JsonObject = {
        "name": name,
        "description": description or f"The agent {name}.",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": JSONRPC, "protocolVersion": PROTOCOL_VERSION},
            {"url": url, "protocolBinding": HTTP_JSON, "protocolVersion": PROTOCOL_VERSION},
        ],
        "version": version,
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": [*_TEXT, "application/json"],
        "defaultOutputModes": _TEXT,
        "skills": listed,
    }
    if security_schemes:
        card["securitySchemes"] = dict(security_schemes)
        card["securityRequirements"] = [
            {"schemes": {scheme: {"list": []}}} for scheme in security_schemes
        ]
    return card


def _skill(name: str, description: str, tag: str) -> JsonObject:
    return {"id": name, "name": name, "description": description or name, "tags": [tag]}


@dataclass(frozen=True)
class RemoteCard:
    """A remote agent's checked card: who it is and where to call it.

    ``url`` and ``binding`` (``JSONRPC`` or ``HTTP+JSON``) are the interface
    chosen; ``skills`` the skills' (name, description).
    """

    name: str
    description: str
    url: str
    binding: str
    streaming: bool
    skills: tuple[tuple[str, str], ...]
    raw: JsonObject

    def summary(self) -> str:
        """The description, followed by the skills' names: what a model reads as a tool's use."""
        names = ", ".join(name for name, _ in self.skills[:12])
        return f"{self.description} (skills: {names})" if names else self.description


def read_card(value: object, *, agent: str, binding: str | None = None) -> RemoteCard:
    """Check a card fetched from ``agent`` and pick its interface (``binding``: that one only)."""
    if not isinstance(value, dict):
        raise A2AProtocolError("the agent card is not a JSON object", agent=agent)
    missing = [key for key in _REQUIRED if key not in value]
    if missing:
        raise A2AProtocolError(
            f"the agent card lacks required field(s): {', '.join(missing)}", agent=agent
        )
    for key in ("name", "description", "version"):
        if not isinstance(value[key], str):
            raise A2AProtocolError(f"the agent card's {key!r} is not a string", agent=agent)
    capabilities = value["capabilities"]
    skills = value["skills"]
    if not isinstance(capabilities, dict):
        raise A2AProtocolError("the agent card's 'capabilities' is not an object", agent=agent)
    if not isinstance(skills, list) or not all(_is_skill(s) for s in skills):
        raise A2AProtocolError(
            "the agent card's 'skills' is not a list of skills (id, name, description, tags)",
            agent=agent,
        )
    url, chosen = _interface(value["supportedInterfaces"], agent, binding)
    return RemoteCard(
        value["name"],
        value["description"],
        url,
        chosen,
        capabilities.get("streaming") is True,
        tuple((s["name"], s["description"]) for s in skills),
        value,
    )


def _is_skill(skill: Any) -> bool:
    return (
        isinstance(skill, dict)
        and all(isinstance(skill.get(key), str) for key in ("id", "name", "description"))
        and isinstance(skill.get("tags"), list)
    )


def _interface(interfaces: object, agent: str, binding: str | None) -> tuple[str, str]:
    """The URL and binding to call: JSON-RPC first (the binding every agent has), 1.0 only."""
    if not isinstance(interfaces, list) or not interfaces:
        raise A2AProtocolError("the agent card lists no supportedInterfaces", agent=agent)
    offered: dict[str, str] = {}
    for interface in interfaces:
        if not isinstance(interface, dict) or not isinstance(interface.get("url"), str):
            raise A2AProtocolError("an interface of the agent card has no 'url'", agent=agent)
        version = str(interface.get("protocolVersion", ""))
        if version.split(".")[:2] == PROTOCOL_VERSION.split("."):
            offered.setdefault(str(interface.get("protocolBinding", "")), interface["url"])
    wanted = [binding] if binding is not None else [JSONRPC, HTTP_JSON]
    for name in wanted:
        if name in offered:
            return offered[name], name
    raise A2AProtocolError(
        f"the agent card offers no A2A {PROTOCOL_VERSION} interface over {' or '.join(wanted)}",
        agent=agent,
    )
