"""The files toolkit: read, write, edit, list and glob, confined to one root.

Every path goes through :class:`~agent_smith.toolkits.workspace.Workspace`
(no ``..``, nothing outside the root, no link followed out, no link swapped
in, no write through a hard link). Reads are capped in bytes and refuse
binary files (a NUL byte in what is read); line ranges are 1-based and
inclusive. ``edit_file`` replaces one exact, unique piece of text, and says
so clearly when the text is absent or appears more than once. A file that
grows while it is read is read up to the cap and no further.

The methods raise :class:`~agent_smith.errors.ToolError`; as tools
(:meth:`FilesToolkit.tools`) the model reads those as error results.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from .._internal.text import utf8_prefix
from ..errors import ConfigError, ToolError
from ..tools.base import JsonObject, Said, Tool
from ._tool import Grounding, toolkit_tool
from .globs import glob_matcher
from .workspace import DEFAULT_SKIP_DIRS, Workspace, WorkspaceChanges

# How much of a file's start is checked for a NUL byte before a ranged read.
_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class FilesPolicy:
    """What the files toolkit may do: its root and its limits.

    ``max_read_bytes`` caps what one read returns; ``max_write_bytes`` what
    one write or edit may produce; ``max_scan_bytes`` how far a line-range
    read scans; ``max_entries`` what a listing or glob shows. ``writable``:
    offer ``write_file`` and ``edit_file`` at all; ``approve_writes``: each
    write or edit waits for an approval. ``allow_hard_links``: read files
    with several hard links (never written).
    """

    root: str | os.PathLike[str]
    max_read_bytes: int = 256 * 1024
    max_write_bytes: int = 1024 * 1024
    max_scan_bytes: int = 64 * 1024 * 1024
    max_entries: int = 500
    writable: bool = True
    approve_writes: bool = False
    allow_hard_links: bool = False
    skip_dirs: frozenset[str] = field(default=DEFAULT_SKIP_DIRS)

    def __post_init__(self) -> None:
        for name in ("max_read_bytes", "max_write_bytes", "max_scan_bytes", "max_entries"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"FilesPolicy.{name} must be positive")


class FilesToolkit:
    """Read, write, edit, list and glob files below ``policy.root``.

    ``tools()`` gives ``read_file``, ``list_files`` and ``glob_files`` (read
    only) and, when the policy is writable, ``write_file`` and ``edit_file``.
    ``changes``: told of each file written or edited (the search toolkit of
    the same agent listens).
    """

    def __init__(self, policy: FilesPolicy, *, changes: WorkspaceChanges | None = None) -> None:
        self.policy = policy
        self.workspace = Workspace(
            policy.root,
            allow_hard_links=policy.allow_hard_links,
            skip_dirs=policy.skip_dirs,
            changes=changes,
        )

    def tools(self) -> list[Tool]:
        """The toolkit's tools, built on this policy."""
        tools = [
            toolkit_tool(
                self.read,
                name="read_file",
                read_only=True,
                grounding=_existing(self.workspace, os.path.isfile),
            ),
            toolkit_tool(
                self.list,
                name="list_files",
                read_only=True,
                grounding=_existing(self.workspace, os.path.isdir, default="."),
            ),
            toolkit_tool(self.glob, name="glob_files", read_only=True),
        ]
        if self.policy.writable:
            approve = self.policy.approve_writes
            tools += [
                toolkit_tool(
                    self.write, name="write_file", read_only=False, requires_approval=approve
                ),
                toolkit_tool(
                    self.edit, name="edit_file", read_only=False, requires_approval=approve
                ),
            ]
        return tools

    def read(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        """Read a text file in the workspace. Call it whenever you need to know what a file says.

        Args:
            path: The file's path, relative to the workspace.
            start_line: First line to read (1-based); the file's start when left out.
            end_line: Last line to read (inclusive); the file's end when left out.
        """
        tool = "read_file"
        if start_line is not None and start_line < 1:
            raise ToolError("start_line counts from 1", tool_name=tool)
        if end_line is not None and end_line < (start_line or 1):
            raise ToolError("end_line must not be before start_line", tool_name=tool)
        cap = self.policy.max_read_bytes
        fd, info = self.workspace.open_read(path, tool=tool)
        with os.fdopen(fd, "rb") as handle:
            if start_line is None and end_line is None:
                data = handle.read(cap + 1)
                _refuse_binary(data, path, tool)
                text = utf8_prefix(data, cap).decode("utf-8", errors="replace")
                if len(data) > cap:
                    text += (
                        f"\n…[truncated: the first {cap} of {max(info.st_size, cap + 1)} bytes; "
                        "read on with start_line and end_line]"
                    )
                return text
            _refuse_binary(handle.peek(_SNIFF_BYTES)[:_SNIFF_BYTES], path, tool)
            return self._read_lines(handle, start_line or 1, end_line)

    def _read_lines(self, handle: BinaryIO, first: int, last: int | None) -> str:
        cap, budget = self.policy.max_read_bytes, self.policy.max_scan_bytes
        out: list[bytes] = []
        size = 0
        number = 0
        more = False
        while budget > 0:
            line = handle.readline(min(budget, cap + 1))
            if not line:
                break
            budget -= len(line)
            if not line.endswith(b"\n"):  # a line longer than the cap: pass over its rest
                budget = _skip_line(handle, budget)
            number += 1
            if number < first:
                continue
            if (last is not None and number > last) or size + len(line) > cap:
                if not out and number == first:  # the first line alone is over the cap
                    text = utf8_prefix(line, cap).decode("utf-8", errors="replace")
                    return f"{text}\n…[line {first} is longer than {cap} bytes; cut]"
                more = True
                break
            out.append(line)
            size += len(line)
        else:
            more = True
        if number < first:
            raise ToolError(f"the file has only {number} lines", tool_name="read_file")
        text = b"".join(out).decode("utf-8", errors="replace")
        shown = f"lines {first}-{first + len(out) - 1}"
        return text + (f"\n…[{shown}; the file goes on]" if more else "")

    def write(self, path: str, content: str) -> str:
        """Write a UTF-8 text file in the workspace, creating it or replacing all of it.

        Args:
            path: The file's path, relative to the workspace; missing folders are made.
            content: The whole new text of the file.
        """
        tool = "write_file"
        data = content.encode("utf-8")
        if len(data) > self.policy.max_write_bytes:
            raise ToolError(
                f"the content is {len(data)} bytes, over the "
                f"{self.policy.max_write_bytes}-byte cap",
                tool_name=tool,
            )
        created = self.workspace.write(path, data, tool=tool)
        return f"{'created' if created else 'wrote'} {path} ({len(data)} bytes)"

    def edit(self, path: str, old_text: str, new_text: str) -> str:
        """Replace one exact piece of a text file with new text.

        Args:
            path: The file's path, relative to the workspace.
            old_text: The exact text to replace, whitespace included; it must appear once.
            new_text: The text to put in its place.
        """
        tool = "edit_file"
        if not old_text:
            raise ToolError("old_text is empty; give the exact text to replace", tool_name=tool)
        if old_text == new_text:
            raise ToolError("old_text and new_text are the same; nothing to do", tool_name=tool)
        cap = self.policy.max_write_bytes
        fd, _info = self.workspace.open_read(path, tool=tool)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(cap + 1)
        if len(data) > cap:
            raise ToolError(f"{path} is larger than {cap} bytes; not edited", tool_name=tool)
        _refuse_binary(data, path, tool)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ToolError(f"{path} is not UTF-8 text; not edited", tool_name=tool) from err
        count = text.count(old_text)
        if count == 0:
            raise ToolError(
                f"old_text was not found in {path}; read the file and copy the exact text, "
                "whitespace included",
                tool_name=tool,
            )
        if count > 1:
            raise ToolError(
                f"old_text appears {count} times in {path}; include more of the lines around "
                "it so that it appears once",
                tool_name=tool,
            )
        at = text.index(old_text)
        updated = text[:at] + new_text + text[at + len(old_text) :]
        encoded = updated.encode("utf-8")
        if len(encoded) > cap:
            raise ToolError(
                f"the edited file would be over {cap} bytes; not edited", tool_name=tool
            )
        self.workspace.write(path, encoded, tool=tool, create_dirs=False)
        return f"edited {path} at line {text.count(chr(10), 0, at) + 1}"

    def list(self, path: str = ".") -> str:
        """List a folder of the workspace: one name per line, folders ending in '/'.

        Args:
            path: The folder, relative to the workspace; the workspace itself when left out.
        """
        tool = "list_files"
        fd = self.workspace.open_dir(path, tool=tool)
        try:
            with os.scandir(fd) as scan:
                names = sorted(
                    entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "")
                    for entry in scan
                )
        finally:
            os.close(fd)
        return _capped(names, self.policy.max_entries, "(the folder is empty)")

    def glob(self, pattern: str, path: str = ".") -> str:
        """Find files whose name or path matches a glob pattern.

        Args:
            pattern: The glob; '*' stays within a folder, '**' spans folders, and a
                pattern without '/' matches file names at any depth.
            path: The folder to search, relative to the workspace.
        """
        tool = "glob_files"
        matches = glob_matcher(pattern, tool=tool)
        base = self.workspace.resolve(path, tool=tool)
        offset = 0 if base == self.workspace.root else len(self.workspace.relative(base)) + 1
        found = [
            entry.path
            for entry in self.workspace.walk(path, tool=tool)
            if matches(entry.path[offset:])
        ]
        return _capped(found, self.policy.max_entries, f"no file matches {pattern!r}")


