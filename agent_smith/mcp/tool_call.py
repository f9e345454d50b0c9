"""A ``tools/call`` result as a ToolResult, checked against the tool's output schema.

Text content is joined (other content described, resource links with their
URI so the model can read them); images, audio and binary resources also
travel as the result's parts, which reach the model natively. A tool that
declares an ``outputSchema`` must return ``structuredContent`` that fits it
(unless the result is an error): anything else is the server's mistake,
reported as McpError rather than handed to the model as if it were data.
"""

from __future__ import annotations

from typing import Any

from ..errors import McpError
from ..tools.base import ToolResult
from ..tools.validation import validation_errors
from .content import content_parts, content_text


def tool_result(
    result: dict[str, Any], *, tool: str, output_schema: dict[str, Any] | None, server: str
) -> ToolResult:
    """``result`` as a ToolResult; McpError when its structured content breaks ``output_schema``."""
    is_error = result.get("isError") is True
    structured = result.get("structuredContent")
    if output_schema is not None and not is_error:
        if structured is None:
            raise McpError(
                f"MCP tool {tool!r} of {server!r} declares an outputSchema but returned "
                "no structuredContent",
                server=server,
            )
        problems = validation_errors(output_schema, structured)
        if problems:
            raise McpError(
                f"MCP tool {tool!r} of {server!r} returned structuredContent that does not "
                f"fit its outputSchema: {'; '.join(problems)}",
                server=server,
            )
    blocks = result.get("content")
    return ToolResult(
        content=content_text(blocks),
        is_error=is_error,
        structured=structured if isinstance(structured, dict) else None,
        parts=content_parts(blocks, server=server),
    )
