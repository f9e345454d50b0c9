"""What every HTTP chat model shares, once per dialect: bad bytes become typed errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_smith import (
    ChatModel,
    GeminiClient,
    LlmApiError,
    LlmRequest,
    OllamaClient,
    ParseError,
    ResponsesClient,
    Runtime,
    SystemMessage,
    UserMessage,
)
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer
from tests.support.provider_wire import WEATHER

REQUEST = LlmRequest((SystemMessage("Be brief."), UserMessage("Weather?")), (WEATHER,))
Factory = Callable[[str, Runtime], ChatModel]


@pytest.mark.parametrize(
    ("make", "bad_frame", "page", "bad_json", "bad_status"),
    [
        pytest.param(
            lambda url, runtime: GeminiClient(url, "gemini-wire", runtime=runtime, max_retries=0),
            Chunks("data: {nope\r\n\r\n"),
            Raw(500, "<html>Internal error</html>"),
            r"from Gemini API .* is not valid JSON",
            r"Gemini API .* answered HTTP 500: <html>",
            id="gemini",
        ),
        pytest.param(
            lambda url, runtime: OllamaClient(url, "qwen3", runtime=runtime, max_retries=0),
            Chunks("{not json}\n"),
            Raw(502, "<html>Bad Gateway</html>"),
            r"line 1 from Ollama .* is not valid JSON",
            r"Ollama .* answered HTTP 502: <html>",
            id="ollama",
        ),
        pytest.param(
            lambda url, runtime: ResponsesClient(url, runtime=runtime, max_retries=0),
            Chunks("event: response.created\ndata: {oops\n\n"),
            Raw(503, "<html>Service Unavailable</html>", {"Content-Type": "text/html"}),
            r"OpenAI Responses API .* is not valid JSON",
            r"OpenAI Responses API .* answered HTTP 503: <html>",
            id="responses",
        ),
    ],
)
def test_malformed_json_and_an_html_page_are_typed_errors(
    make: Factory,
    bad_frame: Chunks,
    page: Raw,
    bad_json: str,
    bad_status: str,
    llm_server: ScriptedLlmServer,
    runtime: Runtime,
) -> None:
    model = make(llm_server.url, runtime)
    llm_server.script(bad_frame, page)
    with pytest.raises(ParseError, match=bad_json):
        list(model.stream(REQUEST))
    with pytest.raises(LlmApiError, match=bad_status):
        model.complete(REQUEST)
