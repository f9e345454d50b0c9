"""The client's view of its server's context window: /props, and overflow answers made typed."""

from __future__ import annotations

import json

import pytest

from agent_smith import ContextOverflowError, LlmApiError, LlmClient, Runtime
from agent_smith.llm.api_error import error_from_body
from agent_smith.llm.request import LlmRequest
from agent_smith.llm.server_props import MAX_ASKS, props_url
from agent_smith.messages import UserMessage
from tests.support.llm_server import Drop, Raw, ScriptedLlmServer

#: What llama-server (xllamacpp 2026.10, n_ctx 256) answered a 2,030-token request.
LLAMA_OVERFLOW = {
    "error": {
        "code": 400,
        "message": "request (2030 tokens) exceeds the available context size (256 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 2030,
        "n_ctx": 256,
    }
}
OPENAI_OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your "
        "messages resulted in 130512 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
VLLM_OVERFLOW = {
    "object": "error",
    "message": "This model's maximum context length is 4096 tokens. However, you requested "
    "5000 tokens (4000 in the messages, 1000 in the completion).",
    "type": "BadRequestError",
    "code": 400,
}

REQUEST = LlmRequest((UserMessage("hi"),))


@pytest.mark.parametrize(
    ("body", "prompt", "window"),
    [(LLAMA_OVERFLOW, 2030, 256), (OPENAI_OVERFLOW, None, 128000), (VLLM_OVERFLOW, None, 4096)],
    ids=["llama-server", "openai", "vllm"],
)
def test_an_overflow_answer_is_a_context_overflow_error(
    body: dict[str, object], prompt: int | None, window: int
) -> None:
    error = error_from_body(400, json.dumps(body), endpoint="http://h/v1/chat/completions")
    assert isinstance(error, ContextOverflowError)
    assert isinstance(error, LlmApiError) and error.http_status == 400
    assert (error.prompt_tokens, error.context_window) == (prompt, window)


def test_other_bad_requests_stay_plain_api_errors() -> None:
    body = {"error": {"code": 400, "message": "tools must be an array", "type": "bad_request"}}
    error = error_from_body(400, json.dumps(body), endpoint="http://h")
    assert type(error) is LlmApiError


@pytest.mark.parametrize(
    ("chat", "props"),
    [
        ("http://h:8080/v1/chat/completions", "http://h:8080/props"),
        ("http://h:8080/llama/v1/chat/completions", "http://h:8080/llama/props"),
        ("https://api.example.com/chat/completions?x=1", "https://api.example.com/props"),
    ],
)
def test_props_live_at_the_server_root(chat: str, props: str) -> None:
    assert props_url(chat) == props


def test_the_window_is_asked_of_the_server_once(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.props = {"default_generation_settings": {"n_ctx": 2048}, "total_slots": 4}
    client = LlmClient(llm_server.url + "/v1", runtime=runtime)
    assert client.context_window(ask=False) is None  # nothing known, nothing asked
    assert llm_server.props_asked == 0
    assert client.context_window() == 2048
    assert client.context_window() == 2048
    assert llm_server.props_asked == 1


def test_a_props_request_without_an_answer_is_asked_again_later(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.props = Drop()  # the connection closes before any answer (a dropped keep-alive)
    client = LlmClient(llm_server.url, runtime=runtime)
    assert client.context_window() is None
    llm_server.props = {"default_generation_settings": {"n_ctx": 4096}}
    assert client.context_window() == 4096  # not remembered as "no window": asked again
    assert client.context_window() == 4096
    assert llm_server.props_asked == 2
    assert client.capabilities.context_size == 4096


def test_a_server_that_never_answers_props_is_asked_a_bounded_number_of_times(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.props = Drop()
    client = LlmClient(llm_server.url, runtime=runtime)
    for _ in range(MAX_ASKS + 2):
        assert client.context_window() is None
    assert llm_server.props_asked == MAX_ASKS


def test_a_server_without_props_has_no_known_window(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    client = LlmClient(llm_server.url, runtime=runtime)
    assert client.context_window() is None
    assert client.context_window() is None
    assert llm_server.props_asked == 1  # a 404 is remembered too


def test_an_overflow_answer_teaches_the_client_the_window(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Raw(400, json.dumps(LLAMA_OVERFLOW)))
    client = LlmClient(llm_server.url, runtime=runtime, max_retries=3)
    with pytest.raises(ContextOverflowError) as raised:
        list(client.stream(REQUEST))
    assert "exceeds the available context size" in str(raised.value)
    assert len(llm_server.requests) == 1  # a 400 is never retried by the client
    assert client.context_window(ask=False) == 256
    assert client.capabilities.context_size == 256
    assert llm_server.props_asked == 0
