"""The demo's first request: is anything answering at the endpoint at all?

Before the REPL starts, ``agent-smith -e URL`` sends one GET to the
server's models route (``/v1/models`` for a bare host, ``<base>/models``
for a base with a path: llama-server, Ollama, vLLM and OpenAI all serve it).
Any HTTP answer, even 401 or 404, means a server is there and the first
turn will say whatever else is wrong. When nothing answers (connection
refused, unknown host, a TLS failure, no answer within
:data:`CONNECT_TIMEOUT`), the program ends with one line naming the URL and
what to do, instead of the LLM client retrying for seconds on the first turn.
"""

from __future__ import annotations

import logging

import requests

from .._internal.request_errors import request_error_cause
from ..llm.endpoint import display_url, resolve_chat_url
from .repl import Fatal

log = logging.getLogger(__name__)

#: Seconds to wait for the connection (a server that accepts it but is slow to answer passes).
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 10.0
_CHAT = "/chat/completions"


def models_url(endpoint: str) -> str:
    """The models route beside ``endpoint``'s chat-completions URL."""
    chat = resolve_chat_url(endpoint)
    path, query = chat.split("?", 1) if "?" in chat else (chat, "")
    url = path.removesuffix(_CHAT) + "/models"
    return f"{url}?{query}" if query else url


def check_endpoint(session: requests.Session, endpoint: str, *, api_key: str | None) -> None:
    """Return if a server answers at ``endpoint``; raise :class:`Fatal` with one line if not."""
    url = models_url(endpoint)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with session.get(
            url, headers=headers, timeout=(CONNECT_TIMEOUT, READ_TIMEOUT), stream=True
        ) as response:
            log.debug("GET %s: HTTP %d", display_url(url), response.status_code)
    except requests.ConnectionError as err:  # refused, unknown host, TLS, connect timeout
        raise Fatal(
            f"nothing answers at {display_url(endpoint)} ({_cause(err)}); start a server "
            "there (e.g. llama-server -m MODEL.gguf --jinja --port 8080), pass --endpoint URL, "
            "or run agent-smith --local"
        ) from err
    except requests.RequestException as err:  # it answered, slowly or oddly: the turn will tell
        log.warning("GET %s: %s", display_url(url), request_error_cause(err))


def _cause(err: BaseException) -> str:
    """The operating system's word for a failed connection ("Connection refused"), else a line."""
    seen: set[int] = set()
    todo: list[BaseException] = [err]
    while todo:
        inner = todo.pop()
        if id(inner) in seen:
            continue
        seen.add(id(inner))
        if isinstance(inner, OSError) and inner.strerror:
            return inner.strerror
        todo.extend(e for e in (inner.__cause__, inner.__context__) if e is not None)
        todo.extend(a for a in inner.args if isinstance(a, BaseException))
        reason = getattr(inner, "reason", None)
        if isinstance(reason, BaseException):
            todo.append(reason)
    return request_error_cause(err)
