"""JSON Schema for a plain function's parameters, from its type hints and docstring.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``list[...]``,
``tuple[...]``, ``set[...]``, ``dict[str, ...]``, ``Any``, ``Optional[...]`` /
``X | None`` (nullable), other unions (``anyOf``), ``Literal[...]``, ``Enum``
subclasses (an enum of their values) and dataclasses (nested objects). A
parameter with a default is not required and its default is recorded. A
parameter annotated :class:`~agent_smith.tools.base.ToolContext` is left out:
the tool receives its context there.

Descriptions come from the docstring: its first paragraph describes the tool,
and a Google-style ``Args:`` section or a NumPy-style ``Parameters`` section
describes the parameters.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

from ..errors import ConfigError
from .base import JsonObject, ToolContext

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_GOOGLE_SECTIONS = ("args", "arguments", "parameters", "params", "keyword args")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(?::.*)?$")


@dataclasses.dataclass(frozen=True)
class FunctionSignature:
    """What :func:`function_schema` learned about a function."""

    description: str
    parameters: JsonObject
    hints: dict[str, Any]
    context_param: str | None


def function_schema(fn: Callable[..., Any]) -> FunctionSignature:
    """Build the parameters schema and description for ``fn``; ConfigError if unsupported."""
    hints = resolve_hints(hint_source(fn))
    doc = parse_docstring(inspect.getdoc(_unwrap_partial(fn)) or "")
    fields: list[tuple[str, JsonObject, Any]] = []
    context_param: str | None = None
    tool_name = callable_name(fn)
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigError(
                f"tool {tool_name!r}: *args/**kwargs cannot be described; pass an explicit schema"
            )
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext:
            context_param = param.name
            continue
        try:
            prop = type_schema(annotation)
        except ConfigError as err:
            raise ConfigError(
                f"tool {callable_name(fn)!r}, parameter {param.name!r}: {err}"
            ) from err
        default = _REQUIRED if param.default is param.empty else param.default
        fields.append((param.name, prop, default))
    parameters = _object_schema(fields, doc)
    return FunctionSignature(doc.description, parameters, hints, context_param)


def callable_name(fn: Callable[..., Any]) -> str:
    """A callable's name: a function's, a partial's function's, or the object's type's."""
    fn = _unwrap_partial(fn)
    return str(getattr(fn, "__name__", type(fn).__name__))


def _unwrap_partial(fn: Any) -> Any:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def hint_source(fn: Callable[..., Any]) -> Any:
    """Where a callable's annotations live (a partial's function, an object's __call__)."""
    fn = _unwrap_partial(fn)
    if inspect.isroutine(fn) or isinstance(fn, type):
        return fn
    return type(fn).__call__ if callable(fn) else fn


def resolve_hints(obj: Any) -> dict[str, Any]:
    """``typing.get_type_hints`` that reports unresolvable names as ConfigError."""
    try:
        return typing.get_type_hints(obj)
    except (NameError, TypeError) as err:
        name = getattr(obj, "__name__", repr(obj))
        raise ConfigError(f"cannot resolve the type hints of {name}: {err}") from err


def type_schema(annotation: Any) -> JsonObject:
    """JSON Schema for one annotation; ConfigError when it has no JSON form."""
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    if annotation is None or annotation is type(None):
        return {"type": "null"}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return _enum_schema(list(args))
    if origin is Union or origin is types.UnionType:
        return _union_schema(args)
    if origin in (list, set, frozenset, tuple) or annotation in (list, set, frozenset, tuple):
        return _array_schema(origin or annotation, args)
    if origin is dict or annotation is dict:
        if args and args[0] is not str:
            raise ConfigError("dict keys must be str to map onto a JSON object")
        value = type_schema(args[1]) if args else {}
        return {"type": "object", "additionalProperties": value or True}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_schema([member.value for member in annotation])
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return _dataclass_schema(annotation)
    raise ConfigError(f"unsupported type annotation {annotation!r}")


def _enum_schema(values: list[Any]) -> JsonObject:
    schema: JsonObject = {"enum": values}
    kinds = {_SCALARS.get(type(v)) for v in values}
    if len(kinds) == 1 and None not in kinds:
        schema = {"type": kinds.pop(), "enum": values}
    return schema


def _union_schema(args: tuple[Any, ...]) -> JsonObject:
    nullable = type(None) in args
    options = [type_schema(a) for a in args if a is not type(None)]
    if len(options) == 1:
        schema = options[0]
        if not nullable:
            return schema
        kind = schema.get("type")
        if isinstance(kind, str) and "enum" not in schema:
            return {**schema, "type": [kind, "null"]}
        if "enum" in schema:
            nullable_enum: JsonObject = {"enum": [*schema["enum"], None]}
            if isinstance(kind, str):
                nullable_enum = {"type": [kind, "null"], **nullable_enum}
            return nullable_enum
        if not schema:
            return {}
        return {"anyOf": [schema, {"type": "null"}]}
    if nullable:
        options.append({"type": "null"})
    return {"anyOf": options}


