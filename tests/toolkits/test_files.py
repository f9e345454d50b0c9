"""The files toolkit on real files: reading, writing, editing, listing and globbing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_smith import ConfigError, FilesPolicy, FilesToolkit, ToolError
from agent_smith.tools.base import Said, ToolContext


@pytest.fixture
def files(root: Path) -> FilesToolkit:
    (root / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    return FilesToolkit(FilesPolicy(root=root))


def test_read_returns_the_whole_text(files: FilesToolkit) -> None:
    assert files.read("notes.txt") == "one\ntwo\nthree\nfour\n"


def test_line_ranges_are_one_based_and_inclusive(files: FilesToolkit) -> None:
    assert files.read("notes.txt", 2, 3) == "two\nthree\n\n…[lines 2-3; the file goes on]"
    assert files.read("notes.txt", 3) == "three\nfour\n"
    assert files.read("notes.txt", end_line=1) == "one\n\n…[lines 1-1; the file goes on]"


def test_bad_line_ranges_are_explained(files: FilesToolkit) -> None:
    with pytest.raises(ToolError, match="counts from 1"):
        files.read("notes.txt", 0)
    with pytest.raises(ToolError, match="before start_line"):
        files.read("notes.txt", 3, 2)
    with pytest.raises(ToolError, match="only 4 lines"):
        files.read("notes.txt", 9)


def test_a_large_file_is_cut_at_the_cap_with_a_marker(root: Path) -> None:
    (root / "big.txt").write_text("é" * 3000)
    text = FilesToolkit(FilesPolicy(root=root, max_read_bytes=1001)).read("big.txt")
    head, marker = text.split("\n…", 1)
    assert head == "é" * 500  # cut on a character boundary
    assert "the first 1001 of 6000 bytes" in marker


def test_a_binary_file_is_refused(root: Path) -> None:
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    files = FilesToolkit(FilesPolicy(root=root))
    with pytest.raises(ToolError, match="binary"):
        files.read("image.png")
    with pytest.raises(ToolError, match="binary"):
        files.read("image.png", 1, 1)


def test_a_missing_file_is_named(files: FilesToolkit) -> None:
    with pytest.raises(ToolError, match=r"no such file in the workspace: 'nope\.txt'"):
        files.read("nope.txt")


def test_write_creates_folders_and_replaces_whole_files(files: FilesToolkit, root: Path) -> None:
    assert files.write("a/b/new.txt", "hello") == "created a/b/new.txt (5 bytes)"
    assert (root / "a" / "b" / "new.txt").read_text() == "hello"
    assert files.write("a/b/new.txt", "bye") == "wrote a/b/new.txt (3 bytes)"
    assert (root / "a" / "b" / "new.txt").read_text() == "bye"
    assert sorted(os.listdir(root / "a" / "b")) == ["new.txt"]  # no temporary left behind


def test_write_keeps_the_permission_bits(files: FilesToolkit, root: Path) -> None:
    script = root / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    files.write("run.sh", "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


def test_write_refuses_content_over_the_cap_and_folders(root: Path) -> None:
    (root / "folder").mkdir()
    files = FilesToolkit(FilesPolicy(root=root, max_write_bytes=10))
    with pytest.raises(ToolError, match="over the 10-byte cap"):
        files.write("x.txt", "x" * 11)
    with pytest.raises(ToolError, match="not a regular file"):
        files.write("folder", "x")
    with pytest.raises(ToolError, match="workspace folder"):
        files.write(".", "x")


def test_edit_replaces_one_exact_unique_string(files: FilesToolkit, root: Path) -> None:
    assert files.edit("notes.txt", "three", "3") == "edited notes.txt at line 3"
    assert (root / "notes.txt").read_text() == "one\ntwo\n3\nfour\n"


def test_edit_says_clearly_when_the_string_is_absent(files: FilesToolkit) -> None:
    with pytest.raises(ToolError, match=r"old_text was not found in notes\.txt"):
        files.edit("notes.txt", "five", "5")


def test_edit_says_clearly_when_the_string_is_not_unique(files: FilesToolkit, root: Path) -> None:
    with pytest.raises(ToolError, match=r"old_text appears 2 times in notes\.txt"):
        files.edit("notes.txt", "t", "T")
    assert (root / "notes.txt").read_text() == "one\ntwo\nthree\nfour\n"


def test_edit_refuses_empty_and_identical_text(files: FilesToolkit) -> None:
    with pytest.raises(ToolError, match="empty"):
        files.edit("notes.txt", "", "x")
    with pytest.raises(ToolError, match="the same"):
        files.edit("notes.txt", "one", "one")


def test_list_shows_folders_with_a_slash_and_caps_entries(root: Path) -> None:
    (root / "b").mkdir()
    for name in ("a.txt", "c.txt", "d.txt"):
        (root / name).write_text("x")
    files = FilesToolkit(FilesPolicy(root=root, max_entries=2))
    assert files.list() == "a.txt\nb/\n…[and 2 more]"
    assert files.list("b") == "(the folder is empty)"


def test_glob_matches_names_at_any_depth_and_paths_with_double_star(root: Path) -> None:
    for path in ("a.py", "src/b.py", "src/x/c.py", "src/x/d.txt", ".git/e.py"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x")
    files = FilesToolkit(FilesPolicy(root=root))
    assert files.glob("*.py") == "a.py\nsrc/b.py\nsrc/x/c.py"  # .git is skipped
    assert files.glob("src/**/*.py") == "src/b.py\nsrc/x/c.py"
    assert files.glob("src/*.py") == "src/b.py"
    assert files.glob("*.py", "src/x") == "src/x/c.py"
    assert files.glob("*.rs") == "no file matches '*.rs'"


def test_tools_declare_what_they_only_read(root: Path) -> None:
    tools = {t.name: t.options for t in FilesToolkit(FilesPolicy(root=root)).tools()}
    assert {name: o.read_only for name, o in tools.items()} == {
        "read_file": True,
        "list_files": True,
        "glob_files": True,
        "write_file": False,
        "edit_file": False,
    }
    assert not any(o.requires_approval for o in tools.values())


def test_a_read_only_policy_offers_no_writing_tool_and_writes_can_ask(root: Path) -> None:
    names = [t.name for t in FilesToolkit(FilesPolicy(root=root, writable=False)).tools()]
    assert names == ["read_file", "list_files", "glob_files"]
    asking = FilesToolkit(FilesPolicy(root=root, approve_writes=True)).tools()
    assert [t.name for t in asking if t.options.requires_approval] == ["write_file", "edit_file"]


def test_the_tools_ignore_arguments_they_do_not_name(
    files: FilesToolkit, context: ToolContext
) -> None:
    read_file = files.tools()[0]
    result = read_file.invoke({"path": "notes.txt", "content": "stray"}, context)
    assert (result.is_error, result.content) == (False, "one\ntwo\nthree\nfour\n")


def test_a_policy_needs_an_existing_root_and_positive_limits(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a directory"):
        FilesToolkit(FilesPolicy(root=tmp_path / "missing"))
    with pytest.raises(ConfigError, match="max_read_bytes"):
        FilesPolicy(root=tmp_path, max_read_bytes=0)


def test_a_line_longer_than_the_cap_counts_as_one_line(root: Path) -> None:
    (root / "wide.txt").write_text("x" * 5000 + "\nsecond\nthird\n")
    files = FilesToolkit(FilesPolicy(root=root, max_read_bytes=100))
    assert files.read("wide.txt", 2, 3) == "second\nthird\n"
    assert files.read("wide.txt", 1, 1) == "x" * 100 + "\n…[line 1 is longer than 100 bytes; cut]"


def test_a_path_is_grounded_when_it_exists_as_the_tool_needs_or_the_user_named_it(
    root: Path,
) -> None:
    (root / "notes.txt").write_text("room B12\n", encoding="utf-8")
    (root / "todo").mkdir()
    tools = {t.name: t for t in FilesToolkit(FilesPolicy(root=root)).tools()}
    read, listing = tools["read_file"], tools["list_files"]
    nothing = Said("Which room is it in?", "room B12")
    assert read.ungrounded({"path": "notes.txt"}, nothing) is None
    assert read.ungrounded({"path": "todo"}, nothing) is not None  # a folder is no file
    assert read.ungrounded({"path": "gone.txt"}, nothing) is not None
    assert read.ungrounded({"path": "gone.txt"}, Said("Read gone.txt", "")) is None
    assert listing.ungrounded({}, nothing) is None  # the workspace itself
    assert listing.ungrounded({"path": "todo"}, nothing) is None
    assert listing.ungrounded({"path": "B12"}, nothing) is not None
    assert listing.ungrounded({"path": "/home/user/documents"}, nothing) is not None
    assert listing.ungrounded({"path": "../.."}, nothing) is not None
