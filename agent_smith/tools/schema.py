"""JSON Schema from Python types: a function's parameters, a typed output.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``list[...]``,
``tuple[...]``, ``set[...]``, ``dict[str, ...]``, ``Any``, ``Optional[...]`` /
``X | None`` (nullable), other unions (``anyOf``), ``Literal[...]``, ``Enum``
subclasses (an enum of their values), dataclasses and ``TypedDict`` classes
(nested objects), and pydantic models, duck-typed: a class with
``model_json_schema`` and ``model_validate`` gives its own schema, its
``$defs`` inlined (pydantic itself is never imported here). A
parameter with a default is not required and its default is recorded. A
parameter annotated :class:`~agent_smith.tools.base.ToolContext` (or
``ToolContext | None``, for a method also called directly) is left out: the
tool receives its context there. The same :func:`type_schema` describes
typed agent outputs (:mod:`agent_smith.agent.output_type`).

Descriptions come from the docstring (:mod:`.docstring`): its first paragraph
describes the tool (or the dataclass), and a Google-style ``Args:`` section or
a NumPy-style ``Parameters`` section describes the parameters (or fields).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

from ..errors import ConfigError
from .base import JsonObject, ToolContext
from .docstring import Docstring, parse_docstring

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


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
        if annotation is ToolContext or annotation == ToolContext | None:
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
    if is_model_class(annotation):
        return _model_schema(annotation)
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return _dataclass_schema(annotation)
    if is_typeddict(annotation):
        return _typeddict_schema(annotation)
    raise ConfigError(f"unsupported type annotation {annotation!r}")


def is_model_class(annotation: Any) -> bool:
    """Whether ``annotation`` looks like a pydantic model class (duck-typed, never imported)."""
    return (
        isinstance(annotation, type)
        and callable(getattr(annotation, "model_json_schema", None))
        and callable(getattr(annotation, "model_validate", None))
    )


def is_typeddict(annotation: Any) -> bool:
    """Whether ``annotation`` is a ``TypedDict`` class (``typing``'s or ``typing_extensions``')."""
    return (
        isinstance(annotation, type)
        and issubclass(annotation, dict)
        and hasattr(annotation, "__required_keys__")
    )


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


def _typeddict_schema(cls: type) -> JsonObject:
    hints = resolve_hints(cls)
    # inspect.getdoc would inherit dict's own docstring.
    doc = parse_docstring(cls.__dict__.get("__doc__") or "")
    required: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    fields = [
        (name, type_schema(hint), _REQUIRED if name in required else _NO_DEFAULT)
        for name, hint in hints.items()
    ]
    schema = _object_schema(fields, doc)
    if doc.description:
        schema["description"] = doc.description
    return schema


def _model_schema(cls: type) -> JsonObject:
    try:
        schema = cls.model_json_schema()  # type: ignore[attr-defined]
    except Exception as err:  # a model's own schema hook may raise anything
        raise ConfigError(f"{cls.__name__}.model_json_schema() failed: {err}") from err
    if not isinstance(schema, dict):
        raise ConfigError(f"{cls.__name__}.model_json_schema() did not return a dict")
    defs = schema.pop("$defs", {})
    # Inlined, the schema can nest anywhere (a "#/$defs/..." ref resolves against the root).
    return _inline_refs(schema, defs, (), cls.__name__)  # type: ignore[no-any-return]


def _inline_refs(node: Any, defs: JsonObject, seen: tuple[str, ...], owner: str) -> Any:
    if isinstance(node, list):
        return [_inline_refs(item, defs, seen, owner) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        if name == ref or name not in defs:
            raise ConfigError(f"{owner}: cannot resolve the schema reference {ref!r}")
        if name in seen:
            raise ConfigError(f"{owner}: recursive models ({name}) have no inline JSON schema")
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        target = _inline_refs(defs[name], defs, (*seen, name), owner)
        return {**target, **_inline_refs(siblings, defs, seen, owner)}
    return {key: _inline_refs(value, defs, seen, owner) for key, value in node.items()}


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