def _array_schema(origin: Any, args: tuple[Any, ...]) -> JsonObject:
    schema: JsonObject = {"type": "array"}
    if origin is tuple and args and args[-1] is not Ellipsis:
        items = [type_schema(a) for a in args]
        return {**schema, "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
    if args:
        item = type_schema(args[0])
        if item:
            schema["items"] = item
    if origin in (set, frozenset):
        schema["uniqueItems"] = True
    return schema


def _dataclass_schema(cls: type) -> JsonObject:
    hints = resolve_hints(cls)
    doc = parse_docstring(inspect.getdoc(cls) or "")
    fields: list[tuple[str, JsonObject, Any]] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = _NO_DEFAULT  # made fresh per instance: optional, no default shown
        else:
            default = _REQUIRED
        fields.append((f.name, type_schema(hints.get(f.name, Any)), default))
    schema = _object_schema(fields, doc)
    # dataclass() invents a docstring like "Point(x: int, y: int)"; skip that one.
    if doc.description and not doc.description.startswith(f"{cls.__name__}("):
        schema["description"] = doc.description
    return schema


_NO_DEFAULT = object()
_REQUIRED = object()


def _object_schema(fields: list[tuple[str, JsonObject, Any]], doc: Docstring) -> JsonObject:
    """A closed object schema of ``(name, schema, default)`` fields.

    Each field gets its description from ``doc``; a ``_REQUIRED`` default
    makes it required, any other leaves it optional and is recorded when it
    has a JSON form.
    """
    properties: JsonObject = {}
    required: list[str] = []
    for name, prop, default in fields:
        if name in doc.params:
            prop = {**prop, "description": doc.params[name]}
        if default is _REQUIRED:
            required.append(name)
        else:
            value = json_default(default)
            if value is not _NO_DEFAULT:
                prop = {**prop, "default": value}
        properties[name] = prop
    schema: JsonObject = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def json_default(value: Any) -> Any:
    """The JSON form of a default value, or a sentinel when it has none."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        items = [json_default(v) for v in value]
        return _NO_DEFAULT if any(i is _NO_DEFAULT for i in items) else items
    return _NO_DEFAULT


@dataclasses.dataclass(frozen=True)
class Docstring:
    """A docstring split into the description and per-parameter text."""

    description: str
    params: dict[str, str]


def parse_docstring(doc: str) -> Docstring:
    """Split a cleaned docstring into its first paragraph and parameter descriptions.

    Understands Google style (``Args:`` then indented ``name (type): text``)
    and NumPy style (``Parameters`` underlined with dashes, then ``name : type``
    with the text indented below).
    """
    lines = inspect.cleandoc(doc).splitlines()
    paragraph: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip():
            if paragraph:
                break
            continue
        if _is_section_start(lines, index):
            break
        paragraph.append(line.strip())
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        header = lines[i].strip().lower()
        if header.rstrip(":") in _GOOGLE_SECTIONS and header.endswith(":"):
            i = _google_params(lines, i + 1, params)
        elif (
            header in ("parameters", "other parameters")
            and i + 1 < len(lines)
            and _NUMPY_UNDERLINE.match(lines[i + 1])
        ):
            i = _numpy_params(lines, i + 2, params)
        else:
            i += 1
    return Docstring(" ".join(paragraph), params)


def _is_section_start(lines: list[str], index: int) -> bool:
    header = lines[index].strip().lower()
    if header.endswith(":") and header.rstrip(":") in (*_GOOGLE_SECTIONS, "returns", "raises"):
        return True
    return index + 1 < len(lines) and bool(_NUMPY_UNDERLINE.match(lines[index + 1]))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_params(lines: list[str], i: int, params: dict[str, str]) -> int:
    base: int | None = None
    name: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = _indent(line)
        if base is None:
            base = indent
        if indent == 0 or indent < base:
            break
        match = _GOOGLE_PARAM.match(line.strip()) if indent == base else None
        if match:
            name = match.group(1).lstrip("*")
            params[name] = match.group(2).strip()
        elif name is not None:
            params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i


def _numpy_params(lines: list[str], i: int, params: dict[str, str]) -> int:
    name: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _indent(line) == 0:
            if i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1]):
                break  # the next section
            match = _NUMPY_PARAM.match(line.strip())
            if match is None:
                break
            name = match.group(1).lstrip("*")
            params[name] = ""
        elif name is not None:
            params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i
