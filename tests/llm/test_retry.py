"""Retries (seed §6.3): what is retried, how long we wait, what fails at once."""

from __future__ import annotations

import email.utils
import json

import pytest
import requests
import responses

from agent_smith import (
    AgentTimeoutError,
    LlmApiError,
    LlmClient,
    LlmRequest,
    RetryPolicy,
    TransportError,
    UserMessage,
)
from tests.support.llm_server import Chunks, Drop, ScriptedLlmServer, Text

URL = "http://llm.test:8080/v1/chat/completions"
OK = {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}
REQUEST = LlmRequest((UserMessage("hi"),))
NOW = 1_700_000_000.0


class Sleeps(list[float]):
    """An injected sleep that records the delays instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(sleeps: Sleeps, *, max_retries: int = 3, jitter: float = 0.0) -> LlmClient:
    policy = RetryPolicy(
        max_retries=max_retries, sleep=sleeps, clock=lambda: NOW, random=lambda: jitter
    )
    return LlmClient("http://llm.test:8080", retry_policy=policy)


# -- the policy itself ------------------------------------------------------


def test_backoff_doubles_from_half_a_second_and_is_capped() -> None:
    policy = RetryPolicy(random=lambda: 0.0)
    assert [policy.backoff(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_jitter_adds_up_to_a_quarter_second() -> None:
    assert RetryPolicy(random=lambda: 0.999).backoff(1) == pytest.approx(0.5 + 0.24975)
    assert RetryPolicy(random=lambda: 0.999).backoff(10) == 8.0


def test_retry_after_in_seconds_and_as_http_date() -> None:
    policy = RetryPolicy(clock=lambda: NOW)
    date = email.utils.formatdate(NOW + 3, usegmt=True)
    assert policy.retry_after("2") == 2.0
    assert policy.retry_after(date) == pytest.approx(3.0)
    assert policy.retry_after("120") == 8.0
    assert policy.retry_after(email.utils.formatdate(NOW - 50, usegmt=True)) == 0.0
    assert policy.retry_after("soon") is None
    assert policy.retry_after(None) is None


def test_negative_max_retries_is_refused() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)


# -- the client retrying ----------------------------------------------------


def test_connect_errors_are_retried_with_backoff() -> None:
    sleeps = Sleeps()
    with responses.RequestsMock() as mock:
        mock.post(URL, body=requests.ConnectionError("refused"))
        mock.post(URL, body=requests.ConnectionError("refused"))
        mock.post(URL, json=OK)
        assert client(sleeps).complete(REQUEST).message.content == "ok"
    assert sleeps == [0.5, 1.0]


def test_read_timeouts_are_retried_then_raise_agent_timeout() -> None:
    sleeps = Sleeps()
    with responses.RequestsMock() as mock:
        for _ in range(4):
            mock.post(URL, body=requests.ReadTimeout("slow"))
        with pytest.raises(AgentTimeoutError, match="timed out") as info:
            client(sleeps).complete(REQUEST)
        assert len(mock.calls) == 4
    assert sleeps == [0.5, 1.0, 2.0]
    assert isinstance(info.value, TimeoutError)


def test_server_errors_are_retried_then_raise_llm_api_error() -> None:
    sleeps = Sleeps()
    with responses.RequestsMock() as mock:
        for _ in range(3):
            mock.post(URL, status=503, json={"error": {"message": "Loading model", "code": 503}})
        with pytest.raises(LlmApiError, match=r"HTTP 503.*Loading model") as info:
            client(sleeps, max_retries=2).complete(REQUEST)
        assert len(mock.calls) == 3
    assert info.value.http_status == 503
    assert sleeps == [0.5, 1.0]


def test_429_waits_for_retry_after_seconds() -> None:
    sleeps = Sleeps()
    with responses.RequestsMock() as mock:
        mock.post(URL, status=429, headers={"Retry-After": "3"}, json={"error": "slow down"})
        mock.post(URL, json=OK)
        client(sleeps).complete(REQUEST)
    assert sleeps == [3.0]


def test_429_waits_for_retry_after_http_date_capped() -> None:
    sleeps = Sleeps()
    date = email.utils.formatdate(NOW + 4, usegmt=True)
    far = email.utils.formatdate(NOW + 3600, usegmt=True)
    with responses.RequestsMock() as mock:
        mock.post(URL, status=429, headers={"Retry-After": date})
        mock.post(URL, status=429, headers={"Retry-After": far})
        mock.post(URL, json=OK)
        client(sleeps).complete(REQUEST)
    assert sleeps == [pytest.approx(4.0), 8.0]


def test_429_without_retry_after_uses_backoff() -> None:
    sleeps = Sleeps()
    with responses.RequestsMock() as mock:
        mock.post(URL, status=429)
        mock.post(URL, json=OK)
        client(sleeps, jitter=1.0).complete(REQUEST)
    assert sleeps == [0.75]


def test_zero_retries_fails_on_first_error() -> None:
    sleeps = Sleeps()
    with responses.RequestsMock() as mock:
        mock.post(URL, body=requests.ConnectionError("refused"))
        with pytest.raises(TransportError, match="cannot reach LLM server"):
            client(sleeps, max_retries=0).complete(REQUEST)
    assert sleeps == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_4xx_fail_at_once(status: int) -> None:
    sleeps = Sleeps()
    with responses.RequestsMock() as mock:
        mock.post(URL, status=status, json={"error": {"message": "nope", "type": "bad"}})
        with pytest.raises(LlmApiError) as info:
            client(sleeps).complete(REQUEST)
        assert len(mock.calls) == 1
    assert sleeps == []
    assert info.value.http_status == status
    assert f"HTTP {status} (bad): nope" in str(info.value)


def test_an_error_object_in_a_200_reply_fails_at_once() -> None:
    sleeps = Sleeps()
    with responses.RequestsMock() as mock:
        mock.post(URL, status=200, json={"error": {"message": "no slot", "type": "busy"}})
        with pytest.raises(LlmApiError) as info:
            client(sleeps).complete(REQUEST)
        assert len(mock.calls) == 1
    assert sleeps == []
    assert info.value.http_status == 200
    assert str(info.value).endswith("answered HTTP 200 (busy): no slot")
    assert json.loads(info.value.body_excerpt)["error"]["message"] == "no slot"


def test_llama_context_overflow_reads_well() -> None:
    body = {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 5000,
            "n_ctx": 4096,
        }
    }
    with responses.RequestsMock() as mock:
        mock.post(URL, status=400, json=body)
        with pytest.raises(LlmApiError) as info:
            client(Sleeps()).complete(REQUEST)
    assert str(info.value) == (
        "LLM server http://llm.test:8080/v1/chat/completions answered HTTP 400"
        " (exceed_context_size_error): the request exceeds the available context size,"
        " try increasing it (prompt: 5000 tokens, context: 4096 tokens)"
    )
    assert json.loads(info.value.body_excerpt)["error"]["n_ctx"] == 4096


def test_error_excerpt_is_bounded_redacted_and_one_line() -> None:
    body = {"error": {"message": "bad\nkey sk-secret-1"}, "api_key": "sk-x", "pad": "z" * 5000}
    with responses.RequestsMock() as mock:
        mock.post(URL, status=401, json=body)
        policy = RetryPolicy(sleep=Sleeps())
        llm = LlmClient("http://llm.test:8080", api_key="sk-secret-1", retry_policy=policy)
        with pytest.raises(LlmApiError) as info:
            llm.complete(REQUEST)
    error = info.value
    assert "\n" not in str(error)
    assert "sk-secret-1" not in str(error)
    assert "sk-secret-1" not in error.body_excerpt
    assert "sk-x" not in error.body_excerpt
    assert len(error.body_excerpt) <= 501


def test_non_json_error_body_is_quoted() -> None:
    with responses.RequestsMock() as mock:
        mock.post(URL, status=404, body="<html>Not Found</html>")
        with pytest.raises(LlmApiError, match="HTTP 404: <html>Not Found</html>"):
            client(Sleeps()).complete(REQUEST)


# -- against the real loopback server -----------------------------------------


def test_dropped_keep_alive_connection_is_retried(llm_server: ScriptedLlmServer) -> None:
    sleeps = Sleeps()
    llm_server.script(Drop(), Text("fine"))
    llm = LlmClient(llm_server.url, retry_policy=RetryPolicy(sleep=sleeps))
    assert llm.complete(REQUEST).message.content == "fine"
    assert len(llm_server.requests) == 2
    assert len(sleeps) == 1


def test_no_retry_once_a_streamed_byte_arrived(llm_server: ScriptedLlmServer) -> None:
    sleeps = Sleeps()
    first = b'data: {"choices": [{"index": 0, "delta": {"content": "a"}}]}\n\n'
    llm_server.script(Chunks(first, Drop()), Text("must not be fetched"))
    llm = LlmClient(llm_server.url, retry_policy=RetryPolicy(sleep=sleeps))
    seen = []
    with pytest.raises(TransportError):
        for event in llm.stream(REQUEST):
            seen.append(event)
    assert len(llm_server.requests) == 1
    assert sleeps == []
    assert len(seen) == 1
