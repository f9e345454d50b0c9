"""The web app's A2A routes on a real loopback server: the card, bindings, bad input, scoping."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from agent_smith import WebApp
from agent_smith.web.serve import WebServer
from tests.a2a.conftest import NOTES, TIMEOUT, build

VERSION = {"A2A-Version": "1.0"}


def rpc(
    url: str, method: str, params: Any, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    headers = {**VERSION, **(headers or {})}
    response = requests.post(f"{url}/a2a", json=body, headers=headers, timeout=TIMEOUT)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def message(text: str, **ids: str) -> dict[str, Any]:
    return {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}], **ids}


def test_the_card_is_public_and_names_both_bindings(served: str) -> None:
    card = requests.get(f"{served}/.well-known/agent-card.json", timeout=TIMEOUT).json()
    assert card["name"] == "notes"
    assert {s["id"] for s in card["skills"]} == {"save_note", "hold"}
    assert [(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]] == [
        ("JSONRPC", f"{served}/a2a"),
        ("HTTP+JSON", f"{served}/a2a"),
    ]
    assert card["capabilities"]["streaming"] is True
    assert "securitySchemes" not in card  # no authenticate hook: nothing to declare


def test_a_context_keeps_its_history_from_task_to_task(served: str) -> None:
    first = rpc(served, "SendMessage", {"message": message("one")})["result"]["task"]
    context = first["contextId"]
    second = rpc(served, "SendMessage", {"message": message("two", contextId=context)})
    task = second["result"]["task"]
    assert task["contextId"] == context and task["id"] != first["id"]
    assert task["artifacts"][0]["parts"][0]["text"] == "You said: two"
    listed = rpc(served, "ListTasks", {"contextId": context})["result"]
    assert {t["id"] for t in listed["tasks"]} == {first["id"], task["id"]}
    conversations = requests.get(f"{served}/api/conversations", timeout=TIMEOUT).json()
    assert [(c["id"], c["messages"]) for c in conversations] == [(context, 4)]  # one conversation


def test_an_approval_is_input_required_and_the_next_message_decides(served: str) -> None:
    task = rpc(served, "SendMessage", {"message": message("save eggs")})["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    approvals = task["status"]["message"]["parts"][1]["data"]["approvals"]
    assert [(a["tool"], a["arguments"]) for a in approvals] == [("save_note", {"text": "eggs"})]
    answer = {"decisions": {approvals[0]["callId"]: "not today"}}
    reply = {
        "messageId": "m2",
        "role": "ROLE_USER",
        "taskId": task["id"],
        "parts": [{"data": answer}],
    }
    done = rpc(served, "SendMessage", {"message": reply})["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "not today" in done["artifacts"][0]["parts"][0]["text"]
    assert NOTES == []
    again = rpc(served, "SendMessage", {"message": message("yes", taskId=task["id"])})
    assert again["error"]["code"] == -32602  # the task no longer waits


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"[]", -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "Nope", "params": {}}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": []}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 1}}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}', -32001),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "x"}}',
            -32004,
        ),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}', -32007),
    ],
)
def test_bad_json_rpc_gets_its_error_code(served: str, body: bytes, code: int) -> None:
    response = requests.post(
        f"{served}/a2a",
        data=body,
        headers={"Content-Type": "application/json"},
        timeout=TIMEOUT,
    )
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == code
    assert "Traceback" not in response.text and "agent_smith" not in response.text


def test_an_unsupported_protocol_version_is_refused(served: str) -> None:
    response = requests.post(
        f"{served}/a2a",
        json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}},
        headers={"A2A-Version": "0.3"},
        timeout=TIMEOUT,
    )
    assert response.json()["error"]["code"] == -32009


def test_a_ten_megabyte_message_gets_an_error_answer(served: str) -> None:
    huge = {"message": message("x" * 10_000_000)}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": huge}
    response = requests.post(f"{served}/a2a", json=body, timeout=TIMEOUT)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == -32600
    rest = requests.post(f"{served}/a2a/message:send", json=huge, timeout=TIMEOUT)
    assert rest.status_code == 413
    assert rest.json()["error"]["details"][0]["reason"] == "INVALID_REQUEST"


def test_rest_errors_carry_status_and_reason(served: str) -> None:
    missing = requests.get(f"{served}/a2a/tasks/nope", timeout=TIMEOUT)
    assert missing.status_code == 404
    error = missing.json()["error"]
    assert (error["status"], error["details"][0]["reason"]) == ("NOT_FOUND", "TASK_NOT_FOUND")
    bad = requests.post(f"{served}/a2a/message:send", json={"message": {}}, timeout=TIMEOUT)
    assert bad.status_code == 400
    assert bad.json()["error"]["details"][0]["reason"] == "INVALID_PARAMS"
    unknown = requests.get(f"{served}/a2a/nowhere", timeout=TIMEOUT)
    assert unknown.status_code == 404


def test_a_task_of_another_context_is_refused(served: str) -> None:
    task = rpc(served, "SendMessage", {"message": message("save x")})["result"]["task"]
    elsewhere = message("yes", taskId=task["id"], contextId="another")
    answer = rpc(served, "SendMessage", {"message": elsewhere})
    assert answer["error"]["code"] == -32602
    assert "not in context" in answer["error"]["message"]


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[str]:
    def authenticate(environ: dict[str, Any]) -> str | None:
        token = environ.get("HTTP_AUTHORIZATION", "")
        return {"Bearer alice": "alice", "Bearer bob": "bob"}.get(token)

    app = WebApp(build, sessions=tmp_path / "g.db", a2a=True, authenticate=authenticate)
    with WebServer(app).start() as server:
        yield server.url


def test_auth_applies_and_another_callers_task_is_not_found(guarded: str) -> None:
    card = requests.get(f"{guarded}/.well-known/agent-card.json", timeout=TIMEOUT).json()
    assert card["securitySchemes"] == {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": message("hi")},
    }
    anonymous = requests.post(f"{guarded}/a2a", json=body, timeout=TIMEOUT)
    assert anonymous.status_code == 401
    alice = {"Authorization": "Bearer alice"}
    task = rpc(guarded, "SendMessage", body["params"], headers=alice)["result"]["task"]
    bob = {"Authorization": "Bearer bob"}
    assert rpc(guarded, "GetTask", {"id": task["id"]}, headers=bob)["error"]["code"] == -32001
    assert rpc(guarded, "CancelTask", {"id": task["id"]}, headers=bob)["error"]["code"] == -32001
    mine = rpc(guarded, "GetTask", {"id": task["id"]}, headers=alice)["result"]
    assert mine["status"]["state"] == "TASK_STATE_COMPLETED"
    # Bob naming Alice's context gets a conversation of his own, not hers.
    his = rpc(
        guarded,
        "SendMessage",
        {"message": message("hello", contextId=task["contextId"])},
        headers=bob,
    )["result"]["task"]
    assert [m["parts"][0]["text"] for m in his["history"]][:1] == ["hello"]
    listed = rpc(guarded, "ListTasks", {}, headers=bob)["result"]["tasks"]
    assert [t["id"] for t in listed] == [his["id"]]
