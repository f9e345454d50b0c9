"""``--provider``: which API the demo speaks, and where its server and key come from.

Each provider has its usual environment: the server is ``--endpoint``, else
the provider's own variable, else its public API; the key is ``--api-key``,
else the first of the provider's key variables that is set. ``openai`` is the
OpenAI-compatible chat-completions API (llama.cpp, vLLM, OpenAI, ...), the
demo's default.
"""

from __future__ import annotations

import argparse
import os

#: Provider -> (endpoint variables, public default endpoint, key variables), in order.
PROVIDER_ENV: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    "openai": (("LLAMA_SERVER_URL",), "http://127.0.0.1:8080", ("LLAMA_API_KEY", "OPENAI_API_KEY")),
    "anthropic": (("ANTHROPIC_BASE_URL",), "https://api.anthropic.com", ("ANTHROPIC_API_KEY",)),
    "gemini": (
        ("GEMINI_BASE_URL",),
        "https://generativelanguage.googleapis.com",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ),
    "ollama": (("OLLAMA_HOST",), "http://127.0.0.1:11434", ()),
    "responses": (("OPENAI_BASE_URL",), "https://api.openai.com/v1", ("OPENAI_API_KEY",)),
    # Bedrock signs with the AWS credential chain (or takes a Bedrock API key).
    "bedrock": (("BEDROCK_ENDPOINT_URL",), "", ("AWS_BEARER_TOKEN_BEDROCK",)),
}


def provider_endpoint(provider: str) -> str:
    """The server of ``provider`` from its environment, else its default (Bedrock's:
    the regional endpoint of ``$AWS_REGION``/``$AWS_DEFAULT_REGION``)."""
    variables, default, _ = PROVIDER_ENV[provider]
    for name in variables:
        value = os.environ.get(name)
        if value:
            if provider == "ollama":
                from ..llm.ollama import ollama_host

                return ollama_host()  # OLLAMA_HOST may be host:port only
            return value
    if provider == "bedrock":
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        return f"https://bedrock-runtime.{region}.amazonaws.com"
    return default


def provider_api_key(provider: str) -> str | None:
    """The first key variable of ``provider`` that is set."""
    for name in PROVIDER_ENV[provider][2]:
        value = os.environ.get(name)
        if value:
            return value
    return None


def add_provider_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--provider`` (default ``openai``) to ``parser``."""
    parser.add_argument(
        "--provider",
        choices=list(PROVIDER_ENV),
        default="openai",
        help=(
            "the API to speak (default: openai, the OpenAI-compatible chat completions); "
            "keys from the usual variables: ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENAI_API_KEY"
        ),
    )


def fill_provider_defaults(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Fill ``args.endpoint`` and ``args.api_key`` from ``args.provider``'s environment.

    A local model (``--local``/``--serve-model``) is served for ``openai`` only.
    """
    if args.provider != "openai" and (args.serve_model or args.local):
        parser.error("--serve-model and --local serve the openai provider only")
    if not (args.serve_model or args.local):
        args.endpoint = args.endpoint or provider_endpoint(args.provider)
    if args.api_key is None:
        args.api_key = provider_api_key(args.provider)
