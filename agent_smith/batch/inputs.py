"""A batch's inputs: each one an id and the user message the agent gets.

The id is what resume and deduplication go by, so it must be unique and
stable from run to run. An input is given as a :class:`BatchInput`, a mapping
with ``"id"`` and ``"input"`` (other keys, such as an expected answer, are
ignored), or a plain string, whose id is its position (``"0"``, ``"1"``, ...:
stable only while the order is). An input's message is a string or parts
(text, images, documents, audio); in a mapping, parts are a list in the
stored JSON form of a history (``{"type": "image", "media_type":
"image/png", "data": "<base64>"}`` or ``"url"``). An inputs file is JSON
Lines, one such object (or string) per line; blank lines are skipped.
A :class:`BatchInput` may also carry a ``payload``: plain data for a batch
run with its own task (an eval's case), which the default task ignores.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._internal import json_input
from ..base.named_file import read_named_file
from ..base.parts import Content, as_parts, content_from_json
from ..errors import ConfigError, ParseError, PartError


@dataclass(frozen=True)
class BatchInput:
    """One input of a batch: a unique id and the message sent to the agent (a string, or
    parts in order: strings among them become text parts).

    ``payload``: plain (picklable) data handed to the run's task with the
    input; the default task ignores it.
    """

    id: str
    input: Content
    payload: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.input, str):
            object.__setattr__(self, "input", as_parts(self.input))


def as_inputs(inputs: Iterable[BatchInput | Mapping[str, object] | str]) -> list[BatchInput]:
    """Check ``inputs`` and return them as BatchInputs; ConfigError on a bad or repeated id."""
    items: list[BatchInput] = []
    seen: set[str] = set()
    for position, raw in enumerate(inputs):
        item = _as_input(raw, position)
        if item.id in seen:
            raise _PositionedError(position, f"the id {item.id!r} is used twice")
        seen.add(item.id)
        items.append(item)
    return items


def read_inputs(path: str | os.PathLike[str]) -> list[BatchInput]:
    """Read a JSON Lines inputs file; ConfigError names the file and line of a problem."""
    name = os.fspath(path)
    lines = read_named_file(path, "inputs").splitlines()
    raw: list[object] = []
    numbers: list[int] = []  # the line of each input
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw.append(json_input.loads(line))
        except json.JSONDecodeError as err:
            raise ConfigError(f"{name}:{number}: not valid JSON ({err.msg})") from err
        numbers.append(number)
    try:
        return as_inputs(raw)  # type: ignore[arg-type]  # checked item by item
    except _PositionedError as err:
        raise ConfigError(f"{name}:{numbers[err.position]}: {err.reason}") from err


class _PositionedError(ConfigError):
    """A bad input at ``position`` (so a file reader can name the line instead)."""

    def __init__(self, position: int, reason: str) -> None:
        super().__init__(f"batch input {position}: {reason}")
        self.position = position
        self.reason = reason


def _as_input(raw: object, position: int) -> BatchInput:
    if isinstance(raw, BatchInput):
        item = raw
    elif isinstance(raw, str):
        item = BatchInput(str(position), raw)
    elif isinstance(raw, Mapping):
        if "id" not in raw or "input" not in raw:
            raise _PositionedError(position, 'an input needs the keys "id" and "input"')
        ident, text = raw["id"], raw["input"]
        if isinstance(ident, int) and not isinstance(ident, bool):
            ident = str(ident)
        if not isinstance(ident, str) or not isinstance(text, (str, list)):
            raise _PositionedError(
                position, '"id" must be a string (or integer), "input" a string or a list of parts'
            )
        try:
            item = BatchInput(ident, content_from_json(text, "input"))
        except (ParseError, PartError) as err:
            raise _PositionedError(position, str(err)) from err
    else:
        raise _PositionedError(
            position, f"an input must be a string or an object, got {type(raw).__name__}"
        )
    if not item.id:
        raise _PositionedError(position, "the id must not be empty")
    return item
