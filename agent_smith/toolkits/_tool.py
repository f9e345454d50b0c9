"""Toolkit methods as tools: a schema from the method, extra arguments ignored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tools.base import ApprovalMarker, Tool, ToolContext, ToolSchema
from ..tools.function import make_tool
from ..tools.schema import function_schema


def toolkit_tool(
    fn: Callable[..., Any],
    *,
    name: str,
    read_only: bool,
    requires_approval: ApprovalMarker = False,
) -> Tool:
    """``fn`` (a toolkit's bound method) as a tool named ``name``.

    The schema comes from the method's hints and docstring, but allows
    arguments it does not name, which the call then drops: small models
    often add a stray key to an otherwise right call, and refusing it failed
    calls that would have worked (measured on the demo's local model).
    Whatever ``fn`` raises becomes an error result the model reads. A
    parameter of ``fn`` annotated ``ToolContext`` receives the call's context.
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

    return make_tool(
        call,
        schema=ToolSchema(name, signature.description, parameters),
        read_only=read_only,
        requires_approval=requires_approval,
    )
