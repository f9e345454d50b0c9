"""Importable names (``"package.module:attribute"``): how a spec points at code.

A spec names its tools and its output type instead of holding them, so it
pickles, travels to worker processes on other machines and loads from JSON.
The name is checked for shape where the spec is made (:func:`check_name`) and
imported where the agent is built (:func:`resolve_name`), on the worker: the
module must be importable there (installed, or on ``PYTHONPATH``).
"""

from __future__ import annotations

import importlib
import re

from ..errors import ConfigError

_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def check_name(name: object, *, what: str) -> str:
    """Return ``name`` if it has the ``module:attribute`` shape; else ConfigError."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(
            f"{what} must be an importable name like 'package.module:function', got {name!r}"
        )
    return name


def resolve_name(name: str, *, what: str) -> object:
    """Import ``module`` and return its ``attribute`` (dots walk nested attributes).

    Raises ConfigError naming ``what`` when the module cannot be imported or
    has no such attribute.
    """
    module_name, _, path = check_name(name, what=what).partition(":")
    try:
        value: object = importlib.import_module(module_name)
    except ImportError as err:
        raise ConfigError(f"{what} {name!r}: cannot import {module_name!r} ({err})") from err
    for part in path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError as err:
            raise ConfigError(f"{what} {name!r}: {module_name!r} has no {path!r}") from err
    return value
