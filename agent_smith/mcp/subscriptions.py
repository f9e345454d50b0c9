"""``subscriptions/listen``: how a 2026-07-28 client hears of list changes.

The stateless generation has no session and no GET listening stream. A
client that wants ``list_changed`` notifications opens a long-lived
``subscriptions/listen`` request naming the kinds it wants; the server
acknowledges (``notifications/subscriptions/acknowledged``), then sends those
notifications on the request's stream until it ends the subscription with a
result. Nobody waits for that result: the notifications go, like every
other, to the client's notification handler, and the request ends with the
connection.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..errors import AgentSmithError
from .generation import stamped

if TYPE_CHECKING:
    from .connection import Connection

log = logging.getLogger(__name__)

_KINDS = (
    ("tools", "toolsListChanged"),
    ("resources", "resourcesListChanged"),
    ("prompts", "promptsListChanged"),
)


def listen_filter(capabilities: dict[str, Any]) -> dict[str, bool]:
    """The notifications to ask for: ``list_changed`` of each kind the server says changes."""
    wanted: dict[str, bool] = {}
    for kind, key in _KINDS:
        cap = capabilities.get(kind)
        if isinstance(cap, dict) and cap.get("listChanged") is True:
            wanted[key] = True
    return wanted


def listen(conn: Connection, meta: dict[str, Any], *, timeout: float) -> None:
    """Open ``conn``'s subscription, if its server offers anything to listen to."""
    wanted = listen_filter(conn.capabilities)
    if not wanted:
        return
    params = stamped({"notifications": wanted}, meta)
    try:
        conn.rpc.start("subscriptions/listen", params, timeout=timeout)
    except AgentSmithError as err:  # the calls still work; only the news is missing
        log.warning("MCP server %s: subscriptions/listen failed: %s", conn.rpc.server, err)
