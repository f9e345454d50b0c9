"""``json.dumps(value, ensure_ascii=False)`` without building an encoder per call.

``json.dumps`` with any option other than its defaults constructs a
``JSONEncoder`` on every call, which costs more than encoding a small value
(a tool call's arguments, say). :func:`dumps` encodes with one shared encoder
(encoding keeps no state between calls, so threads may share it); the text
is the same.
"""

from __future__ import annotations

import json
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False)


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``."""
    return _ENCODER.encode(value)
