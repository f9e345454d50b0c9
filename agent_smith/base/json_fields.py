"""Reading untrusted JSON objects field by field, with ParseErrors that say where.

Shared by the codecs of the base layer (stored histories, paused turns) and the
providers' reply parsers.
"""

from __future__ import annotations

from typing import Any

from ..errors import ParseError

JsonObject = dict[str, Any]


def expect_object(data: object, where: str) -> JsonObject:
    """``data`` as a JSON object; ParseError naming ``where`` if it is something else."""
    if not isinstance(data, dict):
        raise ParseError(f"{where} must be a JSON object, got {type(data).__name__}")
    return data


#: The ``default`` of :func:`json_field` for a key that must be present.
REQUIRED: Any = object()


def json_field(
    obj: JsonObject, key: str, kind: type[Any], default: Any, where: str, what: str
) -> Any:
    """``obj[key]`` if it is a ``kind``; ``default`` if absent (or null, when that is None).

    ParseError saying ``where`` is not a valid ``what`` otherwise, or when a
    ``REQUIRED`` key is missing.
    """
    value = obj.get(key, REQUIRED)
    if type(value) is kind:  # the common case; exact, so True is no int and 1 no bool
        return value
    if value is REQUIRED or (value is None and default is None):
        if default is REQUIRED:
            raise ParseError(f"{where} is not a valid {what}: {key!r} is missing")
        return default
    raise ParseError(
        f"{where} is not a valid {what}: {key!r} must be {kind.__name__}, "
        f"got {type(value).__name__}"
    )
