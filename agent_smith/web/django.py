"""The agent's endpoints inside a Django project, as Django views, owned by Django's users.

::

    # urls.py
    from django.urls import include, path
    from agent_smith.web.django import agent_urls, django_user

    agent_app = WebApp(build_agent, sessions=..., authenticate=django_user)
    urlpatterns = [..., path("agent/", include(agent_urls(agent_app)))]

Every path under the prefix (the dev UI, ``api/chat``, ``api/agui``, the
conversations, ``metrics``) is one Django view that hands the request to
the :class:`~agent_smith.web.app.WebApp` and gives its answer back (a
stream as a ``StreamingHttpResponse``, frame by frame), so Django's
middleware runs first: its session and authentication decide who the user
is. :func:`django_user` is the ``authenticate`` hook that reads that user (the primary key of
``request.user``; anonymous: 401), so each Django user owns their
conversations and never sees another's. The view is exempt from Django's
CSRF check: the WebApp refuses cross-site writes itself (an ``Origin``
other than the page's, see ``allowed_origins``), and ``useChat`` or an
AG-UI client sends no CSRF token. Needs Django (the ``django`` extra).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

from .http import StartResponse

#: Where the view puts the Django user's id for :func:`django_user`.
USER_KEY = "agent_smith.django_user"

WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def django_user(environ: dict[str, Any]) -> str | None:
    """The ``authenticate`` hook of a WebApp mounted with :func:`agent_urls`: the
    logged-in Django user's primary key, or None (the WebApp answers 401)."""
    user = environ.get(USER_KEY)
    return user if isinstance(user, str) else None


def agent_urls(app: WsgiApp) -> list[Any]:
    """URL patterns serving ``app`` (a WebApp) under the prefix that includes them."""
    from django.urls import path, re_path
    from django.views.decorators.csrf import csrf_exempt

    view = csrf_exempt(_view(app))
    return [path("", view, {"rest": ""}), re_path(r"^(?P<rest>.+)$", view)]


def _view(app: WsgiApp) -> Callable[..., Any]:
    from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse

    def agent_view(request: HttpRequest, rest: str) -> HttpResponseBase:
        body = request.body  # read once here: Django may have consumed wsgi.input
        environ = dict(request.META)
        prefix = request.path[: len(request.path) - len(rest)].rstrip("/")
        environ.update(
            {
                "SCRIPT_NAME": prefix,
                "PATH_INFO": "/" + rest,
                "wsgi.input": io.BytesIO(body),
                "CONTENT_LENGTH": str(len(body)),
                USER_KEY: str(request.user.pk) if request.user.is_authenticated else None,
            }
        )
        answered: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], *_: Any) -> None:
            answered[:] = [status, headers]

        chunks = app(environ, start_response)
        status, headers = answered
        code = int(status.split()[0])
        response: HttpResponseBase
        if isinstance(chunks, list):  # a whole answer (JSON, the page): Django's usual kind
            response = HttpResponse(b"".join(chunks), status=code)
        else:  # a stream: each frame goes out as the turn makes it
            response = StreamingHttpResponse(chunks, status=code)
        for name, value in headers:
            response[name] = value
        return response

    return agent_view
