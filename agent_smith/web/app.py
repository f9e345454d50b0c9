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
* ``GET /`` — the dev UI (``devui.html``: one page, no build step, no CDN),
  unless ``dev_ui=False``;
* with ``metrics`` (a :class:`~agent_smith.MetricsCollector`): ``GET /metrics``
  — Prometheus text (:mod:`~agent_smith.metrics.prometheus`; rendered at
  most once a second), and
  ``GET /api/metrics`` — the snapshot and the kept turns' timelines as JSON,
  what the dev UI's timeline and charts read (``{"enabled": false}`` without
  a collector). Both ask ``authenticate``;
* with ``eval_reports`` (a folder of JSON eval reports,
  :mod:`.eval_reports`): ``GET /api/evals`` lists them and
  ``GET /evals/<name>`` is one as its HTML page, the dev UI's Evals view
  (``{"enabled": false}`` without a folder). Both ask ``authenticate``.

Each request builds a fresh agent with ``agent_factory(session)`` on the
conversation's session (the factory passes ``session=session`` to
``Agent``), runs one turn and closes both: the session is where the
conversation lives, so any thread or worker process can serve its next
request, and a turn paused for approvals is resumed by whichever worker
receives the decision. ``sessions`` is a SQLite file (:class:`SqliteSession`)
or a function from a session id to any :class:`Session`.

Safety. ``authenticate(environ)`` returns the user's id (None: 401); every
conversation id is scoped by it, so one user cannot read, resume or delete
another's conversations (without the hook everyone is the one user
``"local"``: fine on a developer's machine, not on a server). POST and DELETE
requests from another site are refused (:mod:`.http`), request bodies are
limited to ``max_body_bytes``, malformed input gets a 400 with a JSON error,
and a client that goes away mid-stream cancels its turn.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from contextlib import ExitStack
from importlib import resources
from typing import Any
from urllib.parse import quote

from ..agent.agent import Agent
from ..base.paused_turn import Decision, PausedTurn
from ..errors import AgentBusyError, AgentSmithError, ConfigError, ParseError
from ..messages import UserMessage
from ..metrics.collector import MetricsCollector
from ..metrics.prometheus import CONTENT_TYPE, ScrapePage
from ..sessions.session import Session
from . import agui, vercel
from .eval_reports import EvalReports
from .http import (
    Refused,
    Response,
    cross_site_refusal,
    error_response,
    json_response,
    read_json,
    status_line,
)
from .stream import FrameMapper, TurnStream, frames, turn_events

log = logging.getLogger(__name__)

#: ``agent_factory(session)``: a new agent on that session, for one request.
AgentFactory = Callable[[Session], Agent]
#: ``authenticate(environ)``: the user's id, or None to refuse the request (401).
Authenticate = Callable[[dict[str, Any]], "str | None"]
StartResponse = Callable[..., Any]

