"""Check tool-call arguments against the tool's JSON Schema (with ``jsonschema``).

``jsonschema`` is imported on the first validation, not at ``import
agent_smith``, because it is comparatively slow to import and many programs
never call a tool. Validators are built once per schema object and reused.
"""

from __future__ import annotations

import threading
from typing import Any

from .base import JsonObject

_MAX_CACHED = 512
_cache: dict[int, tuple[JsonObject, Any]] = {}
_cache_lock = threading.Lock()


def validation_error(parameters: JsonObject, arguments: JsonObject) -> str | None:
    """Describe why ``arguments`` violate ``parameters``, or return None if they fit."""
    import jsonschema.exceptions

    try:
        validator = _validator(parameters)
    except jsonschema.exceptions.SchemaError as err:
        return f"the tool's parameter schema is invalid ({err.message})"
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    return f"at {where!r}: {error.message}" if where else error.message


def _validator(parameters: JsonObject) -> Any:
    import jsonschema.validators

    key = id(parameters)
    with _cache_lock:
        cached = _cache.get(key)
    # The cache keeps the schema alive, so a matching id means the same object.
    if cached is not None and cached[0] is parameters:
        return cached[1]
    cls = jsonschema.validators.validator_for(parameters)
    cls.check_schema(parameters)
    validator = cls(parameters)
    with _cache_lock:
        if len(_cache) >= _MAX_CACHED:
            _cache.clear()
        _cache[key] = (parameters, validator)
    return validator
