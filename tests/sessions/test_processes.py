"""Many worker processes on one session store: every message lands, in each writer's order."""

from __future__ import annotations

from tests.sessions.conftest import Store
from tests.support.session_child import Child


def test_processes_appending_at_once_to_shared_and_own_sessions_lose_nothing(
    store: Store,
) -> None:
    store.open("setup").close()  # create the store before the race
    plan = [("shared", f"p{i}") for i in range(2)] + [(f"own{i}", f"q{i}") for i in range(2)]
    children = [Child("append", store.where, sid, tag, 100) for sid, tag in plan]
    try:
        for child in children:
            child.expect("READY")
        for child in children:
            child.send("go")
        for child in children:
            child.expect("DONE")
            assert child.wait() == 0
    finally:
        for child in children:
            child.close()
    with store.open("shared") as shared:
        texts = [m.content for m in shared.messages()]
        assert sorted(shared.session_ids()) == ["own0", "own1", "shared"]
    assert len(texts) == 200
    for i in range(2):  # interleaved across processes, each process's own in order
        assert [t for t in texts if t.startswith(f"p{i}-")] == [f"p{i}-{j}" for j in range(100)]
    for i in range(2):
        with store.open(f"own{i}") as own:
            assert [m.content for m in own.messages()] == [f"q{i}-{j}" for j in range(100)]
