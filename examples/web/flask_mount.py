"""A Flask application with an agent mounted at /agent: useChat, AG-UI and the dev UI.

Run it (an OpenAI-compatible server with tool calling at $LLAMA_SERVER_URL,
default http://127.0.0.1:8080):

    flask --app examples/web/flask_mount.py run    # then open http://127.0.0.1:5000

Flask keeps its own pages and its login; agent_smith's WebApp is a second WSGI
application mounted under ``/agent`` (werkzeug's DispatcherMiddleware), so a
React page with ``useChat({transport: new DefaultChatTransport({api:
"/agent/api/chat"})})`` or an AG-UI client at ``/agent/api/agui`` talks to the
agent, and ``/agent/`` is the dev UI. ``authenticate`` reads the user from
Flask's signed session cookie: each user sees only their own conversations,
kept in a SQLite file ($AGENT_SMITH_SESSIONS, default conversations.db) that
every worker process shares.
"""

from __future__ import annotations

import html
import os
import secrets
from typing import Any

from flask import Flask, redirect, request, session
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from agent_smith import Agent, LlmClient, Session, WebApp, tool

llm = LlmClient(os.environ.get("LLAMA_SERVER_URL", "http://127.0.0.1:8080"))
NOTES: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city (a stand-in for a real weather API)."""
    return f"Sunny and 21 °C in {city}."


@tool(requires_approval=True)
def save_note(text: str) -> str:
    """Save a note for the user (each note needs the user's approval)."""
    NOTES.append(text)
    return f"Saved note: {text}"


def build_agent(conversation: Session) -> Agent:
    """A fresh agent on one conversation, for one request."""
    return Agent(
        llm, "You are a helpful assistant.", [get_weather, save_note], session=conversation
    )


app = Flask(__name__)
app.secret_key = os.environ.get("FLASK_SECRET_KEY") or secrets.token_hex(16)


def authenticate(environ: dict[str, Any]) -> str | None:
    """The logged-in user, from Flask's signed session cookie (None: 401)."""
    with app.request_context(environ):
        user = session.get("user")
    return user if isinstance(user, str) else None


agent_app = WebApp(
    build_agent,
    sessions=os.environ.get("AGENT_SMITH_SESSIONS", "conversations.db"),
    authenticate=authenticate,
)


@app.get("/")
def home() -> str:
    user = session.get("user")
    if not user:
        return (
            '<form method="post" action="/login">Name: <input name="user" autofocus> '
            "<button>Log in</button></form>"
        )
    return f'<p>Hello {html.escape(user)}. <a href="/agent/">Chat with the agent</a></p>'


@app.post("/login")
def login() -> Any:
    session["user"] = request.form.get("user", "").strip() or "guest"
    return redirect("/")


app.wsgi_app = DispatcherMiddleware(app.wsgi_app, {"/agent": agent_app})  # type: ignore[method-assign]
