"""Endpoint resolution: base URL -> chat-completions URL."""

from __future__ import annotations

import pytest

from agent_smith import ConfigError, LlmClient
from agent_smith.llm.endpoint import display_url, resolve_chat_url


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/chat/completions"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/chat/completions"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
        ("https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"),
        ("https://api.openai.com/v1//", "https://api.openai.com/v1/chat/completions"),
        ("http://proxy:4000/llm/openai", "http://proxy:4000/llm/openai/chat/completions"),
        ("http://h:1/v1/chat/completions", "http://h:1/v1/chat/completions"),
        ("http://h:1/v1/chat/completions/", "http://h:1/v1/chat/completions"),
        ("http://h/openai?api-version=2", "http://h/openai/chat/completions?api-version=2"),
        ("http://[::1]:8080", "http://[::1]:8080/v1/chat/completions"),
        ("  http://localhost:8080  ", "http://localhost:8080/v1/chat/completions"),
    ],
)
def test_endpoint_resolves_to_chat_completions(endpoint: str, url: str) -> None:
    assert resolve_chat_url(endpoint) == url
    assert LlmClient(endpoint).url == url


@pytest.mark.parametrize("endpoint", ["", "localhost:8080", "ftp://h/v1", "http://", "/v1"])
def test_endpoint_that_is_not_an_http_url_is_a_config_error(endpoint: str) -> None:
    with pytest.raises(ConfigError, match="http"):
        LlmClient(endpoint)


def test_display_url_drops_credentials_and_query() -> None:
    shown = display_url("https://user:secret@h:8443/v1/chat/completions?key=abc")
    assert shown == "https://h:8443/v1/chat/completions"


def test_client_exposes_its_configuration() -> None:
    client = LlmClient("http://h:1/v1", "qwen")
    assert (client.endpoint, client.model) == ("http://h:1/v1", "qwen")
