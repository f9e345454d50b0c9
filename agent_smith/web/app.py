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
import re
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from contextlib import ExitStack
from importlib import resources
from typing import Any
from urllib.parse import quote

from ..agent.agent import Agent
from ..base.parts import Content
from ..base.paused_turn import Decision, PausedTurn
from ..errors import AgentBusyError, AgentSmithError, ConfigError, ParseError
from ..messages import UserMessage
from ..metrics.collector import MetricsCollector
from ..metrics.prometheus import CONTENT_TYPE, ScrapePage
from ..metrics.shared import merged_snapshot
from ..sessions.event_log import EventLog
from ..sessions.session import Session
from ..sessions.store import session_opener
from . import agui, vercel
from . import durable as durable_turns
from . import durable_chat as chat_turns
from .a2a import A2AOptions, A2AServer
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
from .resumable import TurnRelay, last_event, stream_key, turn_id
from .stream import FrameMapper, TurnStream, frames, turn_events

log = logging.getLogger(__name__)

#: ``agent_factory(session)``: a new agent on that session, for one request.
AgentFactory = Callable[[Session], Agent]
#: ``authenticate(environ)``: the user's id, or None to refuse the request (401).
Authenticate = Callable[[dict[str, Any]], "str | None"]

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
                lambda user, context: self._open(_scoped(user, context)),
                authenticate=self._authenticate,
                options=a2a if isinstance(a2a, A2AOptions) else A2AOptions(),
                authenticated=authenticate is not None,
                max_body_bytes=max_body_bytes,
                allowed_origins=self._origins,
            )
            if a2a
            else None
        )
        self._relay = TurnRelay(streams) if streams is not None else None
        self._durable = durable
        self._durable_chat = durable_chat
        if durable_chat is not None and streams is not None:
            raise ConfigError("durable_chat and streams are two ways to resume: give one")
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
        if path.startswith("/api/chat/") and path.endswith("/stream"):
            conversation = _conversation_id(path[len("/api/chat/") : -len("/stream")])
            _allow(method, "GET", "DELETE")
            return self._resume_chat(user, conversation, environ, stop=method == "DELETE")
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
        if path.startswith("/api/durable/"):
            return self._durable_turn(user, method, path, environ)
        return error_response(404, f"no such resource: {path}")

    def _durable_turn(self, user: str, method: str, path: str, environ: dict[str, Any]) -> Response:
        if self._durable is None:
            return error_response(404, "no durable turns here (WebApp(durable=...) is not set)")
        name, _, rest = path.removeprefix("/api/durable/").partition("/")
        turn_id = durable_turn_id(user, _conversation_id(name))
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

    # -- turns ---------------------------------------------------------------

    def _chat(self, user: str, body: object, environ: dict[str, Any]) -> Response | _Streamed:
        ask = vercel.read_chat_request(body)
        turn = uuid.uuid4().hex
        message_id = turn if ask.content is not None else None
        return self._turn(
            user,
            _conversation_id(ask.conversation),
            ask.content,
            ask.decisions,
            _Protocol(
                vercel.UiMessageStream(message_id=message_id, decisions=ask.decisions),
                vercel.HEADERS,
                lambda: vercel.UiMessageStream(message_id=message_id, decisions=ask.decisions),
            ),
            turn,
            environ,
        )

    def _agui(self, user: str, body: object, environ: dict[str, Any]) -> Response | _Streamed:
        run = agui.read_run_input(body)
        conversation = _conversation_id(run.thread_id)
        protocol = _Protocol(
            agui.AguiStream(thread_id=run.thread_id, run_id=run.run_id),
            agui.HEADERS,
            lambda: agui.AguiStream(thread_id=run.thread_id, run_id=run.run_id),
        )
        if self._durable_chat is not None:
            turn, scoped = turn_id(run.run_id), _scoped(user, conversation)
            if chat_turns.exists(self._durable_chat, scoped, turn):  # the same run again
                after = _seen_of(turn, environ)
                return self._follow_durable(scoped, turn, after, protocol, environ)
        if self._relay is not None:
            turn = turn_id(run.run_id)
            key = stream_key(_scoped(user, conversation), turn)
            if self._relay.log.info(key) is not None:  # the same run again: follow it
                return self._follow(key, _seen_of(turn, environ), protocol, environ)
        return self._turn(
            user, conversation, run.content, run.decisions, protocol, run.run_id, environ
        )

    def _resume_chat(
        self, user: str, conversation: str, environ: dict[str, Any], *, stop: bool
    ) -> Response | _Streamed:
        """The conversation's running turn, from the start or after ``Last-Event-ID``;
        or (``stop``) stop it."""
        scoped = _scoped(user, conversation)
        mark = last_event(environ.get("HTTP_LAST_EVENT_ID"))
        if self._durable_chat is not None:
            return self._resume_durable(scoped, mark, environ, stop=stop)
        if self._relay is None:
            return Response(204)  # no stream to resume: the client reloads the conversation
        if mark is not None:
            key, after = stream_key(scoped, mark[0]), mark[1]
            if self._relay.log.info(key) is None:
                return error_response(404, f"no stream {mark[0]!r} in this conversation")
        else:
            latest = self._relay.log.latest(scoped)
            if latest is None or latest.closed:
                return Response(204)
            key, after = latest.stream, 0
        if stop:
            self._relay.cancel(key)
            return Response(204)
        protocol = _Protocol(
            vercel.UiMessageStream(message_id=None),
            vercel.HEADERS,
            lambda: vercel.UiMessageStream(message_id=None),
        )
        return self._follow(key, after, protocol, environ)

    def _resume_durable(
        self, scoped: str, mark: tuple[str, int] | None, environ: dict[str, Any], *, stop: bool
    ) -> Response | _Streamed:
        """:meth:`_resume_chat` for durable chat turns."""
        assert self._durable_chat is not None
        found = chat_turns.resume_point(self._durable_chat, scoped, mark)
        if isinstance(found, Response):
            return found
        turn, after = found
        if stop:
            self._durable_chat.cancel(stream_key(scoped, turn))
            return Response(204)
        protocol = _Protocol(
            vercel.UiMessageStream(message_id=turn),
            vercel.HEADERS,
            lambda: vercel.UiMessageStream(message_id=turn),
        )
        return self._follow_durable(scoped, turn, after, protocol, environ)

    def _follow_durable(
        self, scoped: str, turn: str, after: int, protocol: _Protocol, environ: dict[str, Any]
    ) -> _Streamed:
        assert self._durable_chat is not None
        body = chat_turns.follow(
            self._durable_chat,
            scoped,
            turn,
            after,
            protocol.fresh(),
            disconnected=environ.get("waitress.client_disconnected"),
        )
        return _Streamed(tuple(protocol.headers), TurnStream(body, ExitStack()))

    def _follow(
        self, key: str, after: int, protocol: _Protocol, environ: dict[str, Any]
    ) -> _Streamed:
        assert self._relay is not None
        body = self._relay.follow(
            key,
            after,
            lost=protocol.fresh(),
            disconnected=environ.get("waitress.client_disconnected"),
        )
        return _Streamed(tuple(protocol.headers), TurnStream(body, ExitStack()))

    def _turn(
        self,
        user: str,
        conversation: str,
        content: Content | None,
        decisions: Mapping[str, Decision],
        protocol: _Protocol,
        turn: str,
        environ: dict[str, Any],
    ) -> Response | _Streamed:
        """Start a turn (``content``) or resume the paused one (``decisions``), streamed."""
        if self._durable_chat is not None:
            scoped = _scoped(user, conversation)
            refused = chat_turns.start(self._durable_chat, scoped, turn, content)
            return refused or self._follow_durable(scoped, turn, 0, protocol, environ)
        stack = ExitStack()
        try:
            session = stack.enter_context(self._open(_scoped(user, conversation)))
            agent = stack.enter_context(self._factory(session))
            if content is not None:
                events = turn_events(lambda: agent.stream(UserMessage(content)))
            else:
                paused = agent.paused_turn
                refusal = _refusal(paused, decisions)
                if refusal is not None or paused is None:
                    stack.close()
                    return error_response(409, refusal or "nothing waits for approval")
                events = turn_events(lambda: agent.resume_stream(paused, decisions))
            if self._relay is not None:
                key = self._relay.start(
                    conversation=_scoped(user, conversation),
                    turn=turn,
                    mapper=protocol.mapper,
                    events=events,
                    resources=stack,
                )
                return self._follow(key, 0, protocol, environ)
            disconnected = environ.get("waitress.client_disconnected")
            body = frames(protocol.mapper, events, disconnected=disconnected)
            return _Streamed(tuple(protocol.headers), TurnStream(body, stack))
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
            said = [m.text for m in state.messages if isinstance(m, UserMessage)]
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


