"""Check JSON values against a JSON Schema (with ``jsonschema``): tool arguments, outputs.

``jsonschema`` is imported on the first validation, not at ``import
agent_smith``, because it is comparatively slow to import and many programs
never call a tool. Validators are built (and their schema checked) once per
schema object and reused, so callers keep one schema object per tool or type.

References resolve only inside the schema itself: a ``$ref`` to a URL is
reported as unresolvable, never fetched (a tool's schema comes from a model
provider or an MCP server, and validating must not reach the network).
"""

from __future__ import annotations

import threading
from itertools import islice
from typing import Any

from .base import JsonObject

_MAX_CACHED = 512
_MAX_REPORTED = 5
_cache: dict[int, tuple[JsonObject, Any]] = {}
_cache_lock = threading.Lock()


def validation_error(parameters: JsonObject, arguments: JsonObject) -> str | None:
    """Describe why ``arguments`` violate ``parameters``, or return None if they fit."""
    errors = validation_errors(parameters, arguments)
    return "; ".join(errors) if errors else None


def validation_errors(schema: JsonObject, instance: Any) -> list[str]:
    """Why ``instance`` violates ``schema``, most relevant first (at most 5); [] if it fits.

    Each entry names where (``at 'lines.0.qty': ...``) unless it is about the
    whole value. A schema that is itself invalid gives one entry saying so.
    """
    cached = _cache.get(id(schema))  # the common case, without imports or the lock
    if cached is not None and cached[0] is schema and cached[1].is_valid(instance):
        return []
    import jsonschema.exceptions
    from referencing.exceptions import Unresolvable

    try:
        validator = _validator(schema)
        if validator.is_valid(instance):  # without collecting anything
            return []
        found = list(islice(validator.iter_errors(instance), 64))
    except jsonschema.exceptions.SchemaError as err:
        return [_invalid_schema(err)]
    except Unresolvable as err:
        return [f"the schema refers to {err.ref!r}, which is not in the schema"]
    best = jsonschema.exceptions.best_match(found)
    ordered = [best, *(e for e in found if e is not best)]
    return [_describe(error) for error in ordered[:_MAX_REPORTED]]


def schema_problem(schema: JsonObject) -> str | None:
    """Compile and cache ``schema``'s validator now; say what is wrong if it is invalid."""
    import jsonschema.exceptions

    try:
        _validator(schema)
    except jsonschema.exceptions.SchemaError as err:
        return _invalid_schema(err)
    return None


def fits(schema: JsonObject, instance: Any) -> bool:
    """Whether ``instance`` is valid against ``schema`` (the schema must be valid)."""
    return bool(_validator(schema).is_valid(instance))


def _invalid_schema(err: Any) -> str:
    return f"the schema is invalid ({err.message})"


def _describe(error: Any) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    return f"at {where!r}: {error.message}" if where else str(error.message)


def _validator(parameters: JsonObject) -> Any:
    import jsonschema.validators
    from referencing import Registry

    key = id(parameters)
    # A dict read is atomic: only writers take the lock, so concurrent
    # validations of known schemas never wait on one another.
    cached = _cache.get(key)
    # The cache keeps the schema alive, so a matching id means the same object.
    if cached is not None and cached[0] is parameters:
        return cached[1]
    cls = jsonschema.validators.validator_for(parameters)
    cls.check_schema(parameters)
    validator = cls(parameters, registry=Registry())  # empty: no remote retrieval
    with _cache_lock:
        if len(_cache) >= _MAX_CACHED:
            _cache.clear()
        _cache[key] = (parameters, validator)
    return validator
