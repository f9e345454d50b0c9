"""Embedders against wire fakes: batching, input order by index, Ollama's shape, typed errors."""

from __future__ import annotations

import json

import pytest

from agent_smith import ConfigError, LlmApiError, ParseError, Runtime
from agent_smith.llm.embeddings import Embedder, OllamaEmbedder, OpenAIEmbedder
from agent_smith.llm.ollama import ollama_host
from tests.support.llm_server import Raw, ScriptedLlmServer


def openai_reply(vectors: dict[int, list[float]]) -> Raw:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in vectors.items()]
    return Raw(200, json.dumps({"object": "list", "data": data, "usage": {"prompt_tokens": 3}}))


def test_vectors_come_back_in_input_order_whatever_order_the_server_sent(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    embedder = OpenAIEmbedder(llm_server.url, "emb", batch_size=2, runtime=runtime)
    assert isinstance(embedder, Embedder)
    llm_server.script(openai_reply({1: [1.0, 1.0], 0: [0.0, 0.0]}), openai_reply({0: [2.0, 2.0]}))
    assert embedder.embed(["a", "b", "c"]) == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    assert [r["input"] for r in llm_server.requests] == [["a", "b"], ["c"]]
    assert llm_server.requests[0]["model"] == "emb"
    assert embedder.dimensions == 2
    assert embedder.embed([]) == []


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (openai_reply({0: [1.0]}), "1 vectors for 2 texts"),
        (openai_reply({0: [1.0], 5: [2.0]}), "bad or repeated index 5"),
        (
            Raw(200, json.dumps({"data": [{"index": 0, "embedding": "x"}, {"index": 1}]})),
            "array of numbers",
        ),
        (Raw(200, "<html>oops</html>"), "not valid JSON"),
    ],
)
def test_a_wrong_reply_is_a_parse_error(
    reply: Raw, problem: str, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(reply)
    with pytest.raises(ParseError, match=problem):
        OpenAIEmbedder(llm_server.url, runtime=runtime).embed(["a", "b"])


def test_an_error_status_is_an_api_error_naming_the_server(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Raw(501, json.dumps({"error": {"message": "Start it with --embeddings"}})))
    with pytest.raises(LlmApiError, match=r"embeddings server .* answered HTTP 501: Start it"):
        OpenAIEmbedder(llm_server.url, runtime=runtime, max_retries=0).embed(["a"])
    with pytest.raises(ConfigError, match="not one string"):
        OpenAIEmbedder(llm_server.url, runtime=runtime).embed("a")  # type: ignore[arg-type]


def test_ollama_embed_posts_to_api_embed_and_keeps_order(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Raw(200, json.dumps({"model": "nomic", "embeddings": [[0.1], [0.2]]})))
    embedder = OllamaEmbedder("nomic", llm_server.url, runtime=runtime)
    assert embedder.embed(["a", "b"]) == [[0.1], [0.2]]
    assert llm_server.requests[0] == {"input": ["a", "b"], "model": "nomic"}
    llm_server.script(Raw(404, json.dumps({"error": "model 'nomic' not found"})))
    with pytest.raises(LlmApiError, match=r"Ollama .* answered HTTP 404: model 'nomic' not found"):
        embedder.embed(["a"])


@pytest.mark.parametrize(
    ("value", "base"),
    [
        ("", "http://127.0.0.1:11434"),
        ("gpu-box", "http://gpu-box:11434"),
        ("gpu-box:8000", "http://gpu-box:8000"),
        ("https://ollama.example.com:443", "https://ollama.example.com:443"),
    ],
)
def test_ollama_host_is_honoured(value: str, base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", value)
    assert ollama_host() == base
