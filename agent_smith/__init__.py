"""agent_smith: synchronous, threaded LLM agents for plain Python.

Public names are imported on first use (PEP 562), so ``import agent_smith``
stays cheap for scripts and CLIs that only need part of the library.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from .errors import (
    A2AError,
    A2AProtocolError,
    AgentBusyError,
    AgentSmithError,
    AgentStopped,
    AgentTimeoutError,
    ApprovalRequired,
    CancelledError,
    ConfigError,
    ContextOverflowError,
    DurableStateError,
    EvalError,
    GuardrailTripped,
    LlmApiError,
    McpAuthError,
    McpError,
    McpProtocolError,
    OutputValidationError,
    ParseError,
    PartError,
    PausedTurnMismatch,
    ReplayMismatchError,
    ResultsError,
    SessionError,
    SkillError,
    StreamLostError,
    ToolError,
    TransportError,
    TruncatedReplyError,
    UsageLimitExceeded,
)
from .logs import (
    TRACE,
    redact,
    redact_headers,
)

if TYPE_CHECKING:
    from .a2a.client import A2AClient
    from .a2a.remote import A2AAgent
    from .agent.agent import Agent
    from .agent.approvals import ApprovalRequested, Approver
    from .agent.compaction import Compaction
    from .agent.config import AgentConfig
    from .agent.events import (
        AgentEvent,
        AgentHooks,
        AssistantTurn,
        ContextCompacted,
        FinalAnswer,
        GuardrailChecked,
        OutputRetry,
        SubAgentEvent,
        ToolCallRequested,
        ToolResultReady,
    )
    from .agent.guardrails import Guardrails, GuardrailVerdict
    from .agent.output import OutputMode
    from .agent.output_type import parse_output
    from .agent.request import AgentRequest
    from .agent.subagents import SubAgentSpec, SubAgentTool
    from .agent.turn_card import CardCall, TurnCard
    from .agent.usage_limits import ModelPrice, UsageLimits
    from .base.cancellation import CancellationSource, CancellationToken
    from .base.history_json import messages_from_json, messages_to_json
    from .base.parts import AudioPart, DocumentPart, ImagePart, TextPart
    from .base.paused_turn import ApprovalRequest, Decision, PausedTurn
    from .batch import (
        AgentSpec,
        BatchInput,
        BatchResult,
        BatchRun,
        ItemError,
        read_inputs,
        read_results,
        run_batch,
    )
    from .cli.models import ensure_default_model
    from .durable.agent import DurableAgent
    from .durable.engine import DurableEngine
    from .durable.operations import DurableTurns, TurnInfo
    from .llm.anthropic import AnthropicClient
    from .llm.bedrock import BedrockClient
    from .llm.client import LlmClient
    from .llm.embeddings import (
        Embedder,
        OllamaEmbedder,
        OpenAIEmbedder,
    )
    from .llm.events import (
        Finished,
        ReasoningDelta,
        ServerToolUsed,
        StreamEvent,
        TokenDelta,
        ToolCallCompleted,
        ToolCallStarted,
    )
    from .llm.fallback import FallbackModel
    from .llm.gemini import GeminiClient
    from .llm.local_server import LocalLlamaServer
    from .llm.model import (
        ChatModel,
        ModelCapabilities,
    )
    from .llm.ollama import OllamaClient
    from .llm.part_support import PartSupport
    from .llm.providers import make_model
    from .llm.request import (
        LlmRequest,
        LlmResponse,
        SamplingParams,
    )
    from .llm.responses import ResponsesClient
    from .llm.retry import RetryPolicy
    from .llm.testing import TestModel
    from .mcp import (
        Elicitation,
        LifecycleEvent,
        LifecycleKind,
        McpClient,
        McpEvent,
        Notification,
        SamplingHandler,
        ServerConfig,
        ToolInfo,
    )
    from .mcp.auth import (
        AuthorizationHandler,
        ClientInfo,
        EnterpriseIdp,
        FileTokenStorage,
        InMemoryTokenStorage,
        LoopbackAuthorization,
        OAuthConfig,
        OAuthTokens,
        TokenStorage,
    )
    from .memory import (
        FullMemory,
        Memory,
        RollingWindowMemory,
        SummaryMemory,
        strip_orphans,
    )
    from .messages import (
        AssistantMessage,
        Message,
        ProviderData,
        SystemMessage,
        TokenUsage,
        ToolCall,
        ToolMessage,
        UserMessage,
        message_from_openai,
    )
    from .metrics import MetricsCollector
    from .runtime import Runtime, default_runtime
    from .sessions.event_log import EventLog, SqliteEventLog
    from .sessions.postgres import PostgresSession
    from .sessions.postgres_event_log import PostgresEventLog
    from .sessions.session import Session, SessionState
    from .sessions.sqlite import SqliteSession
    from .sessions.store import SessionStore
    from .skills import (
        Skill,
        compose_system_prompt,
        load_skill,
        normalize_skill_name,
        skill_context_bytes,
    )
    from .toolkits import (
        FilesPolicy,
        FilesToolkit,
        SearchPolicy,
        SearchToolkit,
        ShellPolicy,
        ShellToolkit,
        TodoPolicy,
        TodoToolkit,
        WebPolicy,
        WebToolkit,
        WorkspaceChanges,
    )
    from .tools.base import (
        Tool,
        ToolContext,
        ToolOptions,
        ToolResult,
        ToolSchema,
    )
    from .tools.function import (
        FunctionTool,
        make_tool,
        tool,
    )
    from .tools.registry import ToolRegistry
    from .web.a2a import A2AOptions
    from .web.app import WebApp
    from .web.serve import WebServer

from ._lazy_names import LAZY
from ._version import __version__
from .observer import set_observer
from .tracing.observer import OTEL_OBSERVER

# The LLM clients, dispatchers and MCP clients report to this observer, which
# makes spans while the application traces (agent_smith.tracing).
set_observer(OTEL_OBSERVER)

logging.getLogger("agent_smith").addHandler(logging.NullHandler())


def __getattr__(name: str) -> Any:
    module = LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_smith' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "TRACE",
    "A2AAgent",
    "A2AClient",
    "A2AError",
    "A2AOptions",
    "A2AProtocolError",
    "Agent",
    "AgentBusyError",
    "AgentConfig",
    "AgentEvent",
    "AgentHooks",
    "AgentRequest",
    "AgentSmithError",
    "AgentSpec",
    "AgentStopped",
    "AgentTimeoutError",
    "AnthropicClient",
    "ApprovalRequest",
    "ApprovalRequested",
    "ApprovalRequired",
    "Approver",
    "AssistantMessage",
    "AssistantTurn",
    "AudioPart",
    "AuthorizationHandler",
    "BatchInput",
    "BatchResult",
    "BatchRun",
    "BedrockClient",
    "CancellationSource",
    "CancellationToken",
    "CancelledError",
    "CardCall",
    "ChatModel",
    "ClientInfo",
    "Compaction",
    "ConfigError",
    "ContextCompacted",
    "ContextOverflowError",
    "Decision",
    "DocumentPart",
    "DurableAgent",
    "DurableEngine",
    "DurableStateError",
    "DurableTurns",
    "Elicitation",
    "Embedder",
    "EnterpriseIdp",
    "EvalError",
    "EventLog",
    "FallbackModel",
    "FileTokenStorage",
    "FilesPolicy",
    "FilesToolkit",
    "FinalAnswer",
    "Finished",
    "FullMemory",
    "FunctionTool",
    "GeminiClient",
    "GuardrailChecked",
    "GuardrailTripped",
    "GuardrailVerdict",
    "Guardrails",
    "ImagePart",
    "InMemoryTokenStorage",
    "ItemError",
    "LifecycleEvent",
    "LifecycleKind",
    "LlmApiError",
    "LlmClient",
    "LlmRequest",
    "LlmResponse",
    "LocalLlamaServer",
    "LoopbackAuthorization",
    "McpAuthError",
    "McpClient",
    "McpError",
    "McpEvent",
    "McpProtocolError",
    "Memory",
    "Message",
    "MetricsCollector",
    "ModelCapabilities",
    "ModelPrice",
    "Notification",
    "OAuthConfig",
    "OAuthTokens",
    "OllamaClient",
    "OllamaEmbedder",
    "OpenAIEmbedder",
    "OutputMode",
    "OutputRetry",
    "OutputValidationError",
    "ParseError",
    "PartError",
    "PartSupport",
    "PausedTurn",
    "PausedTurnMismatch",
    "PostgresEventLog",
    "PostgresSession",
    "ProviderData",
    "ReasoningDelta",
    "ReplayMismatchError",
    "ResponsesClient",
    "ResultsError",
    "RetryPolicy",
    "RollingWindowMemory",
    "Runtime",
    "SamplingHandler",
    "SamplingParams",
    "SearchPolicy",
    "SearchToolkit",
    "ServerConfig",
    "ServerToolUsed",
    "Session",
    "SessionError",
    "SessionState",
    "SessionStore",
    "ShellPolicy",
    "ShellToolkit",
    "Skill",
    "SkillError",
    "SqliteEventLog",
    "SqliteSession",
    "StreamEvent",
    "StreamLostError",
    "SubAgentEvent",
    "SubAgentSpec",
    "SubAgentTool",
    "SummaryMemory",
    "SystemMessage",
    "TestModel",
    "TextPart",
    "TodoPolicy",
    "TodoToolkit",
    "TokenDelta",
    "TokenStorage",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolCallCompleted",
    "ToolCallRequested",
    "ToolCallStarted",
    "ToolContext",
    "ToolError",
    "ToolInfo",
    "ToolMessage",
    "ToolOptions",
    "ToolRegistry",
    "ToolResult",
    "ToolResultReady",
    "ToolSchema",
    "TransportError",
    "TruncatedReplyError",
    "TurnCard",
    "TurnInfo",
    "UsageLimitExceeded",
    "UsageLimits",
    "UserMessage",
    "WebApp",
    "WebPolicy",
    "WebServer",
    "WebToolkit",
    "WorkspaceChanges",
    "__version__",
    "compose_system_prompt",
    "default_runtime",
    "ensure_default_model",
    "load_skill",
    "make_model",
    "make_tool",
    "message_from_openai",
    "messages_from_json",
    "messages_to_json",
    "normalize_skill_name",
    "parse_output",
    "read_inputs",
    "read_results",
    "redact",
    "redact_headers",
    "run_batch",
    "skill_context_bytes",
    "strip_orphans",
    "tool",
]
