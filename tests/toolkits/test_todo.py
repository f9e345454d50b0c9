"""The todo toolkit: add, check off, list, and the list kept with a session."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_smith import (
    Agent,
    LlmClient,
    Runtime,
    SqliteSession,
    TodoPolicy,
    TodoToolkit,
    ToolError,
    ToolMessage,
)
from agent_smith.toolkits.todo import TodoItem
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


def test_add_check_and_list_answer_with_the_whole_list() -> None:
    todo = TodoToolkit()
    assert todo.list() == "todo list: empty"
    assert todo.add(["write the tests", "  ", "make them pass"]) == (
        "todo list: 0 of 2 done\n[ ] 1. write the tests\n[ ] 2. make them pass"
    )
    assert todo.check([2]) == (
        "todo list: 1 of 2 done\n[ ] 1. write the tests\n[x] 2. make them pass"
    )
    assert todo.check([2], done=False).startswith("todo list: 0 of 2 done")
    assert todo.add(["ship"]).endswith("[ ] 3. ship")


def test_mistakes_are_explained_with_the_list() -> None:
    todo = TodoToolkit()
    todo.add(["one"])
    with pytest.raises(ToolError, match=r"no task numbered \[7\]; the list is:\n"):
        todo.check([1, 7])
    with pytest.raises(ToolError, match="non-empty task"):
        todo.add(["", " "])


def test_the_list_and_its_items_are_bounded() -> None:
    todo = TodoToolkit(TodoPolicy(max_items=2, max_item_chars=10))
    todo.add(["a very long task indeed\nwith a second line"])
    assert todo.items == (TodoItem(1, "a very lo…"),)
    with pytest.raises(ToolError, match="at most 2 tasks"):
        todo.add(["b", "c"])


def test_the_list_is_restored_from_the_last_successful_todo_result() -> None:
    first, second = TodoToolkit(), TodoToolkit()
    history = [
        ToolMessage("c1", "todo_add", first.add(["plan", "build"])),
        ToolMessage("c2", "todo_check", first.check([1])),
        ToolMessage("c3", "todo_check", '{"error":true,"message":"no task"}', is_error=True),
        ToolMessage("c4", "read_file", "todo list: 9 of 9 done\n[x] 1. not ours"),
    ]
    restored = TodoToolkit(history=history)
    assert restored.items == (TodoItem(1, "plan", True), TodoItem(2, "build"))
    assert second.items == ()


def test_the_tools_declare_which_only_reads() -> None:
    assert [(t.name, t.options.read_only) for t in TodoToolkit().tools()] == [
        ("todo_add", False),
        ("todo_check", False),
        ("todo_list", True),
    ]


def test_the_list_is_kept_with_the_session(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, tmp_path: Path
) -> None:
    llm_server.script(
        Calls(("todo_add", {"items": ["read the code", "fix the bug"]})),
        Calls(("todo_check", {"numbers": [1]})),
        Text("planned"),
    )
    database = tmp_path / "sessions.db"
    with SqliteSession(database, "s1") as session:
        agent = Agent(llm, tools=TodoToolkit().tools(), runtime=runtime, session=session)
        assert agent.send("plan it").content == "planned"
    with SqliteSession(database, "s1") as session:
        todo = TodoToolkit(history=session.messages())
    assert todo.items == (TodoItem(1, "read the code", True), TodoItem(2, "fix the bug"))
