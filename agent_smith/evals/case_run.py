"""CaseRun: what one run of one case produced, read back from the batch's result.

The worker records the turn's messages (after the case's history) and how
many model replies it took beside the batch result's answer, usage, time
and error (:func:`details`); :meth:`CaseRun.from_result` reads that back,
from a live run or a results file alike, so a recorded run is judged the
same way as a fresh one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..base.history_json import message_from_dict, message_to_dict
from ..batch.result import BatchResult, ItemError
from ..errors import ParseError
from ..messages import AssistantMessage, Message, TokenUsage, ToolCall

#: A batch input's id for repeat ``r`` of case ``c``: ``"c#r"``.
REPEAT_MARK = "#"


def run_id(case: str, repeat: int) -> str:
    """The batch input id of one repeat (1-based) of a case."""
    return f"{case}{REPEAT_MARK}{repeat}"


@dataclass(frozen=True)
class CaseRun:
    """One run of case ``case`` (repeat ``repeat``, from 1): the answer and how it got there.

    ``messages`` are the turn's, after the case's history: the user's input,
    the model's replies and the tool results. ``turns`` counts the model's
    replies; ``error`` is set when the run failed (then ``content`` is None).
    """

    case: str
    repeat: int
    content: str | None = None
    output: Any = None
    messages: tuple[Message, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    turns: int = 0
    seconds: float = 0.0
    error: ItemError | None = None

    @property
    def ok(self) -> bool:
        """Whether the run ended with an answer."""
        return self.error is None

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the model made in the run, in order."""
        return [
            call for m in self.messages if isinstance(m, AssistantMessage) for call in m.tool_calls
        ]

    @classmethod
    def from_result(cls, result: BatchResult) -> CaseRun:
        """The run a batch result records; ParseError if it is not an eval's result."""
        details = result.details
        if not isinstance(details, Mapping):
            raise ParseError(f"batch result {result.id!r} is not an eval run (no details)")
        try:
            messages = tuple(
                message_from_dict(m, f"{result.id} messages[{i}]")
                for i, m in enumerate(details.get("messages", ()))
            )
            return cls(
                case=str(details["case"]),
                repeat=int(details["repeat"]),
                content=result.content,
                output=result.output,
                messages=messages,
                usage=result.usage,
                turns=int(details.get("turns", 0)),
                seconds=result.seconds,
                error=result.error,
            )
        except (KeyError, TypeError, ValueError) as err:
            raise ParseError(f"batch result {result.id!r}: wrong eval details ({err})") from err


def details(case: str, repeat: int, messages: list[Message]) -> dict[str, Any]:
    """What the worker records beside the batch result for one run."""
    return {
        "case": case,
        "repeat": repeat,
        "turns": sum(isinstance(m, AssistantMessage) for m in messages),
        "messages": [message_to_dict(m) for m in messages],
    }
