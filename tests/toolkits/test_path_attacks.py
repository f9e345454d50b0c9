"""The attack battery for paths: one test per way out of the workspace, on real files.

Each attack is tried against the files toolkit (read, write, edit, list,
glob) and must fail with an error the model reads, leaving everything
outside the workspace untouched.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_smith import FilesPolicy, FilesToolkit, ToolError
from agent_smith.toolkits.workspace import Workspace

SECRET = "the outside secret\n"


@pytest.fixture
def files(root: Path) -> FilesToolkit:
    (root / "sub").mkdir()
    (root / "sub" / "inside.txt").write_text("inside\n")
    return FilesToolkit(FilesPolicy(root=root))


def _every_operation(files: FilesToolkit, path: str) -> list[Callable[[], object]]:
    return [
        lambda: files.read(path),
        lambda: files.read(path, 1, 2),
        lambda: files.write(path, "pwned"),
        lambda: files.edit(path, "the", "pwned"),
        lambda: files.list(path),
        lambda: files.glob("*", path),
    ]


@pytest.mark.parametrize(
    "path",
    [
        "..",
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "sub/..",
        "./../outside/secret.txt",
        "sub/inside.txt/..",
        "sub/../sub/inside.txt",  # stays inside, but '..' is refused wherever it is
        "new/../../outside/secret.txt",  # '..' after a folder that does not exist
    ],
)
def test_dot_dot_is_refused_in_every_position(
    files: FilesToolkit, outside: Path, path: str
) -> None:
    for operation in _every_operation(files, path):
        with pytest.raises(ToolError, match=r"'\.\.' is not allowed"):
            operation()
    assert (outside / "secret.txt").read_text() == SECRET


def test_an_absolute_path_outside_is_refused_and_one_inside_is_read(
    files: FilesToolkit, root: Path, outside: Path
) -> None:
    for operation in _every_operation(files, str(outside / "secret.txt")):
        with pytest.raises(ToolError, match="outside the workspace"):
            operation()
    with pytest.raises(ToolError, match="outside the workspace"):
        files.read("/etc/passwd")
    assert files.read(str(root / "sub" / "inside.txt")) == "inside\n"
    assert (outside / "secret.txt").read_text() == SECRET


def test_a_symlinked_file_pointing_out_is_neither_read_nor_written_through(
    files: FilesToolkit, root: Path, outside: Path
) -> None:
    (root / "link.txt").symlink_to(outside / "secret.txt")
    for operation in _every_operation(files, "link.txt"):
        with pytest.raises(ToolError, match="outside the workspace"):
            operation()
    assert (outside / "secret.txt").read_text() == SECRET


def test_a_symlinked_folder_pointing_out_is_not_entered(
    files: FilesToolkit, root: Path, outside: Path
) -> None:
    (root / "door").symlink_to(outside)
    for operation in _every_operation(files, "door/secret.txt"):
        with pytest.raises(ToolError, match="outside the workspace"):
            operation()
    with pytest.raises(ToolError, match="outside the workspace"):
        files.write("door/new.txt", "pwned")
    assert not (outside / "new.txt").exists()
    # Walks never follow it either.
    assert "secret" not in files.glob("*.txt")


def test_a_dangling_symlink_pointing_out_is_not_created_through(
    files: FilesToolkit, root: Path, outside: Path
) -> None:
    (root / "trap.txt").symlink_to(outside / "created.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        files.write("trap.txt", "pwned")
    assert not (outside / "created.txt").exists()


def test_a_symlink_inside_the_workspace_is_followed(files: FilesToolkit, root: Path) -> None:
    (root / "alias").symlink_to(root / "sub")
    assert files.read("alias/inside.txt") == "inside\n"


def _swap_after_check(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> list[str]:
    """Make the next path check run ``swap`` right after it passed (a won race)."""
    checked: list[str] = []
    real_resolve = Workspace.resolve

    def resolve_then_swap(self: Workspace, path: str, *, tool: str) -> str:
        real = real_resolve(self, path, tool=tool)
        if not checked:
            checked.append(real)
            swap()
        return real

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)
    return checked


def _folder_for_a_link(folder: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        folder.rename(folder.with_name(folder.name + ".old"))
        folder.symlink_to(target)

    return swap


def _file_for_a_link(file: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        file.unlink()
        file.symlink_to(target)

    return swap


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(
    files: FilesToolkit, root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "sub" / "secret.txt").write_text("inside copy\n")

    swap = _folder_for_a_link(root / "sub", outside)
    checked = _swap_after_check(monkeypatch, swap)
    with pytest.raises(ToolError, match="changed into a link"):
        files.read("sub/secret.txt")
    assert checked  # the check really passed before the swap


def test_a_file_swapped_for_a_symlink_after_the_check_is_not_read(
    files: FilesToolkit, root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    swap = _file_for_a_link(root / "sub" / "inside.txt", outside / "secret.txt")
    _swap_after_check(monkeypatch, swap)
    with pytest.raises(ToolError, match="changed into a link"):
        files.read("sub/inside.txt")


def test_a_write_after_a_folder_swap_lands_nowhere_outside(
    files: FilesToolkit, root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    swap = _folder_for_a_link(root / "sub", outside)
    _swap_after_check(monkeypatch, swap)
    with pytest.raises(ToolError, match="changed into a link"):
        files.write("sub/secret.txt", "pwned")
    assert (outside / "secret.txt").read_text() == SECRET


def test_a_file_swapped_for_a_symlink_before_a_write_is_replaced_not_written_through(
    files: FilesToolkit, root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    swap = _file_for_a_link(root / "sub" / "inside.txt", outside / "secret.txt")
    _swap_after_check(monkeypatch, swap)
    with pytest.raises(ToolError, match="symbolic link"):
        files.write("sub/inside.txt", "pwned")
    assert (outside / "secret.txt").read_text() == SECRET


def test_a_hard_link_to_an_outside_file_is_neither_read_nor_written(
    files: FilesToolkit, root: Path, outside: Path
) -> None:
    os.link(outside / "secret.txt", root / "hard.txt")
    for operation in _every_operation(files, "hard.txt")[:4]:
        with pytest.raises(ToolError, match="hard links"):
            operation()
    assert (outside / "secret.txt").read_text() == SECRET
    assert "hard.txt" not in files.glob("*.txt")


def test_a_hard_link_is_read_when_allowed_but_never_written(root: Path, outside: Path) -> None:
    os.link(outside / "secret.txt", root / "hard.txt")
    files = FilesToolkit(FilesPolicy(root=root, allow_hard_links=True))
    assert files.read("hard.txt") == SECRET
    with pytest.raises(ToolError, match="hard links"):
        files.write("hard.txt", "pwned")
    with pytest.raises(ToolError, match="hard links"):
        files.edit("hard.txt", "secret", "pwned")
    assert (outside / "secret.txt").read_text() == SECRET


@pytest.mark.parametrize("path", ["a\0b", "sub/inside.txt\0.png", "\0"])
def test_a_nul_byte_is_refused(files: FilesToolkit, path: str) -> None:
    for operation in _every_operation(files, path):
        with pytest.raises(ToolError, match="NUL byte"):
            operation()


def test_over_long_names_and_paths_are_refused_before_any_io(files: FilesToolkit) -> None:
    for operation in _every_operation(files, "a" * 256):
        with pytest.raises(ToolError, match="longer than 255 bytes"):
            operation()
    for operation in _every_operation(files, "/".join(["a" * 200] * 25)):
        with pytest.raises(ToolError, match="longer than 4096 bytes"):
            operation()


def test_an_empty_path_is_refused(files: FilesToolkit) -> None:
    with pytest.raises(ToolError, match="empty"):
        files.read("")


def test_a_fifo_is_refused_without_hanging(files: FilesToolkit, root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        files.read("pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        files.write("pipe", "x")


def test_a_file_that_grows_while_read_is_read_up_to_the_cap(root: Path) -> None:
    files = FilesToolkit(FilesPolicy(root=root, max_read_bytes=4096, max_scan_bytes=64 * 1024))
    growing = root / "growing.log"
    growing.write_text("start\n")
    stop = threading.Event()
    grew = threading.Event()

    def writer() -> None:
        with open(growing, "a") as handle:
            while not stop.is_set():
                handle.write("more\n" * 1000)
                handle.flush()
                grew.set()

    thread = threading.Thread(target=writer, name="test-writer")
    thread.start()
    try:
        assert grew.wait(10)
        whole = files.read("growing.log")
        ranged = files.read("growing.log", 1, 10**9)
    finally:
        stop.set()
        thread.join(10)
    assert len(whole.encode()) < 4096 + 200 and "truncated" in whole
    assert len(ranged.encode()) < 4096 + 200 and "the file goes on" in ranged


def test_a_refusal_reaches_the_model_as_an_error_result(
    files: FilesToolkit, context: object
) -> None:
    read_file = next(t for t in files.tools() if t.name == "read_file")
    result = read_file.invoke({"path": "../outside/secret.txt"}, context)  # type: ignore[arg-type]
    assert result.is_error
    assert "'..' is not allowed" in result.content
