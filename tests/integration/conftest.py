"""A real llama.cpp server for the integration tests, started once per session.

``llama_endpoint`` is, in order of preference:

* the server at ``$LLAMA_SERVER_URL`` (bearer token ``$LLAMA_API_KEY``) — the
  live test against any llama-server with a tool-capable model and ``--jinja``;
* llama.cpp's server (``xllamacpp``, the ``local`` extra) started here on the
  deterministic tiny test model: ``$AGENT_SMITH_TEST_MODEL``, else
  ``<repo>/../shared/models/tiny-scripted.gguf`` (CI clones the repository
  next to a copy of ``shared/``).

When neither is available the tests that need it skip, saying what is
missing — except under ``AGENT_SMITH_REQUIRE_ALL=1`` (CI), where they fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_smith.llm.local_server import LocalLlamaServer, xllamacpp_available

REPO = Path(__file__).resolve().parents[2]
TINY_MODEL = REPO.parent / "shared" / "models" / "tiny-scripted.gguf"


@dataclass(frozen=True)
class LlamaEndpoint:
    """Where the llama.cpp server is, and whether it runs the scripted tiny model.

    ``scripted`` is True for the tiny test model: its replies are exact
    (``shared/models/README.md``), so tests may assert on their text.
    """

    url: str
    api_key: str | None
    scripted: bool


def tiny_model_path() -> Path:
    """The tiny test model's path: ``$AGENT_SMITH_TEST_MODEL`` or the shared copy."""
    return Path(os.environ.get("AGENT_SMITH_TEST_MODEL") or TINY_MODEL)


def require_local_llama() -> Path:
    """The tiny model's path, once sure it and xllamacpp are here (else skip / fail)."""
    missing = []
    if not xllamacpp_available():
        missing.append("xllamacpp (pip install -e '.[local]')")
    model = tiny_model_path()
    if not model.is_file():
        missing.append(f"the test model {model} (set AGENT_SMITH_TEST_MODEL)")
    if missing:
        reason = "real llama.cpp server tests need " + " and ".join(missing)
        if os.environ.get("AGENT_SMITH_REQUIRE_ALL") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return model


@pytest.fixture(scope="session")
def local_llama() -> Iterator[LocalLlamaServer]:
    """The tiny model on llama.cpp started here, even when LLAMA_SERVER_URL is set.

    For the behaviours only the scripted model produces on demand (a reply cut
    inside a tool call's arguments) and for LocalLlamaServer itself.
    """
    model = require_local_llama()
    with LocalLlamaServer(model, ctx_size=4096, threads=2) as server:
        yield server


@pytest.fixture(scope="session")
def llama_endpoint(request: pytest.FixtureRequest) -> LlamaEndpoint:
    url = os.environ.get("LLAMA_SERVER_URL")
    if url:
        return LlamaEndpoint(url, os.environ.get("LLAMA_API_KEY") or None, scripted=False)
    server: LocalLlamaServer = request.getfixturevalue("local_llama")
    return LlamaEndpoint(server.endpoint, None, scripted=True)
