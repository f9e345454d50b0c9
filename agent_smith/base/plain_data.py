"""Frozen settings dataclasses from plain JSON values, type-checked field by field.

A JSON file that configures :class:`~agent_smith.AgentConfig` or
:class:`~agent_smith.SamplingParams` must fail with a :class:`ConfigError`
naming the key (``spec.config.max_iterations must be an integer``), not with
a ``TypeError`` deep inside a comparison. :func:`from_plain` checks each value
against the field's type hint; the dataclass's own ``__post_init__`` then
checks the ranges. Only the hint shapes settings use are understood: ``bool``,
``int``, ``float``, ``str``, ``Any``, ``X | None``, ``tuple[X, ...]``,
``dict[str, X]`` (or ``Mapping``), ``Literal[...]`` and nested settings
dataclasses.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from ..errors import ConfigError

T = TypeVar("T")

_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def from_plain(cls: type[T], data: object, *, where: str) -> T:
    """Build the dataclass ``cls`` from a JSON object; ConfigError names the bad key."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where} must be an object, got {json_type(data)}")
    hints = get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}")
    kwargs = {key: _convert(value, hints[key], f"{where}.{key}") for key, value in data.items()}
    try:
        return cls(**kwargs)
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from err


def _convert(value: object, hint: Any, where: str) -> Any:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]
        if value is None and len(options) < len(get_args(hint)):
            return None
        (inner,) = options  # settings only use ``X | None``
        return _convert(value, inner, where)
    if hint is Any:
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where} must be a list, got {json_type(value)}")
        inner = get_args(hint)[0]
        return tuple(_convert(v, inner, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is Literal:
        if value not in get_args(hint):
            choices = ", ".join(repr(a) for a in get_args(hint))
            raise ConfigError(f"{where} must be one of {choices}, got {value!r}")
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_plain(hint, value, where=where)
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise ConfigError(f"{where} must be an object, got {json_type(value)}")
        inner = get_args(hint)[1]
        return {k: _convert(v, inner, f"{where}.{k}") for k, v in value.items()}
    if hint in _NAMES:
        ok = isinstance(value, hint) and (hint is bool or not isinstance(value, bool))
        if hint is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not ok:
            raise ConfigError(f"{where} must be {_NAMES[hint]}, got {json_type(value)}")
        return value
    raise TypeError(f"from_plain cannot check a field of type {hint!r}")  # a programming error


def json_type(value: object) -> str:
    """How a JSON value's type is named in an error message (``a string``, ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
