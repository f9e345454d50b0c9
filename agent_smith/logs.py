"""Logging conventions: the TRACE level, secret redaction, and safe hook calls.

The library logs under ``agent_smith`` (``.llm``, ``.tool``, ``.mcp``,
``.skill``, ``.agent``) and never configures handlers or levels: that is the
application's job. Wire bodies go out at :data:`TRACE` (below DEBUG) and only
after :func:`redact`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

TRACE = 5
logging.addLevelName(TRACE, "TRACE")

REDACTED = "<redacted>"
_SECRET_HEADERS = frozenset(
    {
        "authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-amz-security-token",
        "cookie",
        "set-cookie",
    }
)
_SECRET_KEY = re.compile(
    r"api[-_]?key|access[-_]?token|bearer|password"
    # OAuth's credentials (token responses, registrations, token requests).
    r"|refresh[-_]?token|id[-_]?token|subject[-_]?token|secret|assertion|code[-_]?verifier"
    r"|private[-_]?key",
    re.IGNORECASE,
)

log = logging.getLogger("agent_smith")


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Copy of ``headers`` with credential-bearing values replaced."""
    return {k: REDACTED if k.lower() in _SECRET_HEADERS else v for k, v in headers.items()}


def redact(value: Any) -> Any:
    """Copy of a JSON value (or JSON text) with secret-named fields replaced.

    Keys matching ``api[-_]?key``, ``access[-_]?token``, ``bearer``,
    ``password`` or an OAuth credential (``refresh_token``, ``id_token``,
    ``subject_token``, ``*secret*``, ``*assertion*``, ``code_verifier``,
    ``private_key``), in any case and anywhere in the key, have their values
    replaced at every depth. Text that is not JSON is returned unchanged.
    """
    if isinstance(value, (str, bytes)):
        try:
            parsed = json.loads(value)
            return json.dumps(_redact_json(parsed), ensure_ascii=False)
        except (ValueError, UnicodeDecodeError):
            return value
        except RecursionError:  # JSON too deep to walk: it may hold a secret, so not shown
            return f"<{len(value)} characters of JSON nested too deeply to redact>"
    return _redact_json(value)


def _redact_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            k: REDACTED if isinstance(k, str) and _SECRET_KEY.search(k) else _redact_json(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_redact_json(v) for v in value]
    return value


def trace(logger: logging.Logger, what: str, body: Any) -> None:
    """Log a wire body at TRACE, redacted; costs nothing when TRACE is off."""
    if logger.isEnabledFor(TRACE):
        shown = redact(body)
        if not isinstance(shown, str):
            shown = json.dumps(shown, ensure_ascii=False, default=str)
        logger.log(TRACE, "%s: %s", what, shown)


def invoke_hook(hook: Callable[..., object] | None, *args: Any, name: str = "hook") -> None:
    """Call an observer hook; an exception it raises is logged and ignored."""
    if hook is None:
        return
    try:
        hook(*args)
    except Exception:
        log.warning("%s raised; ignored", name, exc_info=True)
