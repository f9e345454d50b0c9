"""Validated JSON values to annotated Python types, and Python values back to JSON.

:func:`converter` builds, once per annotation, a function that turns a JSON
value already checked against :func:`~agent_smith.tools.schema.type_schema`
into the annotated type: a dataclass or ``TypedDict`` from an object, an
``Enum`` member from its value, ``float`` from an integer, ``set``/``tuple``
from an array, a pydantic model through its own ``model_validate``. Tool
arguments and typed agent outputs both go through it. Building a converter
walks the annotation once (type hints resolved, fields listed); converting
then only calls small closures, which is what keeps a typed output cheap to
read (see ``scripts/bench_output.py``).

A union of several non-null types converts with the first member whose
schema the value fits. :func:`to_json_value` goes the other way, for tool
results and a sub-agent's typed output.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union

from .schema import is_model_class, is_typeddict, resolve_hints, type_schema

Converter = Callable[[Any], Any]


def convert_value(value: Any, annotation: Any) -> Any:
    """Turn a validated JSON value back into the annotated Python type."""
    return converter(annotation)(value)


def converter(annotation: Any) -> Converter:
    """The (cached) function that converts JSON values into ``annotation``."""
    try:
        return _cached(annotation)
    except TypeError:  # an unhashable annotation (Literal of a list, say): build afresh
        return _build(annotation)


def _identity(value: Any) -> Any:
    return value


@functools.lru_cache(maxsize=1024)
def _cached(annotation: Any) -> Converter:
    return _build(annotation)


def _build(annotation: Any) -> Converter:
    if annotation is float:
        return _to_float
    if annotation is Any:
        return _identity
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return _nullable(annotation)
        if is_model_class(annotation):
            return _nullable(annotation.model_validate)  # type: ignore[attr-defined]
        if dataclasses.is_dataclass(annotation):
            return _dataclass(annotation)
        if is_typeddict(annotation):
            return _typeddict(annotation)
        return _identity
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Union or origin is types.UnionType:
        return _union(tuple(a for a in args if a is not type(None)))
    if origin is Literal or not args:
        return _identity
    if origin in (list, set, frozenset):
        return _sequence(origin, converter(args[0]))
    if origin is tuple:
        if args[-1] is Ellipsis:
            return _sequence(tuple, converter(args[0]))
        return _fixed_tuple(tuple(converter(a) for a in args))
    if origin is dict and len(args) == 2:
        return _mapping(converter(args[1]))
    return _identity


def _to_float(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _nullable(make: Callable[[Any], Any]) -> Converter:
    def convert(value: Any) -> Any:
        return None if value is None else make(value)

    return convert


def _dataclass(cls: type) -> Converter:
    hints = resolve_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    fields: dict[str, Converter] | None = None

    def convert(value: Any) -> Any:
        nonlocal fields
        if not isinstance(value, dict):
            return value
        if fields is None:  # built on first use, so a dataclass may refer to itself
            fields = {name: converter(hints.get(name, Any)) for name in names}
        return cls(**{k: fields[k](v) for k, v in value.items() if k in fields})

    return convert


def _typeddict(cls: type) -> Converter:
    hints = resolve_hints(cls)
    keys: dict[str, Converter] | None = None

    def convert(value: Any) -> Any:
        nonlocal keys
        if not isinstance(value, dict):
            return value
        if keys is None:
            keys = {name: converter(hint) for name, hint in hints.items()}
        return {k: keys[k](v) if k in keys else v for k, v in value.items()}

    return convert


def _union(options: tuple[Any, ...]) -> Converter:
    if len(options) == 1:
        return converter(options[0])
    members = [(option, converter(option)) for option in options]
    if all(convert is _identity for _, convert in members):
        return _identity

    def convert(value: Any) -> Any:
        from .validation import fits  # jsonschema loads only when a union needs it

        for option, member in members:
            if fits(_schema_of(option), value):
                return member(value)
        return value

    return convert


@functools.lru_cache(maxsize=256)
def _schema_of(annotation: Any) -> dict[str, Any]:
    return type_schema(annotation)  # one object per type: the validator cache keys on it


def _sequence(kind: Callable[[Any], Any], item: Converter) -> Converter:
    def convert(value: Any) -> Any:
        if not isinstance(value, list):
            return value
        if item is _identity:
            return value if kind is list else kind(value)
        return kind([item(v) for v in value])

    return convert


def _fixed_tuple(items: tuple[Converter, ...]) -> Converter:
    def convert(value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return tuple(item(v) for v, item in zip(value, items, strict=False))

    return convert


def _mapping(item: Converter) -> Converter:
    def convert(value: Any) -> Any:
        if not isinstance(value, dict) or item is _identity:
            return value
        return {k: item(v) for k, v in value.items()}

    return convert


def to_json_value(value: Any, *, default: Callable[[Any], Any] | None = None) -> Any:
    """``value`` as plain JSON data: dataclasses, enums, pydantic models, sets unpacked.

    Mapping keys become strings (JSON has no others). A value with no JSON
    form (an arbitrary object) goes through ``default`` (``str``, say), or is
    returned unchanged without one, so ``json.dumps`` of the result decides.
    """
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, enum.Enum):
        return to_json_value(value.value, default=default)
    if isinstance(value, Mapping):
        return {str(k): to_json_value(v, default=default) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json_value(v, default=default) for v in value]
    dump = getattr(value, "model_dump", None)  # a pydantic model, duck-typed
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return {f.name: to_json_value(getattr(value, f.name), default=default) for f in fields}
    return value if default is None else default(value)
