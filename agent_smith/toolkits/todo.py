"""The todo toolkit: a task list the model keeps for itself (add, check off, list).

Each agent gets its own list by getting its own :class:`TodoToolkit`. Every
call answers with the whole list, one item a line (``[ ] 2. write the
tests``, ``[x]`` once done), so the latest list is always in the
conversation: that is how it is kept with a session. Build the toolkit with
``history=`` (a session's or a memory's messages) and it takes the list up
where the last successful todo call left it; nothing else is stored.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from .._internal.text import one_line
from ..errors import ConfigError, ToolError
from ..messages import Message, ToolMessage
from ..tools.base import Tool
from ._tool import toolkit_tool

#: The names of the toolkit's tools (their results carry the list).
TODO_TOOLS = ("todo_add", "todo_check", "todo_list")
_ITEM = re.compile(r"^\[( |x)\] (\d+)\. (.*)$")


@dataclass(frozen=True)
class TodoPolicy:
    """How long the list and its items may get (so a list always fits in one result)."""

    max_items: int = 50
    max_item_chars: int = 300

    def __post_init__(self) -> None:
        if self.max_items <= 0 or self.max_item_chars <= 0:
            raise ConfigError("TodoPolicy: max_items and max_item_chars must be positive")


@dataclass(frozen=True)
class TodoItem:
    """One task: its number, its text, and whether it is done."""

    number: int
    text: str
    done: bool = False


class TodoToolkit:
    """``todo_add``, ``todo_check`` and ``todo_list`` over one list (thread-safe)."""

    def __init__(self, policy: TodoPolicy | None = None, *, history: Iterable[Message] = ()):
        self.policy = policy or TodoPolicy()
        self._lock = threading.Lock()
        self._items: list[TodoItem] = _restore(history)

    @property
    def items(self) -> tuple[TodoItem, ...]:
        """The list as it stands."""
        with self._lock:
            return tuple(self._items)

    def tools(self) -> list[Tool]:
        """The toolkit's tools; only ``todo_list`` is read only."""
        return [
            toolkit_tool(self.add, name="todo_add", read_only=False),
            toolkit_tool(self.check, name="todo_check", read_only=False),
            toolkit_tool(self.list, name="todo_list", read_only=True),
        ]

    def add(self, items: list[str]) -> str:
        """Add tasks to your todo list; answers with the whole list.

        Args:
            items: The tasks to add, one short sentence each.
        """
        texts = [one_line(text, self.policy.max_item_chars) for text in items if text.strip()]
        if not texts:
            raise ToolError("give at least one non-empty task", tool_name="todo_add")
        with self._lock:
            if len(self._items) + len(texts) > self.policy.max_items:
                raise ToolError(
                    f"the list holds at most {self.policy.max_items} tasks", tool_name="todo_add"
                )
            start = max((item.number for item in self._items), default=0) + 1
            self._items += [TodoItem(start + i, text) for i, text in enumerate(texts)]
            return _render(self._items)

    def check(self, numbers: list[int], done: bool = True) -> str:
        """Mark tasks of your todo list as done (or not done); answers with the whole list.

        Args:
            numbers: The numbers of the tasks.
            done: True to check them off, False to open them again.
        """
        with self._lock:
            known = {item.number for item in self._items}
            unknown = sorted(set(numbers) - known)
            if unknown or not numbers:
                raise ToolError(
                    f"no task numbered {unknown or numbers}; the list is:\n{_render(self._items)}",
                    tool_name="todo_check",
                )
            wanted = set(numbers)
            self._items = [
                TodoItem(item.number, item.text, done) if item.number in wanted else item
                for item in self._items
            ]
            return _render(self._items)

    def list(self) -> str:
        """Show your todo list."""
        with self._lock:
            return _render(self._items)


def _render(items: list[TodoItem]) -> str:
    if not items:
        return "todo list: empty"
    done = sum(item.done for item in items)
    lines = [f"[{'x' if item.done else ' '}] {item.number}. {item.text}" for item in items]
    return f"todo list: {done} of {len(items)} done\n" + "\n".join(lines)


def _restore(history: Iterable[Message]) -> list[TodoItem]:
    """The list as the last successful todo call in ``history`` showed it."""
    latest: ToolMessage | None = None
    for message in history:
        if (
            isinstance(message, ToolMessage)
            and message.name in TODO_TOOLS
            and not message.is_error
            and message.text.startswith("todo list:")
        ):
            latest = message
    if latest is None:
        return []
    items = []
    for line in latest.text.splitlines()[1:]:
        match = _ITEM.match(line)
        if match is not None:
            items.append(TodoItem(int(match.group(2)), match.group(3), match.group(1) == "x"))
    return items
