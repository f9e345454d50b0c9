"""What an MCP client tells its hook: server notifications and lifecycle changes."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Notification:
    """A notification the server sent (logging, progress, list_changed, ...)."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)


class LifecycleKind(enum.Enum):
    """How the connection to a server changed."""

    CONNECTED = "connected"
    DISCONNECTED = "disconnected"
    RECONNECTING = "reconnecting"
    RECONNECT_FAILED = "reconnect_failed"


@dataclass(frozen=True)
class LifecycleEvent:
    """The connection to server ``server`` (its alias) changed; ``message`` says how."""

    kind: LifecycleKind
    server: str
    message: str = ""


McpEvent = Notification | LifecycleEvent
McpHook = Callable[[McpEvent], None]
