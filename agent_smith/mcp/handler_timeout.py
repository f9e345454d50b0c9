"""Where the client's handlers (elicitation, sampling, roots) run, and how long they may take.

A server request that reaches the client as a frame (the handshake
generation) is answered on a thread of its own
(``agent_smith-mcp-request-<alias>``, :class:`HandlerThreads`): a handler
that waits for a person (an elicitation) holds up neither the client's hook
events and list refreshes nor the answers to other server requests.

While an elicitation handler runs, a person is being asked: the client's
:class:`~agent_smith.tools.person_wait.WaitClock` is held, so the timeouts of
its requests in flight (and of the tool calls that made them) stop counting.

With ``ServerConfig(handler_timeout=...)`` each handler call runs on a
thread of its own (``agent_smith-mcp-handler-<alias>``) and its caller waits
at most that long: a handler that has not answered by then becomes the
protocol's error answer (or, at 2026-07-28, fails the call that needed the
input), never a request the server waits on forever. A handler still running
then is left to finish; ``close()`` waits for such threads a little and
names any that will not end.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ..errors import McpError
from ..tools.person_wait import WaitClock, waiting_for_person
from .config import ServerConfig
from .jsonrpc import INTERNAL_ERROR, RequestHandler

log = logging.getLogger(__name__)

_JOIN_TIMEOUT = 2.0


class HandlerThreads:
    """Runs each job on a thread of its own (``agent_smith-mcp-<kind>-<alias>``), joined later."""

    def __init__(self, alias: str, kind: str = "request") -> None:
        self._name = f"agent_smith-mcp-{kind}-{alias}"
        self._lock = threading.Lock()
        self._running: set[threading.Thread] = set()

    def submit(self, job: Callable[[], None]) -> None:
        """Start ``job`` now on a new thread (the JSON-RPC peer's ``dispatch``)."""

        def run() -> None:
            try:
                job()
            except Exception:  # the peer answers the server itself; this is a bug
                log.exception("MCP server request job failed")
            finally:
                with self._lock:
                    self._running.discard(threading.current_thread())

        # Daemon only so a client nobody closed cannot hang interpreter exit; close() joins.
        thread = threading.Thread(target=run, name=self._name, daemon=True)
        with self._lock:
            self._running.add(thread)
        thread.start()

    def close(self) -> None:
        """Wait briefly for jobs still running; name those that will not end."""
        with self._lock:
            running = [t for t in self._running if t is not threading.current_thread()]
        for thread in running:
            thread.join(_JOIN_TIMEOUT)
            if thread.is_alive():
                log.warning("%s is stuck in a handler; not joined", thread.name)


class HandlerBound:
    """Wraps handlers of server ``alias`` so each answers within ``timeout`` seconds."""

    def __init__(self, alias: str, timeout: float) -> None:
        self._alias = alias
        self._timeout = timeout
        self._threads = HandlerThreads(alias, "handler")

    def wrap(self, method: str, handler: RequestHandler) -> RequestHandler:
        """``handler``, bounded."""

        def bounded(params: dict[str, Any]) -> dict[str, Any]:
            outcome: dict[str, Any] = {}
            done = threading.Event()

            def run() -> None:
                try:
                    outcome["result"] = handler(params)
                except BaseException as err:  # handed to the caller below
                    outcome["error"] = err
                finally:
                    done.set()

            self._threads.submit(run)
            if not done.wait(self._timeout):
                raise McpError(
                    f"the client's {method} handler did not answer within {self._timeout:g}s",
                    server=self._alias,
                    rpc_code=INTERNAL_ERROR,
                )
            if "error" in outcome:
                raise outcome["error"]
            result: dict[str, Any] = outcome["result"]
            return result

        return bounded

    def close(self) -> None:
        """Wait briefly for handlers still running; name those that will not end."""
        self._threads.close()


def server_request_handlers(
    config: ServerConfig,
    *,
    elicitation: RequestHandler | None,
    sampling: RequestHandler | None,
    roots: RequestHandler | None,
    clock: WaitClock,
) -> tuple[dict[str, RequestHandler], HandlerBound | None]:
    """The client's handlers by method, bounded when ``config.handler_timeout`` is set.

    Elicitation without a handler declines: there is no user to ask. An
    elicitation handler holds ``clock`` until it answers or its bound gives
    up on it (a person is asked).
    """
    handlers: dict[str, RequestHandler] = {"elicitation/create": elicitation or _decline}
    if sampling is not None:
        handlers["sampling/createMessage"] = sampling
    if roots is not None:
        handlers["roots/list"] = roots
    bound = None
    if config.handler_timeout is not None:
        bound = HandlerBound(config.alias, config.handler_timeout)
        handlers = {method: bound.wrap(method, h) for method, h in handlers.items()}
    if elicitation is not None:
        handlers["elicitation/create"] = _asking_a_person(handlers["elicitation/create"], clock)
    return handlers, bound


def _asking_a_person(handler: RequestHandler, clock: WaitClock) -> RequestHandler:
    def asking(params: dict[str, Any]) -> dict[str, Any]:
        with waiting_for_person(clock):
            return handler(params)

    return asking


def _decline(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "decline"}