_CONVERSATION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_LISTED = 200  # conversations listed at most, newest ids first


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
        max_body_bytes: int = 1_000_000,
        allowed_origins: Collection[str] = (),
        dev_ui: bool = True,
        metrics: MetricsCollector | None = None,
        eval_reports: str | os.PathLike[str] | None = None,
    ) -> None:
        if not callable(agent_factory):
            raise ConfigError("agent_factory must be a function of a Session returning an Agent")
        if max_body_bytes <= 0:
            raise ConfigError(f"max_body_bytes must be positive, got {max_body_bytes!r}")
        self._factory = agent_factory
        self._open = _session_opener(sessions)
        self._authenticate = authenticate if authenticate is not None else _local_user
        self._limit = max_body_bytes
        self._origins = frozenset(allowed_origins)
        self._dev_ui = dev_ui
        self._metrics = metrics
        self._scrape_page = ScrapePage(metrics) if metrics is not None else None
        self._evals = EvalReports(eval_reports) if eval_reports is not None else None

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            answer = self._route(environ)
        except Refused as refused:
            answer = refused.response
        except ParseError as err:
            answer = error_response(400, str(err))
        except AgentSmithError as err:
            log.warning("web request failed: %s", err)
            answer = error_response(500, str(err))
        if isinstance(answer, _Streamed):
            start_response(status_line(200), list(answer.headers))
            return answer.body
        start_response(answer.status_line, list(answer.headers))
        return [answer.body]

    # -- routing -------------------------------------------------------------

    def _route(self, environ: dict[str, Any]) -> Response | _Streamed:
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
            return self._chat(user, read_json(environ, limit=self._limit), environ)
        if path == "/api/agui":
            _allow(method, "POST")
            return self._agui(user, read_json(environ, limit=self._limit), environ)
        if path == "/api/conversations":
            _allow(method, "GET")
            return json_response(200, self._conversations(user))
        if path.startswith("/api/conversations/"):
            conversation = _conversation_id(path.removeprefix("/api/conversations/"))
            _allow(method, "GET", "DELETE")
            if method == "DELETE":
                return self._delete(user, conversation)
            return self._conversation(user, conversation)
        return error_response(404, f"no such resource: {path}")

    def _metrics_page(self, text: bool) -> Response:
        if self._metrics is None or self._scrape_page is None:
            if text:
                return error_response(404, "no metrics here (WebApp(metrics=...) is not set)")
            return json_response(200, {"enabled": False})  # the dev UI hides its views
        if text:
            return Response(200, self._scrape_page.body(), (("Content-Type", CONTENT_TYPE),))
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

    # -- turns ---------------------------------------------------------------

    def _chat(self, user: str, body: object, environ: dict[str, Any]) -> Response | _Streamed:
        ask = vercel.read_chat_request(body)
        message_id = uuid.uuid4().hex if ask.text is not None else None
        return self._turn(
            user,
            _conversation_id(ask.conversation),
            ask.text,
            ask.decisions,
            vercel.UiMessageStream(message_id=message_id, decisions=ask.decisions),
            vercel.HEADERS,
            environ,
        )

    def _agui(self, user: str, body: object, environ: dict[str, Any]) -> Response | _Streamed:
        run = agui.read_run_input(body)
        return self._turn(
            user,
            _conversation_id(run.thread_id),
            run.text,
            run.decisions,
            agui.AguiStream(thread_id=run.thread_id, run_id=run.run_id),
            agui.HEADERS,
            environ,
        )

    def _turn(
        self,
        user: str,
        conversation: str,
        text: str | None,
        decisions: Mapping[str, Decision],
        mapper: FrameMapper,
        headers: Iterable[tuple[str, str]],
        environ: dict[str, Any],
    ) -> Response | _Streamed:
        """Start a turn (``text``) or resume the paused one (``decisions``), streamed."""
        stack = ExitStack()
        try:
            session = stack.enter_context(self._open(_scoped(user, conversation)))
            agent = stack.enter_context(self._factory(session))
            if text is not None:
                events = turn_events(lambda: agent.stream(text))
            else:
                paused = agent.paused_turn
                refusal = _refusal(paused, decisions)
                if refusal is not None or paused is None:
                    stack.close()
                    return error_response(409, refusal or "nothing waits for approval")
                events = turn_events(lambda: agent.resume_stream(paused, decisions))
            disconnected = environ.get("waitress.client_disconnected")
            body = frames(mapper, events, disconnected=disconnected)
            return _Streamed(tuple(headers), TurnStream(body, stack))
        except BaseException:
            stack.close()
            raise

    # -- conversations -------------------------------------------------------

    def _conversations(self, user: str) -> list[dict[str, Any]]:
        prefix = _scoped(user, "")
        with self._open(prefix + "-") as store:
            ids = sorted((i for i in store.session_ids() if i.startswith(prefix)), reverse=True)
        listed = []
        for session_id in ids[:_LISTED]:
            with self._open(session_id) as session:
                state = session.load()
            said = [m.content for m in state.messages if isinstance(m, UserMessage)]
            listed.append(
                {
                    "id": session_id[len(prefix) :],
                    "title": said[0][:80] if said else "",
                    "messages": len(state.messages),
                    "paused": state.paused_turn is not None,
                }
            )
        return listed

    def _conversation(self, user: str, conversation: str) -> Response:
        with self._open(_scoped(user, conversation)) as session:
            state = session.load()
        if not state.messages:
            return error_response(404, f"no conversation {conversation!r}")
        paused = PausedTurn.from_json(state.paused_turn) if state.paused_turn else None
        return json_response(
            200,
            {
                "id": conversation,
                "messages": vercel.ui_messages(state.messages, paused),
                "waiting": list(paused.waiting) if paused is not None else [],
            },
        )

    def _delete(self, user: str, conversation: str) -> Response:
        session_id = _scoped(user, conversation)
        with self._open(session_id) as session:
            try:
                session.delete(session_id)
            except AgentBusyError as err:
                return error_response(409, f"the conversation is running a turn ({err})")
        return Response(204)


class _Streamed:
    """A streamed answer: 200 with ``headers``, then ``body`` (which owns the turn)."""

    __slots__ = ("body", "headers")

    def __init__(self, headers: tuple[tuple[str, str], ...], body: TurnStream) -> None:
        self.headers, self.body = headers, body


def _session_opener(
    sessions: str | os.PathLike[str] | Callable[[str], Session],
) -> Callable[[str], Session]:
    if isinstance(sessions, str | os.PathLike):
        from ..sessions.sqlite import SqliteSession

        path = os.fspath(sessions)
        return lambda session_id: SqliteSession(path, session_id)
    if callable(sessions):
        return sessions
    raise ConfigError("sessions must be a SQLite file path or a function of a session id")


def _scoped(user: str, conversation: str) -> str:
    """The session id of ``user``'s conversation: no user can name another's."""
    return f"{quote(user, safe='')}/{conversation}"


def _conversation_id(value: str) -> str:
    if not _CONVERSATION_ID.fullmatch(value):
        raise ParseError(
            f"conversation id {value[:40]!r} must be 1-128 letters, digits or ._:- characters"
        )
    return value


def _refusal(paused: PausedTurn | None, decisions: Mapping[str, Decision]) -> str | None:
    """Why ``decisions`` cannot resume ``paused`` (unknown or already decided calls)."""
    if paused is None:
        return "nothing waits for approval in this conversation (already decided?)"
    unknown = [call_id for call_id in decisions if call_id not in paused.waiting]
    if unknown:
        return f"no call {unknown[0]!r} waits for approval (waiting: {', '.join(paused.waiting)})"
    return None


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
