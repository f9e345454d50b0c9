"""The server's task records and a turn's updates (agent_smith.web.a2a_tasks), in process."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from agent_smith.a2a.wire import CANCELED, COMPLETED, WORKING, text_message
from agent_smith.sessions.sqlite import SqliteSession
from agent_smith.web.a2a_tasks import TaskRecord, run_task
from agent_smith.web.stream import turn_events
from tests.a2a.conftest import build


def test_the_final_state_goes_out_once_the_turn_and_its_session_are_closed(
    tmp_path: Path,
) -> None:
    record = TaskRecord("t1", "c1", "local")
    closed: list[str] = []
    stack = ExitStack()
    stack.callback(closed.append, "session")  # closed last, as the real session is
    session = stack.enter_context(SqliteSession(tmp_path / "a2a.db", "c1"))
    agent = stack.enter_context(build(session))
    groups = []
    for group in run_task(record, stack, agent, lambda: turn_events(lambda: agent.stream("hi"))):
        groups.append((group, list(closed)))
    first, _ = groups[0]
    assert [next(iter(u)) for u in first] == ["task", "statusUpdate", "artifactUpdate"]
    assert first[1]["statusUpdate"]["status"]["state"] == WORKING  # with the first token
    last, closed_by_then = groups[-1]
    assert closed_by_then == ["session"]  # a follow-up in the context finds it free
    assert [next(iter(u)) for u in last] == ["artifactUpdate", "statusUpdate"]
    assert last[0]["artifactUpdate"]["lastChunk"] is True
    assert last[1]["statusUpdate"]["status"]["state"] == COMPLETED
    assert all(not c for _, c in groups[:-1])  # the session stays open while the turn runs
    chunks = [u["artifactUpdate"] for g, _ in groups for u in g if "artifactUpdate" in u]
    assert "".join(c["artifact"]["parts"][0]["text"] for c in chunks) == "You said: hi"
    assert record.state == COMPLETED and record.agent is None


def test_a_final_state_is_never_left(tmp_path: Path) -> None:
    record = TaskRecord("t1", "c1", "local")
    record.set_state(CANCELED, text_message("cancelled by the caller"))
    update = record.set_state(COMPLETED, text_message("the answer"))
    assert record.state == CANCELED
    assert update["statusUpdate"]["status"]["state"] == CANCELED
    assert [m["parts"][0]["text"] for m in record.history] == ["cancelled by the caller"]
