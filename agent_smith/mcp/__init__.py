"""The MCP client: configs, the blocking client, its events and the tool adapter."""

from __future__ import annotations

from .adapter import adapt_client_tools
from .catalog import PromptInfo, ResourceInfo, ServerInfo, ToolInfo
from .client import McpClient
from .config import ServerConfig
from .elicitation import Elicitation
from .events import LifecycleEvent, LifecycleKind, McpEvent, McpHook, Notification
from .sampling import SamplingHandler

__all__ = [
    "Elicitation",
    "LifecycleEvent",
    "LifecycleKind",
    "McpClient",
    "McpEvent",
    "McpHook",
    "Notification",
    "PromptInfo",
    "ResourceInfo",
    "SamplingHandler",
    "ServerConfig",
    "ServerInfo",
    "ToolInfo",
    "adapt_client_tools",
]
