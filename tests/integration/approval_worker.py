"""A worker process that resumes a paused turn: the other half of test_approvals_e2e.py.

    python approval_worker.py URL WORKDIR DECISIONS_JSON [--session]

Reads ``history.json`` and ``state.json`` from WORKDIR (written by the
process that paused), builds the same agent with a fresh memory restored
from the history, resumes with the decisions, prints the final answer and
writes the history afterwards to ``history-after.json``. With ``--session``
the history and the paused turn come from the SQLite session
``WORKDIR/sessions.db`` (conversation ``c1``) instead, as in a web worker.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_smith import (
    Agent,
    FullMemory,
    LlmClient,
    PausedTurn,
    Runtime,
    SqliteSession,
    make_tool,
    messages_from_json,
    messages_to_json,
)


def build_agent(
    url: str,
    workdir: Path,
    runtime: Runtime,
    memory: FullMemory,
    session: SqliteSession | None = None,
) -> Agent:
    """The agent both processes build: one tool that writes a note, and needs approval."""

    def write_note(name: str, text: str) -> str:
        """Write a note into the work folder."""
        (workdir / f"{name}.txt").write_text(text, encoding="utf-8")
        return f"wrote {name}.txt"

    note = make_tool(write_note, requires_approval=True)
    llm = LlmClient(url, "test", runtime=runtime, max_retries=0)
    return Agent(
        llm, "Take notes.", [note], memory=memory, runtime=runtime, name="notes", session=session
    )


def main(url: str, workdir: Path, decisions: str) -> int:
    memory = FullMemory()
    for message in messages_from_json((workdir / "history.json").read_text(encoding="utf-8")):
        memory.append(message)
    state = PausedTurn.from_json((workdir / "state.json").read_text(encoding="utf-8"))
    with Runtime() as runtime, build_agent(url, workdir, runtime, memory) as agent:
        final = agent.resume(state, json.loads(decisions))
        (workdir / "history-after.json").write_text(messages_to_json(agent.history), "utf-8")
    print(final.content)
    return 0


def main_on_session(url: str, workdir: Path, decisions: str) -> int:
    with (
        Runtime() as runtime,
        SqliteSession(workdir / "sessions.db", "c1") as session,
        build_agent(url, workdir, runtime, FullMemory(), session) as agent,
    ):
        state = agent.paused_turn
        if state is None:
            print("nothing waits", file=sys.stderr)
            return 1
        final = agent.resume(state, json.loads(decisions))
    print(final.content)
    return 0


if __name__ == "__main__":
    resume = main_on_session if sys.argv[4:] == ["--session"] else main
    sys.exit(resume(sys.argv[1], Path(sys.argv[2]), sys.argv[3]))
