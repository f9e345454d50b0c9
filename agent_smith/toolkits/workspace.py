"""The workspace: one root directory that file, search and shell tools never leave.

A path from the model is checked before anything is opened (Kova's
containment): it must be a non-empty string without NUL bytes, within the
system's name and path lengths, with no ``..`` component (refused in every
position, so what a path means never depends on which of its parts exist).
Relative paths start at the root; absolute ones must lie inside it. The
deepest existing ancestor is then canonicalised with ``os.path.realpath``
(symbolic links followed, dangling ones too) and the result must be the root
or below it, compared with a trailing separator (``/ws2`` is not inside
``/ws``).

A check is not an open: a directory could be swapped for a symbolic link
between the two. So files are opened by walking the checked path from the
root's own descriptor one component at a time with ``O_NOFOLLOW``: the
checked path holds no links, so a link met on that walk was swapped in, and
the open fails instead of following it. Writes go to a fresh file in the same
directory that then replaces the target (``os.replace`` on directory
descriptors), so a write never goes through a link either, and a reader
never sees half a file. A file with more than one hard link may also live
outside the root: it is never written, and only read when allowed.

POSIX only (``dir_fd``, ``O_NOFOLLOW``, ``O_DIRECTORY``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..errors import ConfigError, ToolError

#: Folders the tree walks (list, glob, grep, the index) skip by default.
DEFAULT_SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".tox"}
)

# Longest name and path the kernel takes (Linux NAME_MAX, PATH_MAX).
_NAME_MAX = 255
_PATH_MAX = 4096
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO for reading must not hang (it is refused below).
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_SWAPPED = (errno.ELOOP, errno.ENOTDIR)


class FileEntry(NamedTuple):
    """A regular file met on a tree walk: its path relative to the root, and its stat.

    (A named tuple: a walk makes one per file, and a tuple is the cheapest.)
    """

    path: str
    info: os.stat_result
    dir_fd: int
    name: str

    def read(self, limit: int) -> bytes:
        """Up to ``limit`` bytes of the file (during the walk only); OSError if it changed."""
        fd = os.open(self.name, _READ_FLAGS, dir_fd=self.dir_fd)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            return handle.read(limit)


class WorkspaceChanges:
    """How the toolkits of one workspace tell each other what they changed.

    The files toolkit reports each file it writes, the shell toolkit each
    command it ran (which may have written or deleted anything); the search
    toolkit listens, so its index reads the agent's own changes on the next
    query instead of after its refresh interval. Give one to the toolkits of
    one agent (``changes=``); it is theirs alone, nothing global.
    """

    __slots__ = ("_listeners",)

    def __init__(self) -> None:
        self._listeners: tuple[Callable[[str | None], object], ...] = ()

    def listen(self, listener: Callable[[str | None], object]) -> None:
        """Call ``listener`` with each change: a file's canonical path, or None (anything)."""
        self._listeners = (*self._listeners, listener)

    def changed(self, real: str | None) -> None:
        """The file ``real`` (canonical) changed; None: anything below the root may have."""
        for listener in self._listeners:
            listener(real)


