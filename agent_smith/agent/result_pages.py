"""Large tool results, paged: the model gets the head and a handle, nothing is silently lost.

With ``AgentConfig.tool_result_page_chars`` set, an agent keeps a
:class:`ResultPages` store and gives the model the built-in
``read_tool_result(handle, offset, length)`` tool. A result longer than
the page, or one cut to fit the context window
(:mod:`~agent_smith.agent.context_fit`) or to ``tool_result_max_bytes``,
reaches the model as its head followed by :data:`PAGE_NOTE`, which names
the handle (``result-<n>``, numbered per agent) and the offset to read on from; the whole result
stays in the store. Offsets and lengths count characters. The store lives
in memory with the agent, bounded by ``max_chars`` (the oldest results go
first); a handle it no longer holds is an error result the model reads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import ToolError
from ..messages import ToolMessage
from ..tools.base import Tool
from ..tools.function import make_tool

if TYPE_CHECKING:
    from .config import AgentConfig

#: The built-in tool's name.
READ_TOOL_RESULT = "read_tool_result"
#: Ends a paged result: how much the model saw and how to read on.
PAGE_NOTE = (
    "\n…[this is the first {shown} of {total} characters. Read the rest with "
    'read_tool_result(handle="{handle}", offset={shown}, length=...)]'
)
#: Characters one read returns when the model names no length.
DEFAULT_LENGTH = 4000


class ResultPages:
    """Whole tool results by handle, for ``read_tool_result`` (thread-safe; see the module doc)."""

    __slots__ = ("_chars", "_count", "_lock", "_results", "max_chars", "page_chars")

    def __init__(self, page_chars: int, *, max_chars: int = 8 * 1024 * 1024) -> None:
        self.page_chars = page_chars
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._results: OrderedDict[str, str] = OrderedDict()
        self._chars = 0
        self._count = 0  # handles are numbered: call ids may repeat across replies

    @classmethod
    def of(cls, config: AgentConfig, add_tool: Callable[[Tool], object]) -> ResultPages | None:
        """The store of an agent with ``config``, its tool added; None without paging."""
        if config.tool_result_page_chars is None:
            return None
        pages = cls(config.tool_result_page_chars)
        add_tool(pages.tool())
        return pages

    def page(self, message: ToolMessage, full: str) -> ToolMessage:
        """``message`` (what the model would get of ``full``) as a page with a handle, if cut.

        A message that shows all of ``full`` within a page is returned as it is.
        """
        if message.name == READ_TOOL_RESULT:  # a page is read, never paged again
            return message
        if message.content == full and len(full) <= self.page_chars:
            return message
        shown = min(_common_prefix(message.text, full), self.page_chars)
        handle = self._keep(full)
        note = PAGE_NOTE.format(shown=shown, total=len(full), handle=handle)
        return replace(message, content=full[:shown] + note)

    def read(self, handle: str, offset: int = 0, length: int = DEFAULT_LENGTH) -> str:
        """``length`` characters of the result ``handle`` from ``offset``, and where it ends."""
        with self._lock:
            full = self._results.get(handle)
        if full is None:
            raise ToolError(
                f"no tool result {handle!r} is kept (it was never cut, or it is too old)",
                tool_name=READ_TOOL_RESULT,
            )
        if offset < 0 or length < 1:
            raise ToolError("offset must be >= 0 and length >= 1", tool_name=READ_TOOL_RESULT)
        end = min(offset + length, len(full))
        part = full[offset:end]
        if end >= len(full):
            return f"{part}\n…[end of the result: characters {offset}-{end} of {len(full)}]"
        return f"{part}\n…[characters {offset}-{end} of {len(full)}; read on from offset={end}]"

    def tool(self) -> Tool:
        """The ``read_tool_result`` tool reading this store."""

        def read_tool_result(handle: str, offset: int = 0, length: int = DEFAULT_LENGTH) -> str:
            """Read part of a tool result that was cut: from ``offset``, ``length`` characters.

            Args:
                handle: The handle the cut result names.
                offset: The first character to read.
                length: How many characters to read.
            """
            return self.read(handle, offset, length)

        return make_tool(read_tool_result, read_only=True)

    def _keep(self, full: str) -> str:
        with self._lock:
            self._count += 1
            handle = f"result-{self._count}"
            self._results[handle] = full
            self._chars += len(full)
            while self._chars > self.max_chars and len(self._results) > 1:
                _, dropped = self._results.popitem(last=False)
                self._chars -= len(dropped)
            return handle


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (a binary search)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
