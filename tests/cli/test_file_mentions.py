"""The REPL's nudge: a line naming files in the sandbox asks for them to be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_smith.cli.file_mentions import mention_files
from agent_smith.toolkits import Workspace


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
