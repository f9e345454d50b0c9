"""Token stores: the in-memory default and the 0600 JSON file."""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
from pathlib import Path

import pytest

from agent_smith import (
    ClientInfo,
    ConfigError,
    FileTokenStorage,
    InMemoryTokenStorage,
    OAuthTokens,
    TokenStorage,
)

TOKENS = OAuthTokens("acc-1", expires_at=1234.5, refresh_token="ref-1", scope=("a", "b"))
CLIENT = ClientInfo("cid", "csecret", "client_secret_basic", ("http://127.0.0.1:9/cb",))


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_both_stores_keep_tokens_per_server_and_clients_per_issuer(
    kind: str, tmp_path: Path
) -> None:
    store: TokenStorage = (
        InMemoryTokenStorage() if kind == "memory" else FileTokenStorage(tmp_path / "t.json")
    )
    assert isinstance(store, TokenStorage)
    assert store.load_tokens("https://a/mcp") is None
    store.save_tokens("https://a/mcp", TOKENS)
    store.save_client("https://auth", CLIENT)
    assert store.load_tokens("https://a/mcp") == TOKENS
    assert store.load_tokens("https://b/mcp") is None
    assert store.load_client("https://auth") == CLIENT
    store.save_tokens("https://a/mcp", None)
    assert store.load_tokens("https://a/mcp") is None


def test_the_file_is_0600_in_a_0700_directory_and_survives_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "tokens.json"
    FileTokenStorage(path).save_tokens("k", TOKENS)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert FileTokenStorage(path).load_tokens("k") == TOKENS
    assert [p.name for p in path.parent.iterdir()] == ["tokens.json"]  # no temp file left


def test_a_file_others_can_read_is_tightened_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "tokens.json"
    FileTokenStorage(path).save_tokens("k", TOKENS)
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        assert FileTokenStorage(path).load_tokens("k") == TOKENS
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "readable by others" in caplog.text


def test_a_corrupt_file_is_set_aside_not_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    os.chmod(path, 0o600)
    store = FileTokenStorage(path)
    with caplog.at_level(logging.WARNING):
        assert store.load_tokens("k") is None
    store.save_tokens("k", TOKENS)
    assert json.loads(path.read_text())["tokens"]["k"]["access_token"] == "acc-1"
    path.write_text(json.dumps({"tokens": {"k": {"no": "token"}}, "clients": {}}))
    assert store.load_tokens("k") is None
    path.write_text("[" * 100_000)  # deeper than the parser goes
    with caplog.at_level(logging.WARNING):
        assert store.load_tokens("k") is None
    assert "is not JSON" in caplog.text


def test_an_unwritable_file_is_logged_without_its_contents(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    store = FileTokenStorage(blocker / "tokens.json")  # its parent is a file
    with caplog.at_level(logging.WARNING):
        store.save_tokens("k", TOKENS)
    assert "cannot write token file" in caplog.text
    assert "acc-1" not in caplog.text


def test_saves_from_many_threads_all_land(tmp_path: Path) -> None:
    store = FileTokenStorage(tmp_path / "tokens.json")
    barrier = threading.Barrier(8)

    def save(n: int) -> None:
        barrier.wait(10)
        store.save_tokens(f"k{n}", OAuthTokens(f"acc-{n}"))

    threads = [threading.Thread(target=save, args=(n,), name=f"test-save-{n}") for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert all(store.load_tokens(f"k{n}") == OAuthTokens(f"acc-{n}") for n in range(8))


def test_a_directory_is_not_a_token_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="directory"):
        FileTokenStorage(tmp_path)
