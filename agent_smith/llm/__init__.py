"""The LLM client: chat completions with and without streaming."""

from __future__ import annotations

from .client import LlmClient
from .events import (
    Finished,
    ReasoningDelta,
    StreamEvent,
    TokenDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from .request import LlmRequest, LlmResponse, SamplingParams
from .retry import RetryPolicy

__all__ = [
    "Finished",
    "LlmClient",
    "LlmRequest",
    "LlmResponse",
    "ReasoningDelta",
    "RetryPolicy",
    "SamplingParams",
    "StreamEvent",
    "TokenDelta",
    "ToolCallCompleted",
    "ToolCallStarted",
]
