"""``agent-smith durable``: list and inspect the turns of a database, steer them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dbos")

from agent_smith import Agent, TestModel, tool
from agent_smith.cli.main import main
from agent_smith.durable import DurableAgent, DurableEngine
from agent_smith.llm.testing import call


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def test_list_and_show_print_the_turns_and_their_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = str(tmp_path / "turns.sqlite")
    with DurableEngine(database) as engine:
        durable = DurableAgent(Agent(TestModel([call("add", a=1, b=2), "3"]), tools=[add]), engine)
        engine.launch()
        durable.send("Add 1 and 2.", turn_id="t-42")
    assert main(["durable", "--database", database, "list"]) == 0
    line = capsys.readouterr().out.splitlines()[0].split("\t")
    assert line[:3] == ["t-42", "SUCCESS", "agent"] and line[-1] == "Add 1 and 2."
    assert main(["durable", "--database", database, "show", "t-42"]) == 0
    shown = capsys.readouterr().out
    assert "turn t-42: SUCCESS" in shown
    assert [row.split("\t")[0].strip() for row in shown.splitlines()[2:]] == [
        "start",
        "m1",
        "t1",
        "m2",
        "answer",
    ]


def test_an_unknown_turn_or_database_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = str(tmp_path / "turns.sqlite")
    assert main(["durable", "--database", database, "list"]) == 1
    assert "holds no durable turns" in capsys.readouterr().err
    with DurableEngine(database) as engine:
        engine.launch()  # the database now has DBOS's tables, and no turn
    assert main(["durable", "--database", database, "cancel", "nope"]) == 1
    assert "no durable turn 'nope'" in capsys.readouterr().err
    missing = str(tmp_path / "no" / "such" / "folder.sqlite")
    assert main(["durable", "--database", missing, "list"]) == 1
    assert "cannot reach the durable database" in capsys.readouterr().err
