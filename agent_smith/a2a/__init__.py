"""Agent-to-agent (A2A 1.0): call remote agents, and the wire both sides share.

:class:`A2AAgent` is a remote agent as a tool; :class:`A2AClient` the
synchronous client under it; :mod:`.wire` and :mod:`.card` the protocol's
objects. Serving an agent over A2A is the web app's
(``WebApp(..., a2a=True)``, :mod:`agent_smith.web.a2a`).
"""

from __future__ import annotations

from .card import RemoteCard
from .client import A2AClient
from .remote import A2AAgent
from .wire import AgentMessage, ArtifactUpdate, StatusUpdate, TaskView, text_message

__all__ = [
    "A2AAgent",
    "A2AClient",
    "AgentMessage",
    "ArtifactUpdate",
    "RemoteCard",
    "StatusUpdate",
    "TaskView",
    "text_message",
]
