"""Sending images and documents: ``send(..., images=...)`` or parts, refused before the
history holds them, and kept whole by sessions and paused turns."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    ApprovalRequired,
    ConfigError,
    DocumentPart,
    FinalAnswer,
    ImagePart,
    OllamaClient,
    PartError,
    PausedTurn,
    Runtime,
    SqliteSession,
    TestModel,
    TextPart,
    UserMessage,
    messages_from_json,
    messages_to_json,
    tool,
)
from agent_smith.llm.testing import call
from tests.support.approvals import restored
from tests.support.llm_server import Raw, ScriptedLlmServer

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PDF = b"%PDF-1.4\n%fake\n"


def test_send_puts_the_images_after_the_text_in_one_user_message(tmp_path: Path) -> None:
    path = tmp_path / "cat.png"
    path.write_bytes(PNG)
    model = TestModel(["A cat."])

    answer = Agent(model).send(
        "What is in this picture?", images=[path, PNG, "https://example.com/dog.jpg"]
    )

    assert answer.content == "A cat."
    assert model.requests[0].messages[-1] == UserMessage(
        (
            TextPart("What is in this picture?"),
            ImagePart("image/png", data=PNG, name="cat.png"),
            ImagePart("image/png", data=PNG),
            ImagePart("image/jpeg", url="https://example.com/dog.jpg"),
        )
    )


def test_a_list_of_strings_and_parts_is_one_message_in_that_order() -> None:
    model = TestModel(["Two pages."])
    report = DocumentPart("application/pdf", data=PDF, name="report.pdf")

    events = list(Agent(model).stream(["Summarise", report, "in one line."]))

    assert isinstance(events[-1], FinalAnswer)
    assert model.requests[0].messages[-1].content == (
        TextPart("Summarise"),
        report,
        TextPart("in one line."),
    )


def test_images_given_as_one_path_instead_of_a_list_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="a list of images"):
        Agent(TestModel(["x"])).send("look", images="cat.png")  # type: ignore[arg-type]


def test_an_image_file_that_cannot_be_read_is_a_config_error_naming_it(tmp_path: Path) -> None:
    agent = Agent(TestModel(["x"]))
    with pytest.raises(ConfigError, match=r"missing\.png"):
        agent.send("look", images=[tmp_path / "missing.png"])
    assert agent.history == []


def test_a_part_the_model_cannot_take_is_refused_before_the_history_holds_it(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    ollama = OllamaClient(llm_server.url, "llava", runtime=runtime)
    agent = Agent(ollama, config=AgentConfig(stream=False))

    with pytest.raises(PartError) as caught:
        agent.send(["Read this.", DocumentPart("application/pdf", data=PDF)])

    assert caught.value.reason == "unsupported"
    assert caught.value.part.startswith("message.content[1] document (application/pdf")
    assert llm_server.requests == [] and agent.history == []
    reply = {"model": "llava", "message": {"role": "assistant", "content": "Hello."}, "done": True}
    llm_server.script(Raw(200, json.dumps(reply)))
    assert agent.send("hi").content == "Hello."  # the conversation goes on


def test_bytes_that_are_not_their_media_type_are_refused_naming_the_part() -> None:
    agent = Agent(TestModel(["x"]))
    with pytest.raises(PartError) as caught:
        agent.send("look", images=[ImagePart("image/jpeg", data=PNG)])
    assert caught.value.reason == "media_type"
    assert "message.content[1] image (image/jpeg" in str(caught.value)
    assert "image/png" in str(caught.value)
    assert agent.history == []


def test_a_session_stores_every_part_and_a_new_agent_reads_them_back(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    report = DocumentPart("text/plain", data=b"total: 12", name="total.txt")
    with SqliteSession(db, "s") as session:
        Agent(TestModel(["A cat."]), session=session).send(
            ["Look:", report], images=[PNG, "https://example.com/dog.jpg"]
        )
    with SqliteSession(db, "s") as session:
        history = Agent(TestModel([]), session=session).history

    assert history[0] == UserMessage(
        (
            TextPart("Look:"),
            report,
            ImagePart("image/png", data=PNG),
            ImagePart("image/jpeg", url="https://example.com/dog.jpg"),
        )
    )


def test_corrupt_base64_in_a_stored_session_names_the_part_and_loses_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    with SqliteSession(db, "s") as session:
        Agent(TestModel(["A cat."]), session=session).send("What is it?", images=[PNG])
    with sqlite3.connect(db) as conn:  # a byte flipped on disk, behind the library's back
        rows = conn.execute("SELECT rowid, body FROM messages ORDER BY rowid").fetchall()
        body = json.loads(rows[0][1])
        body["content"][1]["data"] = "iVBORw0K!!!"
        conn.execute("UPDATE messages SET body = ? WHERE rowid = ?", (json.dumps(body), rows[0][0]))

    with SqliteSession(db, "s") as session, pytest.raises(PartError) as caught:
        Agent(TestModel([]), session=session)

    assert caught.value.reason == "encoding"
    assert caught.value.part.startswith("message 0.content[1] (image, image/png)")
    with sqlite3.connect(db) as conn:  # every message still there, for a person to repair
        assert len(conn.execute("SELECT body FROM messages").fetchall()) == len(rows)


def test_a_paused_turn_with_an_image_resumes_in_a_new_agent_from_json(runtime: Runtime) -> None:
    @tool(requires_approval=True)
    def crop(box: str) -> str:
        """Crop the picture."""
        return f"cropped to {box}"

    first = TestModel([call("crop", box="face")])
    agent = Agent(first, tools=[crop], runtime=runtime)
    with pytest.raises(ApprovalRequired) as caught:
        agent.send("Crop it to the face.", images=[PNG])
    history_json, state_json = messages_to_json(agent.history), caught.value.state.to_json()

    later = TestModel(["Done."])
    memory = restored(messages_from_json(history_json))
    resumed = Agent(later, tools=[crop], memory=memory, runtime=runtime)
    final = resumed.resume(
        PausedTurn.from_json(state_json), {caught.value.requests[0].call_id: True}
    )

    assert final.content == "Done."
    asked = later.requests[0].messages[0]
    assert asked.content[1] == ImagePart("image/png", data=PNG)  # type: ignore[index]
    assert json.loads(history_json)[0]["content"][1]["data"] == base64.b64encode(PNG).decode()