class _Protocol:
    """A turn's wire protocol: its frame mapper, its response headers, and a fresh mapper
    (what a reader of a resumed stream reports a failure with)."""

    __slots__ = ("fresh", "headers", "mapper")

    def __init__(
        self,
        mapper: FrameMapper,
        headers: Iterable[tuple[str, str]],
        fresh: Callable[[], FrameMapper],
    ) -> None:
        self.mapper, self.headers, self.fresh = mapper, headers, fresh


class _Streamed:
    """A streamed answer: 200 with ``headers``, then ``body`` (which owns the turn)."""

    __slots__ = ("body", "headers")

    def __init__(self, headers: tuple[tuple[str, str], ...], body: TurnStream) -> None:
        self.headers, self.body = headers, body


def _seen_of(turn: str, environ: dict[str, Any]) -> int:
    """How many of ``turn``'s frames the client had (its ``Last-Event-ID``; 0 if of another)."""
    mark = last_event(environ.get("HTTP_LAST_EVENT_ID"))
    return mark[1] if mark is not None and mark[0] == turn else 0


def durable_turn_id(user: str, name: str) -> str:
    """The id under which an app starts ``user``'s durable turn ``name``: the web app
    decides it for that user only (``/api/durable/<name>``)."""
    return _scoped(user, name)


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
