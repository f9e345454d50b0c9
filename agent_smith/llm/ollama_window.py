"""The context window an Ollama server runs a model at, as the server says it.

Ollama truncates a prompt longer than its window without an error, so the
window must be known before the request, and it is the *runtime* window
(``num_ctx``) that counts, not the length the model was trained for. The
rule, first match wins:

1. ``num_ctx`` set in the client's ``options`` (or ``context_size`` given):
   that, without asking.
2. ``GET /api/ps`` lists the model as loaded: its ``context_length``, the
   window its runner was started with. Final.
3. The model is not loaded (or the server's ``/api/ps`` does not say):
   ``POST /api/show``, and the Modelfile's ``num_ctx`` parameter if it sets
   one, else :data:`DEFAULT_NUM_CTX` (Ollama's documented default below
   24 GiB of VRAM; larger GPUs and ``OLLAMA_CONTEXT_LENGTH`` make it larger,
   so it is the safe side), either capped by the trained length
   (``model_info["<architecture>.context_length"]``), which alone is never
   taken as the window. This is provisional: the next ask (after a request
   has loaded the model) asks ``/api/ps`` again
   (:class:`~agent_smith.llm.server_props.KnownWindow`, up to its bound).

A request that got no answer is asked again later too. Asking never raises.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit, urlunsplit

import requests

from .server_props import Asked, get_json, positive

log = logging.getLogger(__name__)

#: Ollama's default ``num_ctx`` (docs/faq: "By default, Ollama uses a context window size of
#: 4096 tokens"; newer servers default by VRAM: 4k below 24 GiB, then 32k, then 256k).
DEFAULT_NUM_CTX = 4096

_NUM_CTX = re.compile(r"^num_ctx\s+(\d+)\s*$", re.MULTILINE)


def api_root(chat_url: str) -> str:
    """The API root (``…/api``) of an Ollama ``…/api/chat`` URL, without its query."""
    parts = urlsplit(chat_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.removesuffix("/chat"), "", ""))


def ask_ollama_window(
    session: requests.Session, api: str, model: str, *, headers: dict[str, str], timeout: float
) -> Asked:
    """The window of ``model`` on the Ollama server whose API root is ``api`` (module doc)."""
    try:
        running = get_json(session, f"{api}/ps", headers=headers, timeout=timeout)
        loaded = _loaded_window(running, model)
        if loaded is not None:
            return Asked(loaded)
        shown = get_json(
            session, f"{api}/show", headers=headers, timeout=timeout, body={"model": model}
        )
    except requests.RequestException as err:  # no answer: ask again later
        log.debug("asking %s for %r's context window failed: %s", api, model, err)
        return Asked(None, final=False)
    if shown is None:
        return Asked(None, final=False)
    trained = _trained_length(shown)
    parameters = shown.get("parameters")
    match = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    window = int(match.group(1)) if match else DEFAULT_NUM_CTX
    if trained is not None:
        window = min(window, trained)
    log.debug("%s: %r is not loaded; assuming a %d-token window until it is", api, model, window)
    return Asked(window, final=False)


def _loaded_window(running: dict[str, object] | None, model: str) -> int | None:
    """The ``context_length`` ``/api/ps`` gives for ``model``, if it lists it."""
    models = running.get("models") if running is not None else None
    if not isinstance(models, list):
        return None
    names = {model, model if ":" in model else f"{model}:latest"}
    for entry in models:
        if isinstance(entry, dict) and (entry.get("model") in names or entry.get("name") in names):
            return positive(entry.get("context_length"))
    return None


def _trained_length(shown: dict[str, object]) -> int | None:
    """The context length the model was trained for, from ``/api/show``'s ``model_info``."""
    info = shown.get("model_info")
    if not isinstance(info, dict):
        return None
    architecture = info.get("general.architecture")
    return positive(info.get(f"{architecture}.context_length"))