class Workspace:
    """The root directory every path is confined to, and safe ways to open below it.

    ``allow_hard_links``: read files that have more than one hard link (they
    may be the same file as one outside the root; writing them is always
    refused). ``skip_dirs``: folder names tree walks do not enter.
    ``changes``: told of every file :meth:`write` replaces or creates (a
    workspace given none has one of its own that nobody listens to).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        allow_hard_links: bool = False,
        skip_dirs: frozenset[str] = DEFAULT_SKIP_DIRS,
        changes: WorkspaceChanges | None = None,
    ) -> None:
        real = os.path.realpath(os.fspath(root))
        if not os.path.isdir(real):
            raise ConfigError(f"workspace root {os.fspath(root)!r} is not a directory")
        self.root = real
        self.allow_hard_links = allow_hard_links
        self.skip_dirs = frozenset(skip_dirs)
        self.changes = changes if changes is not None else WorkspaceChanges()
        self._prefix = real if real.endswith(os.sep) else real + os.sep

    def __repr__(self) -> str:
        return f"Workspace({self.root!r})"

    def contains(self, real: str) -> bool:
        """Whether the canonical path ``real`` is the root or below it."""
        return real == self.root or real.startswith(self._prefix)

    def resolve(self, path: str, *, tool: str) -> str:
        """The canonical absolute path ``path`` names inside the root; ToolError if it escapes.

        The path need not exist (a file about to be written); see the module doc.
        """
        if not isinstance(path, str) or not path:
            raise ToolError("the path is empty", tool_name=tool)
        if "\0" in path:
            raise ToolError("the path contains a NUL byte", tool_name=tool)
        encoded = path.encode("utf-8", "surrogateescape")
        if len(encoded) > _PATH_MAX:
            raise ToolError(f"the path is longer than {_PATH_MAX} bytes", tool_name=tool)
        parts = path.split("/")
        if ".." in parts:
            raise ToolError(
                f"'..' is not allowed in paths ({_show(path)}); give a path inside the workspace",
                tool_name=tool,
            )
        if any(len(part.encode("utf-8", "surrogateescape")) > _NAME_MAX for part in parts):
            raise ToolError(f"a name in the path is longer than {_NAME_MAX} bytes", tool_name=tool)
        candidate = path if os.path.isabs(path) else os.path.join(self.root, path)
        try:
            real = os.path.realpath(candidate)
        except (OSError, ValueError) as err:
            raise ToolError(f"cannot resolve {_show(path)}: {err}", tool_name=tool) from err
        if not self.contains(real):
            raise ToolError(
                f"{_show(path)} leads outside the workspace and is refused", tool_name=tool
            )
        return real

    def relative(self, real: str) -> str:
        """``real`` (inside the root) as a path relative to it; ``.`` for the root."""
        return os.path.relpath(real, self.root)

    def open_read(self, path: str, *, tool: str) -> tuple[int, os.stat_result]:
        """A read-only descriptor on the regular file ``path`` and its stat; the caller closes it.

        ToolError if the path escapes, is not a regular file, was swapped for
        a link after the check, or has several hard links (unless allowed).
        """
        real = self.resolve(path, tool=tool)
        fd = self._open_beneath(real, _READ_FLAGS, path=path, tool=tool)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"{_show(path)} is not a regular file", tool_name=tool)
            if info.st_nlink > 1 and not self.allow_hard_links:
                raise ToolError(
                    f"{_show(path)} has {info.st_nlink} hard links and may be a file outside "
                    "the workspace; refused",
                    tool_name=tool,
                )
        except BaseException:
            os.close(fd)
            raise
        return fd, info

    def write(self, path: str, data: bytes, *, tool: str, create_dirs: bool = True) -> bool:
        """Replace (or create) the regular file ``path`` with ``data``; True if it was created.

        Missing folders are made when ``create_dirs``. The target keeps its
        permission bits. ToolError if the path escapes, names a link, a
        folder or another non-regular file, or a file with several hard links.
        """
        real = self.resolve(path, tool=tool)
        if real == self.root:
            raise ToolError(f"{_show(path)} is the workspace folder, not a file", tool_name=tool)
        folder, name = os.path.split(real)
        dir_fd = self._open_dir(folder, path=path, tool=tool, create=create_dirs)
        try:
            created = _replace(dir_fd, name, data, path=path, tool=tool)
        finally:
            os.close(dir_fd)
        self.changes.changed(real)
        return created

    def walk(self, path: str = ".", *, tool: str) -> Iterator[FileEntry]:
        """Regular files below the folder ``path``, a folder's files before its sub-folders.

        Links are never followed and ``skip_dirs`` never entered; a file with
        several hard links is skipped unless allowed; unreadable folders are
        passed over. Each folder is opened like a file's folder (no link on
        the way), and its entries can be read (:meth:`FileEntry.read`) only
        while the walk is at them.
        """
        real = self.resolve(path, tool=tool)
        if not os.path.isdir(real):
            raise ToolError(f"{_show(path)} is not a folder", tool_name=tool)
        pending = [real]
        while pending:
            folder = pending.pop()
            try:
                dir_fd = self._open_dir(folder, path=path, tool=tool, create=False)
            except ToolError:
                if folder == real:
                    raise
                continue
            base = "" if folder == self.root else folder[len(self._prefix) :] + "/"
            subfolders: list[str] = []
            try:
                with os.scandir(dir_fd) as scan:
                    entries = sorted(scan, key=lambda e: e.name)
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in self.skip_dirs:
                            subfolders.append(os.path.join(folder, entry.name))
                    elif entry.is_file(follow_symlinks=False):
                        info = entry.stat(follow_symlinks=False)
                        if info.st_nlink == 1 or self.allow_hard_links:
                            yield FileEntry(base + entry.name, info, dir_fd, entry.name)
            except OSError:
                pass
            finally:
                os.close(dir_fd)
            pending.extend(reversed(subfolders))

    def open_dir(self, path: str, *, tool: str) -> int:
        """A descriptor on the folder ``path`` (for ``os.scandir``); the caller closes it."""
        real = self.resolve(path, tool=tool)
        return self._open_dir(real, path=path, tool=tool, create=False)

    def _open_beneath(self, real: str, flags: int, *, path: str, tool: str) -> int:
        folder, name = os.path.split(real)
        if real == self.root:
            raise ToolError(f"{_show(path)} is the workspace folder, not a file", tool_name=tool)
        dir_fd = self._open_dir(folder, path=path, tool=tool, create=False)
        try:
            return os.open(name, flags, dir_fd=dir_fd)
        except OSError as err:
            raise _open_error(err, path, tool) from err
        finally:
            os.close(dir_fd)

    def _open_dir(self, folder: str, *, path: str, tool: str, create: bool) -> int:
        """A descriptor on ``folder`` (canonical, inside the root), walked without links."""
        parts = [] if folder == self.root else folder[len(self._prefix) :].split(os.sep)
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for part in parts:
                try:
                    next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o777, dir_fd=fd)
                    next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = next_fd
        except OSError as err:
            os.close(fd)
            raise _open_error(err, path, tool) from err
        return fd


def _replace(dir_fd: int, name: str, data: bytes, *, path: str, tool: str) -> bool:
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        if stat.S_ISLNK(existing.st_mode):
            raise ToolError(f"{_show(path)} is a symbolic link and is not written", tool_name=tool)
        if not stat.S_ISREG(existing.st_mode):
            raise ToolError(f"{_show(path)} is not a regular file", tool_name=tool)
        if existing.st_nlink > 1:
            raise ToolError(
                f"{_show(path)} has {existing.st_nlink} hard links and is not written "
                "(a write would change the other names too)",
                tool_name=tool,
            )
    temp = f".tmp-{secrets.token_hex(8)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o644
    try:
        fd = os.open(temp, flags, mode, dir_fd=dir_fd)
        try:
            os.fchmod(fd, mode)  # the umask narrowed the mode given to open
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise ToolError(f"cannot write {_show(path)}: {err.strerror}", tool_name=tool) from err
    return existing is None


def _open_error(err: OSError, path: str, tool: str) -> ToolError:
    if err.errno in _SWAPPED:
        return ToolError(
            f"{_show(path)} changed into a link or non-folder while being opened; refused",
            tool_name=tool,
        )
    if err.errno == errno.ENOENT:
        return ToolError(f"no such file in the workspace: {_show(path)}", tool_name=tool)
    return ToolError(f"cannot open {_show(path)}: {err.strerror}", tool_name=tool)


def _show(path: str, limit: int = 120) -> str:
    """``path`` quoted for a message, shortened if very long."""
    return repr(path if len(path) <= limit else path[: limit - 1] + "…")
