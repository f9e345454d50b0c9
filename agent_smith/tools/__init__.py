"""Tools: the interface, tools from functions, the registry and parallel dispatch."""

from .base import Said, Tool, ToolContext, ToolOptions, ToolResult, ToolSchema
from .function import FunctionTool, make_tool, tool
from .registry import ToolRegistry

__all__ = [
    "FunctionTool",
    "Said",
    "Tool",
    "ToolContext",
    "ToolOptions",
    "ToolRegistry",
    "ToolResult",
    "ToolSchema",
    "make_tool",
    "tool",
]
