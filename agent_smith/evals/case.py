"""Case: one thing to ask the agent, with what a good answer looks like.

A case has an ``id`` (unique in its dataset, stable from run to run: resume
and comparison go by it), the ``input`` the agent is sent, optionally a
``history`` the turn continues (the stored message form of
:mod:`agent_smith.base.history_json`), the ``expected`` output (text, or the
JSON form of a typed output), the evaluators of its own and free
``metadata`` (tags, a source) carried into the report.

``input`` is text or content parts (an image with a question, a document to
summarise): in a dataset file, parts are a list in the stored JSON form of a
history (``{"type": "image", "media_type": "image/png", "data": "<base64>"}``,
``{"type": "text", "text": "..."}``), as batch inputs take them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..base.history_json import message_from_dict, message_to_dict
from ..base.parts import Content, as_parts, content_from_json, content_to_json
from ..errors import AgentSmithError, EvalError
from ..messages import Message
from .evaluator import Evaluator
from .registry import evaluator_from_dict

_KEYS = frozenset({"id", "input", "history", "expected", "evaluators", "metadata"})


@dataclass(frozen=True)
class Case:
    """One case of a dataset (see the module doc)."""

    id: str
    input: Content
    history: tuple[Message, ...] = ()
    expected: Any = None
    evaluators: tuple[Evaluator, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise EvalError(f"a case's id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.input, str):
            try:
                object.__setattr__(self, "input", as_parts(self.input))
            except AgentSmithError as err:
                raise EvalError(f"case {self.id}: 'input': {err}", case=self.id) from err
        for name in ("history", "evaluators"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        if not all(isinstance(e, Evaluator) for e in self.evaluators):
            raise EvalError(f"case {self.id}: 'evaluators' must be Evaluators", case=self.id)

    def payload(self, repeat: int) -> dict[str, Any]:
        """What the worker needs besides the input text: plain data, so it pickles."""
        return {
            "case": self.id,
            "repeat": repeat,
            "history": [message_to_dict(m) for m in self.history],
            "expected": self.expected,
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this case (one line of a ``.jsonl`` dataset)."""
        data: dict[str, Any] = {"id": self.id, "input": content_to_json(self.input)}
        if self.history:
            data["history"] = [message_to_dict(m) for m in self.history]
        if self.expected is not None:
            data["expected"] = self.expected
        if self.evaluators:
            data["evaluators"] = [e.to_dict() for e in self.evaluators]
        if self.metadata:
            data["metadata"] = dict(self.metadata)
        return data

    @classmethod
    def from_dict(cls, data: object, *, where: str = "") -> Case:
        """Read a case; EvalError naming the case (and ``where``) for anything wrong."""
        at = f"{where}: " if where else ""
        if not isinstance(data, Mapping):
            raise EvalError(f"{at}a case must be an object, got {type(data).__name__}", where=where)
        ident = data.get("id")
        if isinstance(ident, int) and not isinstance(ident, bool):
            ident = str(ident)
        if not isinstance(ident, str) or not ident:
            raise EvalError(f"{at}a case needs a non-empty string 'id'", where=where)
        label = f"{at}case {ident}"
        unknown = sorted(str(k) for k in data if k not in _KEYS)
        if unknown:
            raise EvalError(f"{label}: unknown key {unknown[0]!r}", case=ident, where=where)
        if not isinstance(data.get("input"), str | list):
            raise EvalError(
                f"{label}: 'input' must be a string or a list of parts", case=ident, where=where
            )
        history = data.get("history", [])
        evaluators = data.get("evaluators", [])
        metadata = data.get("metadata", {})
        if not isinstance(history, list) or not isinstance(evaluators, list):
            raise EvalError(
                f"{label}: 'history' and 'evaluators' must be lists", case=ident, where=where
            )
        if not isinstance(metadata, Mapping):
            raise EvalError(f"{label}: 'metadata' must be an object", case=ident, where=where)
        try:
            content = content_from_json(data["input"], "input")
            messages = tuple(message_from_dict(m, f"history[{i}]") for i, m in enumerate(history))
            checks = tuple(evaluator_from_dict(e) for e in evaluators)
        except AgentSmithError as err:
            raise EvalError(f"{label}: {err}", case=ident, where=where) from err
        return cls(ident, content, messages, data.get("expected"), checks, dict(metadata))
