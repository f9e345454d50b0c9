"""Chat models by provider name: the one place that maps ``"anthropic"`` to its client.

The demo CLI's ``--provider`` and a batch ``AgentSpec.provider`` name a
provider; :func:`make_model` imports its module only then, so ``import
agent_smith`` pays for none of them. Every client takes the same options.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .request import SamplingParams

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .model import ChatModel

#: Provider name -> (module under agent_smith.llm, class name).
PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("client", "LlmClient"),
    "anthropic": ("anthropic", "AnthropicClient"),
    "responses": ("responses", "ResponsesClient"),
    "gemini": ("gemini", "GeminiClient"),
    "ollama": ("ollama", "OllamaClient"),
    "bedrock": ("bedrock", "BedrockClient"),  # the [bedrock] extra (botocore)
}


def check_provider(name: str) -> str:
    """``name`` if it names a provider; ConfigError listing the known ones otherwise."""
    if name not in PROVIDERS:
        raise ConfigError(f"unknown provider {name!r} (known: {', '.join(sorted(PROVIDERS))})")
    return name


def make_model(
    provider: str,
    endpoint: str,
    model: str = "",
    *,
    api_key: str | None = None,
    request_timeout: float = 60.0,
    default_sampling: SamplingParams = SamplingParams(),  # noqa: B008 (frozen value)
    runtime: Runtime | None = None,
) -> ChatModel:
    """A client of ``provider`` for ``endpoint`` and ``model``; ConfigError for an unknown one."""
    module_name, class_name = PROVIDERS[check_provider(provider)]
    module = importlib.import_module(f"{__package__}.{module_name}")
    factory = getattr(module, class_name)
    chat_model: ChatModel = factory(
        endpoint,
        model,
        api_key=api_key,
        request_timeout=request_timeout,
        default_sampling=default_sampling,
        runtime=runtime,
    )
    return chat_model
