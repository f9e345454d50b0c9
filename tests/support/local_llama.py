"""What a test on llama.cpp's own server needs first: the optional ``xllamacpp`` wheel."""

from __future__ import annotations

import pytest

from agent_smith.llm.local_server import xllamacpp_available


def require_xllamacpp() -> None:
    """Skip, saying why, without xllamacpp (a failure under AGENT_SMITH_REQUIRE_ALL=1)."""
    if not xllamacpp_available():
        pytest.skip("real llama.cpp server tests need xllamacpp (pip install -e '.[local]')")
