"""The REPL's nudge: a line naming files in the sandbox asks for them to be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_smith import ConfigError, DocumentPart, ImagePart, TextPart
from agent_smith.cli.file_mentions import attachment, mention_files
from agent_smith.toolkits import Workspace
from tests.support.media import PDF, PNG


@pytest.fixture
def reader(tmp_path: Path) -> Workspace:
    sandbox = tmp_path / "sandbox"
    (sandbox / "todo").mkdir(parents=True)
    (sandbox / "config.ini").write_text("port = 8443\n", encoding="utf-8")
    (sandbox / "todo" / "list.txt").write_text("- milk\n", encoding="utf-8")
    (sandbox / "archive.d").mkdir()
    (tmp_path / "secret.txt").write_text("top secret\n", encoding="utf-8")
    return Workspace(sandbox)


def test_a_line_naming_sandbox_files_asks_for_each_once(reader: Workspace) -> None:
    line = "Compare config.ini with todo/list.txt. Is config.ini right?"
    assert mention_files(line, reader) == (
        f"{line}\n\nRead config.ini, todo/list.txt with read_file before you answer."
    )


@pytest.mark.parametrize(
    "line",
    [
        "What is 17 times 23?",
        "What is 2.5 times 4?",  # a number, not a file name
        "Which port does nginx.conf set?",  # not in the sandbox
        "What is in archive.d?",  # a folder
        "Read ../secret.txt please.",  # outside the sandbox: never hinted at
        "And /etc/hostname?",
    ],
)
def test_any_other_line_goes_unchanged(reader: Workspace, line: str) -> None:
    assert mention_files(line, reader) == line


def test_an_image_named_in_the_line_goes_with_it_and_text_files_are_still_read(
    reader: Workspace, tmp_path: Path
) -> None:
    (tmp_path / "sandbox" / "shot.png").write_bytes(PNG)
    line = "Does shot.png match config.ini?"
    assert mention_files(line, reader) == (
        TextPart(f"{line}\n\nRead config.ini with read_file before you answer."),
        ImagePart("image/png", PNG, name="shot.png"),
    )


def test_an_image_outside_the_sandbox_is_not_attached(tmp_path: Path, reader: Workspace) -> None:
    (tmp_path / "private.png").write_bytes(PNG)
    assert mention_files("What is ../private.png?", reader) == "What is ../private.png?"


def test_attachment_reads_a_pdf_as_a_document_and_refuses_what_no_model_reads(
    tmp_path: Path,
) -> None:
    (tmp_path / "paper.pdf").write_bytes(PDF)
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01")
    assert attachment(tmp_path / "paper.pdf") == DocumentPart(
        "application/pdf", PDF, name="paper.pdf"
    )
    with pytest.raises(ConfigError, match=r"octet-stream' is no image, audio or document"):
        attachment(tmp_path / "blob.bin")
