"""Ready-made elicitation handlers: a form filled from the schema's defaults, a URL opened.

A server asks the user something through ``elicitation/create``: in form
mode (``requestedSchema``: flat properties of primitive types, possibly with
defaults) or, since 2025-11-25, in URL mode (``url``: a page the user visits
out of band, such as a payment or an OAuth consent). ``Elicitation`` joins
one callback per mode into the handler ``McpClient.connect(...,
elicitation_handler=...)`` takes and declares the modes it answers:

* ``form(message, schema)`` returns the content to accept with, or None to
  decline; :func:`form_defaults` accepts with every default the schema gives.
* ``url(message, url)`` returns whether the user agreed to go there;
  :func:`open_in_browser` opens it in the default browser.
"""

from __future__ import annotations

import logging
import webbrowser
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

FormCallback = Callable[[str, dict[str, Any]], "dict[str, Any] | None"]
UrlCallback = Callable[[str, str], bool]


def form_defaults(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Accept with each property's ``default`` (SEP-1034); properties without one are left out."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {
        name: spec["default"]
        for name, spec in properties.items()
        if isinstance(spec, dict) and "default" in spec
    }


def open_in_browser(message: str, url: str) -> bool:
    """Open ``url`` in the default browser; whether one opened."""
    log.info("opening %s for the MCP server (%s)", url, message)
    return bool(webbrowser.open(url))


class Elicitation:
    """An elicitation handler answering the modes it was given a callback for."""

    def __init__(
        self, *, form: FormCallback | None = form_defaults, url: UrlCallback | None = None
    ) -> None:
        self._form = form
        self._url = url

    @property
    def modes(self) -> tuple[str, ...]:
        """The modes declared in the client's ``elicitation`` capability."""
        return tuple(m for m, cb in (("form", self._form), ("url", self._url)) if cb is not None)

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        message = str(params.get("message") or "")
        if params.get("mode") == "url":
            url = params.get("url")
            if self._url is None or not isinstance(url, str):
                return {"action": "decline"}
            return {"action": "accept" if self._url(message, url) else "decline"}
        if self._form is None:
            return {"action": "decline"}
        schema = params.get("requestedSchema")
        content = self._form(message, schema if isinstance(schema, dict) else {})
        if content is None:
            return {"action": "decline"}
        return {"action": "accept", "content": content}
