"""Exact prompt token counts from llama-server's /apply-template and /tokenize, else None."""

from __future__ import annotations

from agent_smith import LlmClient, LlmRequest, Runtime, UserMessage
from tests.support.llm_server import ScriptedLlmServer


def test_a_server_that_counts_gives_the_exact_count(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.counts_tokens = True
    client = LlmClient(llm_server.url, runtime=runtime)
    request = LlmRequest((UserMessage("hello"),))
    assert client.capabilities.token_counting is False  # not known before the server counted
    # the scripted server's template is the messages' JSON, 4 characters a token
    assert client.count_tokens(request) == len('[{"role": "user", "content": "hello"}]') // 4
    assert llm_server.requests == []  # no chat request was made
    assert client.capabilities.token_counting is True


def test_a_server_that_cannot_count_is_asked_once(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    client = LlmClient(llm_server.url, runtime=runtime)
    request = LlmRequest((UserMessage("hello"),))
    assert client.count_tokens(request) is None
    llm_server.counts_tokens = True  # asked no more: the answer stays None
    assert client.count_tokens(request) is None
    assert llm_server.tokens_counted == 0
    assert client.capabilities.token_counting is False
