"""The web app's approval endpoint decides a durable turn that another process runs."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

pytest.importorskip("dbos")

from agent_smith import Agent, LlmClient, Session, TestModel, WebApp
from agent_smith.durable import DurableAgent, DurableEngine, DurableTurns
from agent_smith.web.app import durable_turn_id
from agent_smith.web.serve import WebServer
from tests.durable.conftest import WAIT, Workers


@pytest.fixture
def web(tmp_path: Path) -> Iterator[str]:
    """The web app on 127.0.0.1, deciding the durable turns of tmp_path/turns.sqlite."""
    llm = LlmClient("http://127.0.0.1:9", "unused")

    def build(session: Session) -> Agent:
        return Agent(llm, session=session)

    database = tmp_path / "turns.sqlite"
    if not database.exists():  # the workers' fixture did not make DBOS's tables
        with DurableEngine(database) as engine:
            engine.launch()
    with DurableTurns(database) as turns:
        app = WebApp(
            build,
            sessions=tmp_path / "conversations.db",
            durable=turns,
            authenticate=lambda environ: environ.get("HTTP_X_USER"),
        )
        with WebServer(app).start() as server:
            yield f"{server.url}/api/durable"


def test_a_decision_posted_to_the_web_app_lets_the_turn_go_on_in_the_worker_process(
    workers: Workers, web: str, tmp_path: Path
) -> None:
    with DurableEngine(tmp_path / "turns.sqlite") as engine:  # not launched: runs nothing
        clerk = DurableAgent(Agent(TestModel(["unused"]), name="clerk"), engine)
        turn = clerk.start("claim 7", turn_id=durable_turn_id("ann", "claim-7"), queue="turns")
    ann, bob = {"X-User": "ann"}, {"X-User": "bob"}
    shown = until(web, lambda turn: bool(turn["waiting"]), ann)
    assert shown["status"] == "WAITING"
    assert [w["tool"] for w in shown["waiting"]] == ["file_claim"]
    call_id = shown["waiting"][0]["call_id"]
    assert requests.get(f"{web}/claim-7", headers=bob, timeout=WAIT).status_code == 404
    decision = {"call_id": call_id, "approved": True}
    url = f"{web}/claim-7/decisions"
    refused = requests.post(url, json=decision, headers=bob, timeout=WAIT)
    assert refused.status_code == 409  # bob has no such turn waiting
    assert requests.post(url, json=decision, headers=ann, timeout=WAIT).status_code == 204
    again = {"call_id": call_id, "approved": False, "reason": "changed my mind"}
    late = requests.post(url, json=again, headers=ann, timeout=WAIT)
    assert late.status_code == 409 and "decided already" in late.json()["error"]
    assert until(web, lambda turn: turn["status"] == "SUCCESS", ann)["waiting"] == []
    with DurableTurns(tmp_path / "turns.sqlite") as turns:
        info = turns.inspect(turn)
    assert info is not None
    answer = json.loads(str(dict(info.steps)["answer"].record))["content"]
    filed, pid = answer.rsplit(" in ", 1)
    assert filed == "filed claim 7" and pid in workers.pids  # a worker went on with it


def until(web: str, done: Callable[[dict[str, Any]], bool], user: dict[str, str]) -> dict[str, Any]:
    """The web app's view of turn claim-7 once ``done`` says so (polled, bounded)."""
    pause = threading.Event()
    for _ in range(int(WAIT / 0.1)):
        shown = requests.get(f"{web}/claim-7", headers=user, timeout=WAIT)
        if shown.status_code == 200 and done(shown.json()):
            return dict(shown.json())
        pause.wait(0.1)
    raise AssertionError("the turn never got there")


def test_a_malformed_decision_is_a_400(web: str) -> None:
    answer = requests.post(
        f"{web}/claim-7/decisions", json={"call_id": "c1"}, headers={"X-User": "ann"}, timeout=WAIT
    )
    assert answer.status_code == 400 and "approved" in answer.json()["error"]
