"""``json.loads`` for untrusted input: every failure is a ``json.JSONDecodeError``.

The stdlib parser recurses once per nesting level, so ``[[[[...`` a few
thousand deep raises ``RecursionError`` instead of a ``ValueError``: a server
reply, a frame, a stored row or a model's text could end a reader thread with
a bare traceback. :func:`loads` turns that into the ``JSONDecodeError`` every
caller already handles.

:data:`scan` is the stdlib's C scanner itself, which ``json.loads`` calls
after two regular-expression passes and a few Python calls of its own: text
that is one JSON value with nothing around it (what servers and this library
write) parses in one C call. Hot loops call it directly; :func:`loads` tries
it first and leaves everything else (whitespace around the value, a byte
string, an error to explain) to ``json.loads``.
"""

from __future__ import annotations

import json
import json.scanner
from typing import Any

#: The C JSON scanner: ``scan(text, 0) -> (value, end)``; raises StopIteration, ValueError
#: or RecursionError where ``json.loads`` would raise (or would skip leading whitespace).
scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def loads(text: str | bytes) -> Any:
    """Parse ``text`` as JSON; ``json.JSONDecodeError`` for anything that is not."""
    if type(text) is str:
        try:
            value, end = scan(text, 0)
        except (StopIteration, ValueError, RecursionError):
            pass  # json.loads says what is wrong (or skips the whitespace)
        else:
            if end == len(text):
                return value
    try:
        return json.loads(text)
    except RecursionError:
        raise too_deep(text) from None


def too_deep(text: str | bytes) -> json.JSONDecodeError:
    """The error for JSON nested deeper than the parser can follow."""
    doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
    return json.JSONDecodeError("nested too deeply", doc, 0)
