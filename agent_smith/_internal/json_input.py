"""``json.loads`` for untrusted input: every failure is a ``json.JSONDecodeError``.

The stdlib parser recurses once per nesting level, so ``[[[[...`` a few
thousand deep raises ``RecursionError`` instead of a ``ValueError``: a server
reply, a frame, a stored row or a model's text could end a reader thread with
a bare traceback. :func:`loads` turns that into the ``JSONDecodeError`` every
caller already handles.
"""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    """Parse ``text`` as JSON; ``json.JSONDecodeError`` for anything that is not."""
    try:
        return json.loads(text)
    except RecursionError:
        raise too_deep(text) from None


def too_deep(text: str | bytes) -> json.JSONDecodeError:
    """The error for JSON nested deeper than the parser can follow."""
    doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
    return json.JSONDecodeError("nested too deeply", doc, 0)
