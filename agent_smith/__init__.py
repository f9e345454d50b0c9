"""agent_smith: synchronous, threaded LLM agents for plain Python."""

from __future__ import annotations

import logging

from .agent import Agent, AgentRequest
from .cancellation import CancellationSource, CancellationToken
from .config import AgentConfig
from .errors import (
    AgentBusyError,
    AgentSmithError,
    AgentStopped,
    AgentTimeoutError,
    CancelledError,
    ConfigError,
    LlmApiError,
    McpError,
    McpProtocolError,
    ParseError,
    SkillError,
    ToolError,
    TransportError,
    TruncatedReplyError,
)
from .events import (
    AgentEvent,
    AgentHooks,
    AssistantTurn,
    FinalAnswer,
    SubAgentEvent,
    ToolCallRequested,
    ToolResultReady,
)
from .llm.client import LlmClient
from .llm.events import (
    Finished,
    ReasoningDelta,
    StreamEvent,
    TokenDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from .llm.request import LlmRequest, LlmResponse, SamplingParams
from .llm.retry import RetryPolicy
from .local import LocalLlamaServer
from .logs import TRACE, redact, redact_headers
from .mcp import (
    LifecycleEvent,
    LifecycleKind,
    McpClient,
    McpEvent,
    Notification,
    ServerConfig,
)
from .memory import FullMemory, Memory, RollingWindowMemory, SummaryMemory, strip_orphans
from .messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolMessage,
    UserMessage,
    message_from_openai,
    messages_from_json,
    messages_to_json,
)
from .models import ensure_default_model
from .runtime import Runtime, default_runtime
from .skills import (
    Skill,
    compose_system_prompt,
    load_skill,
    normalize_skill_name,
    skill_context_bytes,
)
from .subagents import SubAgentSpec, SubAgentTool
from .tools.base import Tool, ToolContext, ToolOptions, ToolResult, ToolSchema
from .tools.function import FunctionTool, make_tool, tool
from .tools.registry import ToolRegistry

__version__ = "0.1.0"

logging.getLogger("agent_smith").addHandler(logging.NullHandler())

__all__ = [
    "TRACE",
    "Agent",
    "AgentBusyError",
    "AgentConfig",
    "AgentEvent",
    "AgentHooks",
    "AgentRequest",
    "AgentSmithError",
    "AgentStopped",
    "AgentTimeoutError",
    "AssistantMessage",
    "AssistantTurn",
    "CancellationSource",
    "CancellationToken",
    "CancelledError",
    "ConfigError",
    "FinalAnswer",
    "Finished",
    "FullMemory",
    "FunctionTool",
    "LifecycleEvent",
    "LifecycleKind",
    "LlmApiError",
    "LlmClient",
    "LlmRequest",
    "LlmResponse",
    "LocalLlamaServer",
    "McpClient",
    "McpError",
    "McpEvent",
    "McpProtocolError",
    "Memory",
    "Message",
    "Notification",
    "ParseError",
    "ReasoningDelta",
    "RetryPolicy",
    "RollingWindowMemory",
    "Runtime",
    "SamplingParams",
    "ServerConfig",
    "Skill",
    "SkillError",
    "StreamEvent",
    "SubAgentEvent",
    "SubAgentSpec",
    "SubAgentTool",
    "SummaryMemory",
    "SystemMessage",
    "TokenDelta",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolCallCompleted",
    "ToolCallRequested",
    "ToolCallStarted",
    "ToolContext",
    "ToolError",
    "ToolMessage",
    "ToolOptions",
    "ToolRegistry",
    "ToolResult",
    "ToolResultReady",
    "ToolSchema",
    "TransportError",
    "TruncatedReplyError",
    "UserMessage",
    "__version__",
    "compose_system_prompt",
    "default_runtime",
    "ensure_default_model",
    "load_skill",
    "make_tool",
    "message_from_openai",
    "messages_from_json",
    "messages_to_json",
    "normalize_skill_name",
    "redact",
    "redact_headers",
    "skill_context_bytes",
    "strip_orphans",
    "tool",
]
