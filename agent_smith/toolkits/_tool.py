"""Toolkit methods as tools: a schema from the method, extra arguments ignored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tools.base import (
    ApprovalMarker,
    JsonObject,
    Said,
    Tool,
    ToolContext,
    ToolOptions,
    ToolResult,
    ToolSchema,
)
from ..tools.function import make_tool
from ..tools.schema import function_schema


def toolkit_tool(
    fn: Callable[..., Any],
    *,
    name: str,
    read_only: bool,
    requires_approval: ApprovalMarker = False,
    grounding: Grounding | None = None,
) -> Tool:
    """``fn`` (a toolkit's bound method) as a tool named ``name``.

    The schema comes from the method's hints and docstring, but allows
    arguments it does not name, which the call then drops: small models
    often add a stray key to an otherwise right call, and refusing it failed
    calls that would have worked (measured on the demo's local model).
    Whatever ``fn`` raises becomes an error result the model reads. A
    parameter of ``fn`` annotated ``ToolContext`` receives the call's context.
    ``grounding`` is the tool's :meth:`~agent_smith.tools.base.Tool.ungrounded`.
    """
    signature = function_schema(fn)
    parameters = {k: v for k, v in signature.parameters.items() if k != "additionalProperties"}
    accepted = frozenset(parameters.get("properties", {}))
    wants_context = signature.context_param

    def call(_toolkit_context: ToolContext, **kwargs: Any) -> Any:
        arguments = {key: value for key, value in kwargs.items() if key in accepted}
        if wants_context is not None:
            arguments[wants_context] = _toolkit_context
        return fn(**arguments)

    made = make_tool(
        call,
        schema=ToolSchema(name, signature.description, parameters),
        read_only=read_only,
        requires_approval=requires_approval,
    )
    return made if grounding is None else _Grounded(made, grounding)


#: A tool's grounding check: why the arguments look made up, or None.
Grounding = Callable[[JsonObject, Said], "str | None"]


class _Grounded(Tool):
    """``tool`` with ``grounding`` as its :meth:`ungrounded` check."""

    def __init__(self, tool: Tool, grounding: Grounding) -> None:
        self._tool = tool
        self._grounding = grounding

    @property
    def schema(self) -> ToolSchema:
        return self._tool.schema

    @property
    def options(self) -> ToolOptions:
        return self._tool.options

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        return self._tool.invoke(args, ctx)

    def ungrounded(self, args: JsonObject, said: Said) -> str | None:
        return self._grounding(args, said)
