"""The MCP client: configs, the blocking client, its events and the tool adapter."""

from __future__ import annotations

from .adapter import adapt_client_tools
from .client import McpClient, PromptInfo, ResourceInfo, ServerInfo
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
