"""Evaluators by the name a dataset file gives them: ``{"type": "contains", "value": "42"}``.

The ``type`` picks the class, the other keys are its settings. A type no
code knows, or a setting the class does not take, is an EvalError saying
which types there are (the dataset reader adds the case).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import AgentSmithError, EvalError
from .evaluator import Check, Evaluator
from .judge import LlmJudge
from .limits import Limits
from .text_checks import Contains, Equals, OutputValid, Regex
from .trajectory import ToolCalls

#: The evaluator classes a dataset file can name, by their ``type``.
EVALUATORS: dict[str, type[Evaluator]] = {
    cls.kind: cls
    for cls in (Equals, Contains, Regex, OutputValid, ToolCalls, Limits, LlmJudge, Check)
}


def evaluator_from_dict(data: object) -> Evaluator:
    """The evaluator a dataset file describes; EvalError for an unknown type or setting."""
    if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
        raise EvalError('an evaluator must be an object with a "type"')
    kind = data["type"]
    cls = EVALUATORS.get(kind)
    if cls is None:
        known = ", ".join(sorted(EVALUATORS))
        raise EvalError(f"unknown evaluator {kind!r} (known: {known})", where=kind)
    settings: dict[str, Any] = {k: v for k, v in data.items() if k != "type"}
    if cls is LlmJudge and "model" in settings:
        raise EvalError("a judge in a dataset file has no model: run_eval's judge= grades it")
    if "calls" in settings and isinstance(settings["calls"], list):
        settings["calls"] = tuple(settings["calls"])
    try:
        return cls(**settings)
    except TypeError as err:  # a setting the class does not take, or a missing one
        raise EvalError(f"evaluator {kind!r}: {err}", where=kind) from err
    except AgentSmithError as err:
        raise EvalError(f"evaluator {kind!r}: {err}", where=kind) from err
