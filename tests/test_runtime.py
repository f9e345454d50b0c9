from __future__ import annotations

import pytest

from agent_smith import Runtime, default_runtime


def test_runtime_keeps_one_pool_per_depth_and_closes_them(no_thread_leak: None) -> None:
    with Runtime(max_workers=2) as runtime:
        assert runtime.pool(0) is runtime.pool(0)
        assert runtime.pool(1) is not runtime.pool(0)
        assert runtime.pool(1).submit(lambda: "ok").result(10) == "ok"
    assert runtime.closed
    with pytest.raises(RuntimeError):
        runtime.pool(0)


def test_runtime_rejects_an_empty_pool() -> None:
    with pytest.raises(ValueError):
        Runtime(max_workers=0)


def test_default_runtime_is_shared_and_replaced_after_close() -> None:
    first = default_runtime()
    assert default_runtime() is first
    first.close()
    second = default_runtime()
    assert second is not first and not second.closed
