"""Reading A2A objects from untrusted answers: each wrong shape is an A2AProtocolError."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from agent_smith import A2AProtocolError
from agent_smith.a2a.card import agent_card, read_card
from agent_smith.a2a.wire import (
    ArtifactUpdate,
    StatusUpdate,
    TaskView,
    approvals_of,
    error_code,
    error_info,
    new_id,
    read_send_result,
    read_stream_item,
    read_task,
    text_message,
    text_of,
)
from agent_smith.tools.base import ToolSchema

AGENT = "http://127.0.0.1:9/agent"


def card(**changes: Any) -> dict[str, Any]:
    value = agent_card(name="a", description="d", url=AGENT + "/a2a", tools=[ToolSchema("t", "x")])
    value.update(changes)
    return value


def test_our_card_reads_back_with_the_json_rpc_interface_first() -> None:
    remote = read_card(card(), agent=AGENT)
    assert (remote.name, remote.url, remote.binding, remote.streaming) == (
        "a",
        AGENT + "/a2a",
        "JSONRPC",
        True,
    )
    assert remote.skills == (("t", "x"),)
    assert read_card(card(), agent=AGENT, binding="HTTP+JSON").binding == "HTTP+JSON"


def test_an_agent_without_tools_still_lists_one_skill_and_auth_is_declared() -> None:
    value = agent_card(name="a", description="", url="u", security_schemes={"bearer": {"x": 1}})
    assert [s["id"] for s in value["skills"]] == ["a"]
    assert value["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ([], "not a JSON object"),
        ({"name": "a"}, "lacks required field"),
        (card(name=3), "'name' is not a string"),
        (card(skills=[{"id": "x"}]), "'skills' is not a list of skills"),
        (card(capabilities=[]), "'capabilities' is not an object"),
        (card(supportedInterfaces=[]), "no supportedInterfaces"),
        (card(supportedInterfaces=[{"protocolBinding": "JSONRPC"}]), "has no 'url'"),
        (
            card(
                supportedInterfaces=[
                    {"url": "u", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
                ]
            ),
            "offers no A2A 1.0 interface",
        ),
        (
            card(
                supportedInterfaces=[
                    {"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
                ]
            ),
            "offers no A2A 1.0 interface",
        ),
    ],
)
def test_a_card_that_does_not_validate_is_a_protocol_error(value: object, complaint: str) -> None:
    with pytest.raises(A2AProtocolError, match=complaint) as caught:
        read_card(value, agent=AGENT)
    assert caught.value.agent == AGENT


def test_a_task_reads_with_its_text() -> None:
    raw = {
        "id": "t1",
        "contextId": "c1",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [
            {"artifactId": "a", "parts": [{"text": "hi "}, {"data": 1}, {"text": "there"}]}
        ],
    }
    task = read_task(raw, agent=AGENT)
    assert (task.id, task.context_id, task.state, task.text) == (
        "t1",
        "c1",
        "TASK_STATE_COMPLETED",
        "hi there",
    )
    assert read_send_result({"task": raw}, agent=AGENT) == task


@pytest.mark.parametrize(
    "value",
    [
        {"id": "t", "status": {"state": "DONE"}},
        {"status": {"state": "TASK_STATE_WORKING"}},
        {"id": "t", "status": {"state": "TASK_STATE_WORKING", "message": {"role": "ROLE_AGENT"}}},
        {"id": "t", "status": {"state": "TASK_STATE_WORKING"}, "artifacts": "x"},
    ],
)
def test_a_task_of_the_wrong_shape_is_a_protocol_error(value: object) -> None:
    with pytest.raises(A2AProtocolError):
        read_task(value, agent=AGENT)


def test_stream_items_read_as_their_kinds() -> None:
    status = {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}
    artifact = {
        "taskId": "t",
        "contextId": "c",
        "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
        "append": True,
    }
    assert read_stream_item({"statusUpdate": status}, agent=AGENT) == StatusUpdate(
        "t", "c", "TASK_STATE_WORKING"
    )
    assert read_stream_item({"artifactUpdate": artifact}, agent=AGENT) == ArtifactUpdate(
        "t", "c", "a", "x", append=True
    )
    task = {"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}}
    assert isinstance(read_stream_item({"task": task}, agent=AGENT), TaskView)
    with pytest.raises(A2AProtocolError, match="unknown stream event"):
        read_stream_item({"other": 1}, agent=AGENT)


@pytest.mark.parametrize(
    ("parts", "text"),
    [
        ([{"text": "one"}], "one"),
        ([{"text": "a"}, {"data": {}}, {"text": "b"}], "ab"),
        ([{"data": {"text": "no"}}], ""),
        ([{"text": 5}], ""),
        (["text"], ""),
        ([], ""),
        ({"text": "not a list"}, ""),
    ],
)
def test_text_of_joins_the_text_parts_only(parts: object, text: str) -> None:
    assert text_of(parts) == text


def test_ids_are_random_version_4_uuids_in_hex() -> None:
    ids = [new_id() for _ in range(200)]
    assert len(set(ids)) == 200
    for value in ids:
        parsed = uuid.UUID(hex=value)
        assert parsed.hex == value
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_approvals_are_read_from_the_data_part() -> None:
    message = text_message("wait", data={"approvals": [{"callId": "c1"}, "junk"]})
    assert approvals_of(message) == [{"callId": "c1"}]
    assert approvals_of(text_message("just text")) == []


def test_an_error_reason_maps_back_to_its_code() -> None:
    assert error_code(error_info(-32001)) == -32001
    assert error_code([{"reason": "SOMETHING_ELSE"}]) is None
    assert error_code("nope") is None
