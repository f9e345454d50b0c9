"""The LLM client: chat completions with and without streaming.

``LlmClient`` is imported on first use (PEP 562): the data types here are
imported by modules that never send a request, and the client brings in the
whole HTTP stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .events import (
    Finished,
    ReasoningDelta,
    ServerToolUsed,
    StreamEvent,
    TokenDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from .request import LlmRequest, LlmResponse, SamplingParams
from .retry import RetryPolicy

if TYPE_CHECKING:
    from .client import LlmClient


def __getattr__(name: str) -> Any:
    if name != "LlmClient":
        raise AttributeError(f"module 'agent_smith.llm' has no attribute {name!r}")
    from .client import LlmClient

    return LlmClient


__all__ = [
    "Finished",
    "LlmClient",
    "LlmRequest",
    "LlmResponse",
    "ReasoningDelta",
    "RetryPolicy",
    "SamplingParams",
    "ServerToolUsed",
    "StreamEvent",
    "TokenDelta",
    "ToolCallCompleted",
    "ToolCallStarted",
]
