"""Batch inputs with images and documents: sent as parts, kept whole in both results files."""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith import (
    AgentSpec,
    BatchInput,
    ConfigError,
    DocumentPart,
    ImagePart,
    ResultsError,
    TextPart,
    read_inputs,
    read_results,
    run_batch,
)
from tests.support.llm_server import JsonObject, Reply, ScriptedLlmServer, Text

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PDF = b"%PDF-1.4\n%fake\n"


def _what_was_sent(body: JsonObject) -> Reply:
    """The kinds of the last user message's parts, so the test sees they arrived."""
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    kinds = [part["type"] for part in content] if isinstance(content, list) else ["string"]
    return Text(" ".join(kinds))


@pytest.fixture
def server(no_thread_leak: None) -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer(_what_was_sent) as s:
        yield s


@pytest.mark.parametrize("suffix", [".jsonl", ".db"])
def test_an_input_of_parts_reaches_the_model_and_its_result_reads_back_whole(
    server: ScriptedLlmServer, tmp_path: Path, suffix: str
) -> None:
    out = tmp_path / f"out{suffix}"
    inputs = [
        BatchInput("photo", ("What is this?", ImagePart("image/png", data=PNG))),
        BatchInput("report", ("Sum up", DocumentPart("application/pdf", data=PDF, name="r.pdf"))),
        BatchInput("plain", "hello"),
    ]

    results = {r.id: r for r in run_batch(AgentSpec(server.url), inputs, results=out)}

    assert results["photo"].content == "text image_url"
    assert results["report"].content == "text file"
    assert results["plain"].content == "string"
    assert results["photo"].input == (TextPart("What is this?"), ImagePart("image/png", data=PNG))
    assert {r.id: r for r in read_results(out)} == results


def test_an_inputs_file_takes_parts_in_the_stored_json_form(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    image = {"type": "image", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}
    lines = [
        {"id": "a", "input": [{"type": "text", "text": "What is it?"}, image]},
        {"id": "b", "input": [{"type": "image", "media_type": "image/png", "data": "!!"}]},
    ]
    path.write_text(json.dumps(lines[0]) + "\n")
    assert read_inputs(path)[0].input[1] == ImagePart("image/png", data=PNG)  # type: ignore[index]

    path.write_text(json.dumps(lines[0]) + "\n" + json.dumps(lines[1]) + "\n")
    with pytest.raises(ConfigError, match=r"in\.jsonl:2: .*input\[0\].*not valid base64"):
        read_inputs(path)


def test_corrupt_base64_in_a_results_database_names_the_part_and_the_file(
    server: ScriptedLlmServer, tmp_path: Path
) -> None:
    out = tmp_path / "out.db"
    inputs = [BatchInput("photo", ("What?", ImagePart("image/png", data=PNG)))]
    list(run_batch(AgentSpec(server.url), inputs, results=out))
    with sqlite3.connect(out) as db:
        (stored,) = db.execute("SELECT input_parts FROM results").fetchone()
        parts = json.loads(stored)
        parts[1]["data"] = "iVBOR!!!"
        db.execute("UPDATE results SET input_parts = ?", (json.dumps(parts),))

    with pytest.raises(ResultsError, match=r"out\.db.*input_parts\[1\].*not valid base64"):
        read_results(out)
    with sqlite3.connect(out) as db:  # the row is still there
        assert db.execute("SELECT id, input FROM results").fetchall() == [("photo", "What?")]