def _skip_line(handle: BinaryIO, budget: int) -> int:
    """Read to the end of the current line (within ``budget``); the budget left."""
    while budget > 0:
        rest = handle.readline(min(budget, 65536))
        budget -= len(rest)
        if not rest or rest.endswith(b"\n"):
            break
    return budget


def _refuse_binary(data: bytes, path: str, tool: str) -> None:
    if b"\0" in data:
        raise ToolError(f"{path} looks like a binary file and is not read", tool_name=tool)


def _capped(lines: list[str], limit: int, empty: str) -> str:
    if not lines:
        return empty
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit]) + f"\n…[and {len(lines) - limit} more]"


def _existing(workspace: Workspace, kind: Callable[[str], bool], *, default: str = "") -> Grounding:
    """The grounding of a ``path`` argument: it exists in ``workspace`` (a file or folder, as
    ``kind`` checks), or the user named it (a file to be told is missing)."""

    def ungrounded(args: JsonObject, said: Said) -> str | None:
        path = args.get("path", default)
        if not isinstance(path, str):
            return None  # the arguments' check says what is wrong
        try:
            if kind(workspace.resolve(path, tool="grounding")):
                return None
        except ToolError:
            pass
        if path.strip() and path in said.user:
            return None
        return f"{path!r} is nowhere in the workspace and the user did not name it"

    return ungrounded
