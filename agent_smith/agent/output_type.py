"""One output type ``T``: the JSON schema the model sees, and text -> validated ``T``.

:func:`output_schema` builds (once per type, then cached) an
:class:`OutputSchema`: the schema from the one generator
(:func:`~agent_smith.tools.schema.type_schema`), wrapped in an object
``{"response": ...}`` when ``T``'s own schema is not an object (``int``,
``list[Invoice]``, an ``Enum``, ``Optional[...]``) because tool arguments,
``json_object`` replies and OpenAI's ``json_schema`` all need an object at
the root; whether it qualifies for OpenAI's ``strict`` mode; its name and
description. :meth:`OutputSchema.read` parses a reply, validates it with
``jsonschema`` (the validator compiled once per type; a reply that does not
fit is tried once more with the wrapper added or removed, since small models
get it wrong both ways) and converts it with
the type's cached converter (:mod:`agent_smith.tools.convert`); what went
wrong comes back as an :class:`~agent_smith.errors.OutputValidationError`
whose ``errors`` the agent loop shows the model.
:func:`parse_output` is the same for callers (a history loaded from JSON
keeps only the raw text).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from .._internal import json_input
from .._internal.text import truncate_utf8
from ..errors import ConfigError, OutputValidationError
from ..tools.base import JsonObject
from ..tools.convert import Converter, converter
from ..tools.docstring import parse_docstring
from ..tools.schema import type_schema
from ..tools.validation import schema_problem, validation_errors

T = TypeVar("T")

WRAPPER_KEY = "response"
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n?```$", re.DOTALL)
_MAX_PROBLEM = 300
_NO_VALUE: Any = object()


@dataclass(frozen=True, eq=False)
class OutputSchema:
    """What the model must produce for output type ``type`` and how to read it."""

    type: Any
    name: str
    description: str
    schema: JsonObject
    wrapped: bool
    strict: bool
    _convert: Converter

    def read(self, text: str) -> Any:
        """Parse, validate and convert one reply's text.

        Raises OutputValidationError (``raw`` the text, ``errors`` what is
        wrong) when it does not fit.
        """
        body = text.strip()
        fenced = _FENCE.match(body)  # prompted replies often come in a ```json fence
        if fenced is not None:
            body = fenced.group(1).strip()
        try:
            value = json_input.loads(body)
        except json.JSONDecodeError as err:
            raise self.problem(text, [f"the reply is not valid JSON ({err})"]) from None
        return self.convert(value, raw=text)

    def convert(self, value: Any, *, raw: str, validated: bool = False) -> Any:
        """Validate (unless ``validated``) and convert a JSON value; as :meth:`read`."""
        if not validated:
            errors = validation_errors(self.schema, value)
            if errors:
                other = self._other_form(value)
                if other is _NO_VALUE:
                    raise self.problem(raw, errors)
                other_errors = validation_errors(self.schema, other)
                if other_errors:
                    # A bare value is judged as the value it was meant to be.
                    bare = self.wrapped and not isinstance(value, dict)
                    raise self.problem(raw, other_errors if bare else errors)
                value = other
        if self.wrapped:
            value = value[WRAPPER_KEY]
        try:
            return self._convert(value)
        except (TypeError, ValueError) as err:  # __post_init__ checks, pydantic validators
            detail = " ".join(str(err).split())
            raise self.problem(raw, [f"{self.name} rejected the value: {detail}"]) from err

    def _other_form(self, value: Any) -> Any:
        """``value`` wrapped or unwrapped, for a model that got the envelope wrong.

        Small models answer a bare ``"sad"`` where ``{"response": "sad"}`` was
        asked for, or wrap an object in ``{"response": ...}`` unasked.
        ``_NO_VALUE`` when there is no other form to try.
        """
        if self.wrapped:
            return {WRAPPER_KEY: value}
        if isinstance(value, dict) and len(value) == 1 and WRAPPER_KEY in value:
            return value[WRAPPER_KEY]
        return _NO_VALUE

    def problem(self, raw: str, errors: list[str]) -> OutputValidationError:
        """The error for ``raw`` not fitting, each of ``errors`` capped at 300 bytes."""
        # A message may quote a large value; the model needs the gist, not all of it.
        capped = tuple(truncate_utf8(error, _MAX_PROBLEM) for error in errors)
        return OutputValidationError(
            f"the reply does not fit {self.name}: {first_line(capped)}", raw=raw, errors=capped
        )


def first_line(errors: tuple[str, ...]) -> str:
    """The first error on one line, for an exception message or a log line."""
    return errors[0].split("\n", 1)[0] if errors else "no details"


def output_schema(output_type: Any) -> OutputSchema:
    """The cached :class:`OutputSchema` of ``output_type``; ConfigError if it has none."""
    try:
        return _cached(output_type)
    except TypeError as err:  # unhashable: not a type annotation we support
        raise ConfigError(f"output_type {output_type!r} is not a supported type") from err


def parse_output(output_type: type[T], text: str) -> T:
    """Parse and validate ``text`` (a typed reply's ``content``) into ``output_type``.

    Raises OutputValidationError (with ``raw`` and ``errors``) when it does not
    fit, ConfigError when the type has no JSON form.
    """
    return cast(T, output_schema(output_type).read(text))


@functools.lru_cache(maxsize=256)
def _cached(output_type: Any) -> OutputSchema:
    if output_type is None or output_type is type(None):
        raise ConfigError("output_type None has no JSON form; pass a type")
    try:
        inner = type_schema(output_type)
    except ConfigError as err:
        raise ConfigError(f"output_type {output_type!r}: {err}") from err
    name = _type_name(output_type)
    description = str(inner.get("description", "")) or _class_description(output_type)
    wrapped = inner.get("type") != "object"
    schema: JsonObject = inner
    if wrapped:
        schema = {
            "type": "object",
            "properties": {WRAPPER_KEY: inner},
            "required": [WRAPPER_KEY],
            "additionalProperties": False,
        }
    problem = schema_problem(schema)  # compiles the validator now, not mid-turn
    if problem is not None:
        raise ConfigError(f"output_type {output_type!r}: {problem}")
    convert = converter(output_type)  # a pydantic model converts with its own model_validate
    return OutputSchema(output_type, name, description, schema, wrapped, _strict(schema), convert)


def _type_name(output_type: Any) -> str:
    raw = output_type.__name__ if isinstance(output_type, type) else "output"
    return _NAME_CHARS.sub("_", raw)[:64] or "output"


def _class_description(output_type: Any) -> str:
    if not isinstance(output_type, type) or output_type.__module__ == "builtins":
        return ""
    doc = parse_docstring(output_type.__dict__.get("__doc__") or "").description
    # dataclass() invents a docstring like "Invoice(number: str, ...)"; that says nothing.
    return "" if doc.startswith(f"{output_type.__name__}(") else doc


def _strict(node: Any) -> bool:
    """Whether a schema fits OpenAI's strict mode: every object closed, all keys required."""
    if isinstance(node, list):
        return all(_strict(item) for item in node)
    if not isinstance(node, dict):
        return True
    kind = node.get("type")
    is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
    if is_object or "properties" in node:
        properties = node.get("properties", {})
        if node.get("additionalProperties") is not False:
            return False
        if set(node.get("required", ())) != set(properties):
            return False
    return all(_strict(value) for value in node.values())
