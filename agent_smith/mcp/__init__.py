"""The MCP client: configs, the blocking client, its events and the tool adapter."""

from __future__ import annotations

from .adapter import adapt_client_tools
from .catalog import PromptInfo, ResourceInfo, ServerInfo
from .client import McpClient
from .config import ServerConfig
from .events import LifecycleEvent, LifecycleKind, McpEvent, McpHook, Notification

__all__ = [
    "LifecycleEvent",
    "LifecycleKind",
    "McpClient",
    "McpEvent",
    "McpHook",
    "Notification",
    "PromptInfo",
    "ResourceInfo",
    "ServerConfig",
    "ServerInfo",
    "adapt_client_tools",
]
