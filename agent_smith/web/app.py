"""WebApp: a WSGI application that serves an application's agents over standard protocols.

::

    app = WebApp(lambda session: Agent(llm, "You help.", tools, session=session),
                 sessions="conversations.db")

Routes (relative to where the app is mounted):

* ``POST /api/chat`` — the Vercel AI SDK UI message stream (:mod:`.vercel`),
  what ``useChat`` reads;
* ``POST /api/agui`` — AG-UI (:mod:`.agui`);
* ``GET /api/conversations`` — the user's conversations (id, title, size);
  ``GET /api/conversations/<id>`` — one of them as UI messages;
  ``DELETE /api/conversations/<id>``;
* with ``a2a`` (``True`` or :class:`~agent_smith.web.a2a.A2AOptions`): the
  agent over A2A 1.0 — its card at ``GET /.well-known/agent-card.json``,
  JSON-RPC at ``POST /a2a``, HTTP+JSON below ``/a2a/`` (:mod:`.a2a`);
* with ``streams`` (an :class:`~agent_smith.sessions.event_log.EventLog`):
  ``GET /api/chat/<id>/stream`` — the conversation's running turn again, from
  the start or after ``Last-Event-ID`` (what the AI SDK's ``resumeStream``
  asks; 204 when no turn runs), ``DELETE`` on it stops that turn; an AG-UI
  run posted again with the same ``runId`` follows that run (after
  ``Last-Event-ID``) instead of starting another (:mod:`.resumable`);
* with ``durable_chat`` (a :class:`~agent_smith.durable.DurableChat`): the
  chat turns run as durable turns, on agents from the ``DurableChat``'s own
  factory, and every response and reconnect (the routes of ``streams``)
  follows the turn's durable stream; a turn whose worker died is taken over
  and completes (:mod:`.durable_chat`; exclusive with ``streams``);
* with ``durable`` (a :class:`~agent_smith.durable.DurableTurns`):
  ``GET /api/durable/<name>`` and ``POST /api/durable/<name>/decisions`` —
  the user's durable turns that wait for a decision (:mod:`.durable`);
* ``GET /`` — the dev UI (``devui.html``: one page, no build step, no CDN),
  unless ``dev_ui=False``;
* with ``metrics`` (a :class:`~agent_smith.MetricsCollector`): ``GET /metrics``
  — Prometheus text (:mod:`~agent_smith.metrics.prometheus`; rendered at
  most once a second), and
  ``GET /api/metrics`` — the snapshot and the kept turns' timelines as JSON,
  what the dev UI's timeline and charts read (``{"enabled": false}`` without
  a collector). Both ask ``authenticate``. With ``metrics_dir``, ``/metrics``
  serves the sum of every process's snapshot published there
  (:mod:`~agent_smith.metrics.shared`: what many gunicorn workers need);
* with ``eval_reports`` (a folder of JSON eval reports,
  :mod:`.eval_reports`): ``GET /api/evals`` lists them and
  ``GET /evals/<name>`` is one as its HTML page, the dev UI's Evals view
  (``{"enabled": false}`` without a folder). Both ask ``authenticate``.

Each request builds a fresh agent with ``agent_factory(session)`` on the
conversation's session (the factory passes ``session=session`` to
``Agent``), runs one turn and closes both: the session is where the
conversation lives, so any thread or worker process can serve its next
request, and a turn paused for approvals is resumed by whichever worker
receives the decision. ``sessions`` is a SQLite file path or a
``postgresql://`` URL (opened by :class:`~agent_smith.sessions.store.SessionStore`),
or a function from a session id to any :class:`Session`. With ``streams`` the
turn runs on a thread of its own and writes its frames to the log, and the
response follows the log: a client that lost its connection (or its worker)
reconnects to any worker and gets every frame it missed, then the rest live.
Call :meth:`WebApp.close` when done (it stops the turns still running and closes
the session store it opened from a path or URL).

Safety. ``authenticate(environ)`` returns the user's id (None: 401); every
conversation id is scoped by it, so one user cannot read, resume or delete
another's conversations (without the hook everyone is the one user
``"local"``: fine on a developer's machine, not on a server). POST and DELETE
requests from another site are refused (:mod:`.http`), request bodies are
limited to ``max_body_bytes`` (20 MB: room for a photo, base64-encoded in the
JSON), malformed input gets a 400 with a JSON error, and a client that goes
away mid-stream cancels its turn (with ``streams``, it may come back: the
turn goes on until it ends or is stopped).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Collection, Iterable
from importlib import resources
from typing import Any
from urllib.parse import quote

from ..errors import AgentSmithError, ConfigError, ParseError
from ..metrics.collector import MetricsCollector
from ..metrics.prometheus import CONTENT_TYPE, ScrapePage
from ..metrics.shared import merged_snapshot
from ..sessions.event_log import EventLog
from ..sessions.session import Session
from ..sessions.store import session_opener
from . import conversations
from . import durable as durable_turns
from . import durable_chat as chat_turns
from .a2a import A2AOptions, A2AServer
from .conversations import conversation_id, scoped
from .eval_reports import EvalReports
from .http import (
    Refused,
    Response,
    StartResponse,
    cross_site_refusal,
    error_response,
    json_response,
    read_json,
    status_line,
)
from .resumable import TurnRelay
from .turns import AgentFactory, Streamed, TurnRoutes

log = logging.getLogger(__name__)

#: ``authenticate(environ)``: the user's id, or None to refuse the request (401).
Authenticate = Callable[[dict[str, Any]], "str | None"]


def _local_user(environ: dict[str, Any]) -> str:
    return "local"


class WebApp:
    """The WSGI application (see the module doc); call it with ``(environ, start_response)``."""

    def __init__(
        self,
        agent_factory: AgentFactory,
        *,
        sessions: str | os.PathLike[str] | Callable[[str], Session] = "conversations.db",
        authenticate: Authenticate | None = None,
        max_body_bytes: int = 20_000_000,
        allowed_origins: Collection[str] = (),
        dev_ui: bool = True,
        metrics: MetricsCollector | None = None,
        metrics_dir: str | os.PathLike[str] | None = None,
        a2a: bool | A2AOptions = False,
        streams: EventLog | None = None,
        durable: durable_turns.TurnDesk | None = None,
        durable_chat: chat_turns.ChatTurns | None = None,
        eval_reports: str | os.PathLike[str] | None = None,
    ) -> None:
        if not callable(agent_factory):
            raise ConfigError("agent_factory must be a function of a Session returning an Agent")
        if max_body_bytes <= 0:
            raise ConfigError(f"max_body_bytes must be positive, got {max_body_bytes!r}")
        self._factory = agent_factory
        # the store is the app's own (closed by close()) when given as a path or URL
        self._open, self._store = session_opener(sessions)
        self._authenticate = authenticate if authenticate is not None else _local_user
        self._limit = max_body_bytes
        self._origins = frozenset(allowed_origins)
        self._dev_ui = dev_ui
        self._metrics = metrics
        self._scrape_page: ScrapePage | None = None
        if metrics_dir is not None:  # every worker's published snapshot, summed
            self._scrape_page = ScrapePage(functools.partial(merged_snapshot, metrics_dir))
        elif metrics is not None:
            self._scrape_page = ScrapePage(metrics.snapshot)
        self._a2a = (
            A2AServer(
                agent_factory,
                lambda user, context: self._open(scoped(user, context)),
                authenticate=self._authenticate,
                options=a2a if isinstance(a2a, A2AOptions) else A2AOptions(),
                authenticated=authenticate is not None,
                max_body_bytes=max_body_bytes,
                allowed_origins=self._origins,
            )
            if a2a
            else None
        )
        if durable_chat is not None and streams is not None:
            raise ConfigError("durable_chat and streams are two ways to resume: give one")
        self._relay = TurnRelay(streams) if streams is not None else None
        self._turns = TurnRoutes(
            agent_factory, self._open, relay=self._relay, durable_chat=durable_chat
        )
        self._durable = durable
        self._evals = EvalReports(eval_reports) if eval_reports is not None else None

    def close(self) -> None:
        """Stop the turns this process still runs for resumable streams and join their threads,
        then close the session store the app opened (given as a path or URL).

        The event log stays open: it belongs to the caller.
        """
        if self._relay is not None:
            self._relay.close()
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> WebApp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if self._a2a is not None and self._a2a.serves(environ.get("PATH_INFO", "") or ""):
            return self._a2a(environ, start_response)
        try:
            answer = self._route(environ)
        except Refused as refused:
            answer = refused.response
        except ParseError as err:
            answer = error_response(400, str(err))
        except AgentSmithError as err:
            log.warning("web request failed: %s", err)
            answer = error_response(500, str(err))
        if isinstance(answer, Streamed):
            start_response(status_line(200), list(answer.headers))
            return answer.body
        start_response(answer.status_line, list(answer.headers))
        return [answer.body]

    # -- routing -------------------------------------------------------------

    def _route(self, environ: dict[str, Any]) -> Response | Streamed:
        method = environ.get("REQUEST_METHOD", "GET").upper()
        path = environ.get("PATH_INFO", "") or ""
        if path == "":  # mounted at /prefix and asked for /prefix: the page's links need the /
            target = quote(environ.get("SCRIPT_NAME", "")) + "/"
            return Response(308, b"", (("Location", target),))
        if path == "/":
            if not self._dev_ui:
                return error_response(404, "no page here (dev_ui=False)")
            _allow(method, "GET")
            return _dev_ui_page()
        if not path.startswith(("/api/", "/evals/")) and path != "/metrics":
            return error_response(404, f"no such resource: {path}")
        user = self._authenticate(environ)
        if not user:
            return error_response(401, "not authenticated")
        if method not in ("GET", "HEAD"):
            refusal = cross_site_refusal(environ, self._origins)
            if refusal is not None:
                return error_response(403, refusal)
        if path in ("/metrics", "/api/metrics"):
            _allow(method, "GET")
            return self._metrics_page(path == "/metrics")
        if path == "/api/evals" or path.startswith("/evals/"):
            _allow(method, "GET")
            return self._eval_reports(path)
        if path == "/api/chat":
            _allow(method, "POST")
            return self._turns.chat(user, read_json(environ, limit=self._limit), environ)
        if path.startswith("/api/chat/") and path.endswith("/stream"):
            conversation = conversation_id(path[len("/api/chat/") : -len("/stream")])
            _allow(method, "GET", "DELETE")
            return self._turns.resume(user, conversation, environ, stop=method == "DELETE")
        if path == "/api/agui":
            _allow(method, "POST")
            return self._turns.agui(user, read_json(environ, limit=self._limit), environ)
        if path == "/api/conversations":
            _allow(method, "GET")
            return json_response(200, conversations.listing(self._open, user))
        if path.startswith("/api/conversations/"):
            conversation = conversation_id(path.removeprefix("/api/conversations/"))
            _allow(method, "GET", "DELETE")
            if method == "DELETE":
                return conversations.delete(self._open, user, conversation)
            return conversations.show(self._open, user, conversation)
        if path.startswith("/api/durable/"):
            return self._durable_turn(user, method, path, environ)
        return error_response(404, f"no such resource: {path}")

    def _durable_turn(self, user: str, method: str, path: str, environ: dict[str, Any]) -> Response:
        if self._durable is None:
            return error_response(404, "no durable turns here (WebApp(durable=...) is not set)")
        name, _, rest = path.removeprefix("/api/durable/").partition("/")
        turn_id = durable_turn_id(user, conversation_id(name))
        if rest == "decisions":
            _allow(method, "POST")
            body = read_json(environ, limit=self._limit)
            return durable_turns.decide(self._durable, turn_id, body)
        if rest:
            return error_response(404, f"no such resource: {path}")
        _allow(method, "GET")
        return durable_turns.show(self._durable, turn_id, name)

    def _metrics_page(self, text: bool) -> Response:
        if text:
            if self._scrape_page is None:
                return error_response(404, "no metrics here (WebApp(metrics=...) is not set)")
            return Response(200, self._scrape_page.body(), (("Content-Type", CONTENT_TYPE),))
        if self._metrics is None:
            return json_response(200, {"enabled": False})  # the dev UI hides its views
        snapshot = self._metrics.snapshot()
        return json_response(200, {"enabled": True, **snapshot, "turns": self._metrics.turns()})

    def _eval_reports(self, path: str) -> Response:
        if self._evals is None:
            if path == "/api/evals":
                return json_response(200, {"enabled": False})  # the dev UI hides its view
            return error_response(404, "no eval reports here (WebApp(eval_reports=...) is not set)")
        if path == "/api/evals":
            return json_response(200, self._evals.listing())
        return self._evals.page(path.removeprefix("/evals/"))


def durable_turn_id(user: str, name: str) -> str:
    """The id under which an app starts ``user``'s durable turn ``name``: the web app
    decides it for that user only (``/api/durable/<name>``)."""
    return scoped(user, name)


def _allow(method: str, *allowed: str) -> None:
    if method not in allowed and not (method == "HEAD" and "GET" in allowed):
        raise Refused(
            Response(
                405,
                b'{"error": "method not allowed"}',
                (("Content-Type", "application/json"), ("Allow", ", ".join(allowed))),
            )
        )


@functools.cache
def _dev_ui_page() -> Response:
    """The dev UI: one static page (devui.html) with inline script and style, no CDN."""
    html = resources.files(__package__).joinpath("devui.html").read_bytes()
    return Response(
        200,
        html,
        (
            ("Content-Type", "text/html; charset=utf-8"),
            ("Cache-Control", "no-cache"),
            ("X-Content-Type-Options", "nosniff"),
            (
                "Content-Security-Policy",
                "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                "img-src 'self' data:; frame-ancestors 'none'",  # data: the empty icon
            ),
        ),
    )
