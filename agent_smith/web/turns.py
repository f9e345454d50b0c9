"""The turn routes of the web app: a chat or AG-UI message starts (or resumes) a turn,
streamed in the protocol's frames; a reconnect follows the running turn.

A turn runs one of three ways (:class:`TurnRoutes`): in the request, its
frames streamed as they come; with ``streams`` (an event log), on a thread
of its own through a :class:`~agent_smith.web.resumable.TurnRelay`, the
response following the log; with ``durable_chat``, as a durable turn whose
durable stream the response follows (:mod:`.durable_chat`). The last two
resume: a client that lost its connection, or its worker, reconnects to any
worker and gets every frame it missed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from typing import Any

from ..agent.agent import Agent
from ..base.parts import Content
from ..base.paused_turn import Decision, PausedTurn
from ..messages import UserMessage
from ..sessions.session import Session
from . import agui, vercel
from . import durable_chat as chat_turns
from .conversations import OpenSession, conversation_id, scoped
from .http import Response, error_response
from .resumable import TurnRelay, last_event, stream_key, turn_id
from .stream import FrameMapper, TurnStream, frames, turn_events

#: ``agent_factory(session)``: a new agent on that session, for one request.
AgentFactory = Callable[[Session], Agent]


class TurnRoutes:
    """``POST /api/chat``, ``POST /api/agui`` and ``/api/chat/<id>/stream`` (see the module
    doc): turns of agents from ``agent_factory`` on sessions from ``open_session``."""

    def __init__(
        self,
        agent_factory: AgentFactory,
        open_session: OpenSession,
        *,
        relay: TurnRelay | None,
        durable_chat: chat_turns.ChatTurns | None,
    ) -> None:
        self._factory = agent_factory
        self._open = open_session
        self._relay = relay
        self._durable_chat = durable_chat

    def chat(self, user: str, body: object, environ: dict[str, Any]) -> Response | Streamed:
        ask = vercel.read_chat_request(body)
        turn = uuid.uuid4().hex
        message_id = turn if ask.content is not None else None
        return self._turn(
            user,
            conversation_id(ask.conversation),
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

    def agui(self, user: str, body: object, environ: dict[str, Any]) -> Response | Streamed:
        run = agui.read_run_input(body)
        conversation = conversation_id(run.thread_id)
        protocol = _Protocol(
            agui.AguiStream(thread_id=run.thread_id, run_id=run.run_id),
            agui.HEADERS,
            lambda: agui.AguiStream(thread_id=run.thread_id, run_id=run.run_id),
        )
        if self._durable_chat is not None:
            turn, session_id = turn_id(run.run_id), scoped(user, conversation)
            if chat_turns.exists(self._durable_chat, session_id, turn):  # the same run again
                after = _seen_of(turn, environ)
                return self._follow_durable(session_id, turn, after, protocol, environ)
        if self._relay is not None:
            turn = turn_id(run.run_id)
            key = stream_key(scoped(user, conversation), turn)
            if self._relay.log.info(key) is not None:  # the same run again: follow it
                return self._follow(key, _seen_of(turn, environ), protocol, environ)
        return self._turn(
            user, conversation, run.content, run.decisions, protocol, run.run_id, environ
        )

    def resume(
        self, user: str, conversation: str, environ: dict[str, Any], *, stop: bool
    ) -> Response | Streamed:
        """The conversation's running turn, from the start or after ``Last-Event-ID``;
        or (``stop``) stop it."""
        session_id = scoped(user, conversation)
        mark = last_event(environ.get("HTTP_LAST_EVENT_ID"))
        if self._durable_chat is not None:
            return self._resume_durable(session_id, mark, environ, stop=stop)
        if self._relay is None:
            return Response(204)  # no stream to resume: the client reloads the conversation
        if mark is not None:
            key, after = stream_key(session_id, mark[0]), mark[1]
            if self._relay.log.info(key) is None:
                return error_response(404, f"no stream {mark[0]!r} in this conversation")
        else:
            latest = self._relay.log.latest(session_id)
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
        self, session_id: str, mark: tuple[str, int] | None, environ: dict[str, Any], *, stop: bool
    ) -> Response | Streamed:
        """:meth:`resume` for durable chat turns."""
        assert self._durable_chat is not None
        found = chat_turns.resume_point(self._durable_chat, session_id, mark)
        if isinstance(found, Response):
            return found
        turn, after = found
        if stop:
            self._durable_chat.cancel(stream_key(session_id, turn))
            return Response(204)
        protocol = _Protocol(
            vercel.UiMessageStream(message_id=turn),
            vercel.HEADERS,
            lambda: vercel.UiMessageStream(message_id=turn),
        )
        return self._follow_durable(session_id, turn, after, protocol, environ)

    def _follow_durable(
        self, session_id: str, turn: str, after: int, protocol: _Protocol, environ: dict[str, Any]
    ) -> Streamed:
        assert self._durable_chat is not None
        body = chat_turns.follow(
            self._durable_chat,
            session_id,
            turn,
            after,
            protocol.fresh(),
            disconnected=environ.get("waitress.client_disconnected"),
        )
        return Streamed(tuple(protocol.headers), TurnStream(body, ExitStack()))

    def _follow(
        self, key: str, after: int, protocol: _Protocol, environ: dict[str, Any]
    ) -> Streamed:
        assert self._relay is not None
        body = self._relay.follow(
            key,
            after,
            lost=protocol.fresh(),
            disconnected=environ.get("waitress.client_disconnected"),
        )
        return Streamed(tuple(protocol.headers), TurnStream(body, ExitStack()))

    def _turn(
        self,
        user: str,
        conversation: str,
        content: Content | None,
        decisions: Mapping[str, Decision],
        protocol: _Protocol,
        turn: str,
        environ: dict[str, Any],
    ) -> Response | Streamed:
        """Start a turn (``content``) or resume the paused one (``decisions``), streamed."""
        if self._durable_chat is not None:
            session_id = scoped(user, conversation)
            refused = chat_turns.start(self._durable_chat, session_id, turn, content)
            return refused or self._follow_durable(session_id, turn, 0, protocol, environ)
        stack = ExitStack()
        try:
            session = stack.enter_context(self._open(scoped(user, conversation)))
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
                    conversation=scoped(user, conversation),
                    turn=turn,
                    mapper=protocol.mapper,
                    events=events,
                    resources=stack,
                )
                return self._follow(key, 0, protocol, environ)
            disconnected = environ.get("waitress.client_disconnected")
            body = frames(protocol.mapper, events, disconnected=disconnected)
            return Streamed(tuple(protocol.headers), TurnStream(body, stack))
        except BaseException:
            stack.close()
            raise


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


class Streamed:
    """A streamed answer: 200 with ``headers``, then ``body`` (which owns the turn)."""

    __slots__ = ("body", "headers")

    def __init__(self, headers: tuple[tuple[str, str], ...], body: TurnStream) -> None:
        self.headers, self.body = headers, body


def _seen_of(turn: str, environ: dict[str, Any]) -> int:
    """How many of ``turn``'s frames the client had (its ``Last-Event-ID``; 0 if of another)."""
    mark = last_event(environ.get("HTTP_LAST_EVENT_ID"))
    return mark[1] if mark is not None and mark[0] == turn else 0


def _refusal(paused: PausedTurn | None, decisions: Mapping[str, Decision]) -> str | None:
    """Why ``decisions`` cannot resume ``paused`` (unknown or already decided calls)."""
    if paused is None:
        return "nothing waits for approval in this conversation (already decided?)"
    unknown = [call_id for call_id in decisions if call_id not in paused.waiting]
    if unknown:
        return f"no call {unknown[0]!r} waits for approval (waiting: {', '.join(paused.waiting)})"
    return None
