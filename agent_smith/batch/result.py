"""What a batch gives back per input: BatchResult, and ItemError for a failure.

Both are plain data that round-trip through JSON (``to_dict``/``from_dict``),
which is how the results sinks store them. A failure is a result like any
other, with ``error`` set to the failing exception's class name and message,
so a results file tells what went wrong without pickled exceptions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._internal.text import one_line
from ..base.parts import Content, content_from_json, content_to_json
from ..errors import ParseError, PartError
from ..messages import TokenUsage
from ..tools.convert import to_json_value

#: Longest error message kept in a result (a foreign exception can be huge).
MESSAGE_MAX_CHARS = 500


@dataclass(frozen=True)
class ItemError:
    """Why an input failed: the exception's class name and its one-line message."""

    type: str
    message: str

    @classmethod
    def of(cls, err: BaseException) -> ItemError:
        """The error of an exception, its message on one line and at most 500 characters."""
        message = one_line(str(err), MESSAGE_MAX_CHARS) or one_line(repr(err), MESSAGE_MAX_CHARS)
        return cls(type(err).__name__, message)

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"


@dataclass(frozen=True)
class BatchResult:
    """One input's outcome.

    ``content`` is the final answer's text and ``output`` its typed output in
    JSON form (``None`` without an ``output_type``); both are ``None`` when
    ``error`` is set. ``usage`` is the token usage of the last attempt,
    ``attempts`` how many runs it took (1 when the first succeeded) and
    ``seconds`` how long the last attempt took. ``details`` is what a run
    with its own task records beside (an eval's conversation), else ``None``.
    """

    id: str
    input: Content
    content: str | None = None
    output: Any = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: ItemError | None = None
    attempts: int = 1
    seconds: float = 0.0
    details: Any = None

    @property
    def ok(self) -> bool:
        """Whether the input succeeded."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this result (one line of a ``.jsonl`` results file); an input of
        parts is a list in the stored JSON form of a history (bytes as base64)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields["input"] = content_to_json(self.input)
        fields["usage"] = dataclasses.asdict(self.usage)
        fields["error"] = None if self.error is None else dataclasses.asdict(self.error)
        if self.details is None:  # a plain batch's lines stay as they were
            del fields["details"]
        return fields

    @classmethod
    def from_dict(cls, data: object) -> BatchResult:
        """Read a result back; ParseError if the object does not have the right shape."""
        if not isinstance(data, Mapping):
            raise ParseError("a batch result must be a JSON object")
        try:
            usage = data.get("usage") or {}
            error = data.get("error")
            result = cls(
                id=_typed(data["id"], str, "id"),
                input=content_from_json(data["input"], "input"),
                content=_typed(data.get("content"), (str, type(None)), "content"),
                output=data.get("output"),
                usage=TokenUsage(**usage),
                error=None if error is None else ItemError(str(error["type"]), error["message"]),
                attempts=_typed(data.get("attempts", 1), int, "attempts"),
                seconds=float(data.get("seconds", 0.0)),
                details=data.get("details"),
            )
        except (KeyError, TypeError, ValueError, PartError) as err:
            raise ParseError(f"a batch result has a missing or wrong field ({err})") from err
        return result


def _typed(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"{name}: {value!r}")
    return value


def json_ready(value: object) -> Any:
    """A typed output as JSON values: dataclasses and pydantic models become objects."""
    return to_json_value(value, default=str)
