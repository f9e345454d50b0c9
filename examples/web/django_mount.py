"""A Django project (one file) with an agent mounted at /agent: useChat, AG-UI and the dev UI.

Run it (an OpenAI-compatible server with tool calling at $LLAMA_SERVER_URL,
default http://127.0.0.1:8080) with any WSGI server, e.g.:

    PYTHONPATH=examples/web waitress-serve --listen 127.0.0.1:8000 --threads 32 \
        django_mount:application

then open http://127.0.0.1:8000/login?user=ada.

Django serves its own views; ``application`` sends every path under
``/agent`` to agent_smith's WebApp instead (a ten-line WSGI dispatcher, as
Django has no mount of its own). ``authenticate`` reads the user from
Django's session (signed cookies here, so this example needs no database):
each user sees only their own conversations, kept in a SQLite file
($AGENT_SMITH_SESSIONS, default conversations.db) shared by all workers.
"""

from __future__ import annotations

import os
import secrets
from http.cookies import SimpleCookie
from typing import Any

import django
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path

from agent_smith import Agent, LlmClient, Session, WebApp, tool

settings.configure(
    DEBUG=False,
    SECRET_KEY=os.environ.get("DJANGO_SECRET_KEY") or secrets.token_hex(32),
    ALLOWED_HOSTS=["127.0.0.1", "localhost"],
    ROOT_URLCONF=__name__,
    MIDDLEWARE=["django.contrib.sessions.middleware.SessionMiddleware"],
    INSTALLED_APPS=["django.contrib.sessions"],
    SESSION_ENGINE="django.contrib.sessions.backends.signed_cookies",
)
django.setup()

from django.contrib.sessions.backends.signed_cookies import SessionStore  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

llm = LlmClient(os.environ.get("LLAMA_SERVER_URL", "http://127.0.0.1:8080"))


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city (a stand-in for a real weather API)."""
    return f"Sunny and 21 °C in {city}."


def build_agent(conversation: Session) -> Agent:
    """A fresh agent on one conversation, for one request."""
    return Agent(llm, "You are a helpful assistant.", [get_weather], session=conversation)


def authenticate(environ: dict[str, Any]) -> str | None:
    """The logged-in user, from Django's session cookie (None: 401)."""
    cookie = SimpleCookie(environ.get("HTTP_COOKIE", "")).get(settings.SESSION_COOKIE_NAME)
    user = SessionStore(session_key=cookie.value).get("user") if cookie else None
    return user if isinstance(user, str) else None


def home(request: HttpRequest) -> HttpResponse:
    user = request.session.get("user")
    if not user:
        return HttpResponse('<a href="/login?user=ada">Log in as ada</a>')
    return HttpResponse('<a href="/agent/">Chat with the agent</a>')


def login(request: HttpRequest) -> HttpResponse:
    request.session["user"] = request.GET.get("user") or "guest"
    return HttpResponseRedirect("/")


urlpatterns = [path("", home), path("login", login)]

agent_app = WebApp(
    build_agent,
    sessions=os.environ.get("AGENT_SMITH_SESSIONS", "conversations.db"),
    authenticate=authenticate,
)
django_app = get_wsgi_application()


def application(environ: dict[str, Any], start_response: Any) -> Any:
    """Send /agent and everything below it to the agent's app, the rest to Django."""
    path_info = environ.get("PATH_INFO", "")
    if path_info == "/agent" or path_info.startswith("/agent/"):
        environ = dict(environ)
        environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + "/agent"
        environ["PATH_INFO"] = path_info[len("/agent") :]
        return agent_app(environ, start_response)
    return django_app(environ, start_response)
