"""Tools from plain Python functions: ``@tool`` and ``make_tool``.

The schema comes from the function's type hints and docstring (see
:mod:`agent_smith.tools.schema`) unless one is given, in which case it is used
verbatim. Arguments arrive as keyword arguments, converted back to the
annotated types by :mod:`agent_smith.tools.convert` (a dataclass parameter
receives an instance, an ``Enum`` parameter a member). A parameter annotated
``ToolContext`` receives the call's context instead.

Return values are normalised as seed §10.2: ``str`` is the text; ``None`` is
empty text; a ``ToolResult`` passes through; anything else JSON-serialisable
becomes JSON text and is also kept in ``structured``. A raised exception
becomes an error result carrying the exception's message (the traceback goes
to the log, never to the model).

``async def`` functions run to completion on their own event loop in the
calling thread (the dispatcher's worker); if that thread already runs a loop
(a direct call from Jupyter, say), they run on a fresh thread instead.
Cancelling the call's token cancels the coroutine.
"""

from __future__ import annotations

import functools
import inspect
import logging
import typing
from collections.abc import Callable
from typing import Any, overload

from .._internal import json_output
from ..errors import CancelledError, ConfigError, ToolError
from ..observer import get_observer
from .base import (
    ApprovalMarker,
    JsonObject,
    Tool,
    ToolContext,
    ToolOptions,
    ToolResult,
    ToolSchema,
    check_tool_name,
)
from .convert import convert_value, to_json_value
from .docstring import parse_docstring
from .schema import callable_name, function_schema, hint_source

log = logging.getLogger("agent_smith.tool")

ToolFunction = Callable[..., Any]


class FunctionTool(Tool):
    """A :class:`Tool` that calls a plain (sync or async) function.

    Made by :func:`tool` / :func:`make_tool`; calling the object calls the
    original function unchanged.
    """

    def __init__(
        self,
        fn: ToolFunction,
        *,
        schema: ToolSchema,
        options: ToolOptions,
        hints: dict[str, Any],
        context_param: str | None,
        convert: bool,
    ) -> None:
        self._fn = fn
        self._schema = schema
        self._options = options
        self._hints = hints
        self._context_param = context_param
        self._convert = convert
        self._is_async = inspect.iscoroutinefunction(fn)
        functools.update_wrapper(self, fn)

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    @property
    def options(self) -> ToolOptions:
        return self._options

    @property
    def function(self) -> ToolFunction:
        """The wrapped function."""
        return self._fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool({self._schema.name!r})"

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        """Call the function with ``args``; never raises for a failure of the function."""
        kwargs = dict(args)
        if self._convert:
            kwargs = {k: convert_value(v, self._hints.get(k, Any)) for k, v in kwargs.items()}
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        try:
            value = self._fn(**kwargs)
            if type(value) is not str and inspect.isawaitable(value):  # str: the usual result
                from .coroutines import run_awaitable  # asyncio loads only for async tools

                value = run_awaitable(value, ctx.cancel)
        except CancelledError:
            return ToolResult("cancelled", is_error=True)
        except Exception as err:
            log.debug("tool %s raised", self._schema.name, exc_info=True)
            get_observer().on_tool_raised(err)
            return ToolResult(describe_exception(err), is_error=True)
        return normalize_result(value)


@overload
def tool(fn: ToolFunction, /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    requires_approval: ApprovalMarker = False,
    read_only: bool = False,
    idempotent: bool = False,
) -> Callable[[ToolFunction], FunctionTool]: ...


def tool(
    fn: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    requires_approval: ApprovalMarker = False,
    read_only: bool = False,
    idempotent: bool = False,
) -> FunctionTool | Callable[[ToolFunction], FunctionTool]:
    """Turn a function into a tool: ``@tool`` or ``@tool(name=..., timeout=...)``."""
    if fn is not None:
        return make_tool(fn)

    def decorate(f: ToolFunction) -> FunctionTool:
        return make_tool(
            f,
            name=name,
            description=description,
            timeout=timeout,
            requires_approval=requires_approval,
            read_only=read_only,
            idempotent=idempotent,
        )

    return decorate


def make_tool(
    fn: ToolFunction,
    *,
    schema: ToolSchema | JsonObject | None = None,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    requires_approval: ApprovalMarker = False,
    read_only: bool = False,
    idempotent: bool = False,
) -> FunctionTool:
    """Build a tool from ``fn``.

    ``schema`` may be a full :class:`ToolSchema` (used as is), or a dict: the
    JSON-Schema ``parameters`` object, or an OpenAI-style function object
    with ``name``/``description``/``parameters``. Without it the schema is
    generated from the type hints and docstring. ``timeout`` (seconds) and
    ``requires_approval`` (``True`` or a predicate of the arguments: calls
    wait for a person's approval), ``read_only`` (the tool changes nothing) and
    ``idempotent`` (running it twice does no more than once) become the tool's
    default :class:`ToolOptions`.
    """
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"tool timeout must be positive, got {timeout!r}")
    options = ToolOptions(
        timeout=timeout,
        requires_approval=requires_approval,
        read_only=read_only,
        idempotent=idempotent,
    )
    fn_name = callable_name(fn)
    if schema is None:
        sig = function_schema(fn)
        tool_schema = ToolSchema(
            name or fn_name,
            description if description is not None else sig.description,
            sig.parameters,
        )
        hints, context_param, convert = sig.hints, sig.context_param, True
    else:
        tool_schema = _explicit_schema(schema, name or fn_name, description, fn)
        hints = _lenient_hints(fn)
        context_param = next((k for k, v in hints.items() if v is ToolContext), None)
        convert = False
    check_tool_name(tool_schema.name)
    return FunctionTool(
        fn,
        schema=tool_schema,
        options=options,
        hints=hints,
        context_param=context_param,
        convert=convert,
    )


def _explicit_schema(
    schema: ToolSchema | JsonObject, name: str, description: str | None, fn: ToolFunction
) -> ToolSchema:
    if isinstance(schema, ToolSchema):
        return schema
    if not isinstance(schema, dict):
        raise ConfigError(f"tool {name!r}: schema must be a ToolSchema or a dict")
    if "parameters" in schema and "type" not in schema:
        parameters = schema["parameters"]
        name = schema.get("name", name)
        description = schema.get("description", description)
    else:
        parameters = schema
    if not isinstance(parameters, dict):
        raise ConfigError(f"tool {name!r}: parameters must be a JSON-Schema object")
    if description is None:
        doc = inspect.getdoc(fn.func if isinstance(fn, functools.partial) else fn)
        description = parse_docstring(doc or "").description
    return ToolSchema(name, description, parameters)


def _lenient_hints(fn: ToolFunction) -> dict[str, Any]:
    try:
        return typing.get_type_hints(hint_source(fn))
    except (NameError, TypeError):
        return {}


def normalize_result(value: Any) -> ToolResult:
    """Map a tool function's return value onto a :class:`ToolResult` (seed §10.2)."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult("")
    if isinstance(value, str):
        return ToolResult(value)
    value = to_json_value(value)
    try:
        text = json_output.dumps(value)
    except (TypeError, ValueError):
        return ToolResult(str(value))
    return ToolResult(text, structured=value)


def describe_exception(err: BaseException) -> str:
    """One line for the model: the message, with the exception type unless it is ours."""
    if isinstance(err, ToolError):
        return str(err) or type(err).__name__
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
