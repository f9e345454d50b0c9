"""LlmJudge: a chat model grades the answer against a rubric, with a typed verdict.

The judge is any :class:`~agent_smith.llm.model.ChatModel` (a bigger model
than the agent's, usually). It gets the rubric, the case's input and
expected answer (when there is one) and the run's answer, and must reply
with a :class:`JudgeVerdict` (JSON: ``passed``, ``score`` between 0 and 1,
``reason``), through the agent's own typed output (validated, retried up
to ``output_retries``). An answer that never fits, or a score outside
[0, 1], is an :class:`~agent_smith.errors.EvalError` naming the case: the
verdict is then an error in the report, the run goes on. A judge in a
dataset file has no model: the run's ``judge=`` model grades it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..agent.agent import Agent
from ..agent.config import AgentConfig
from ..base.parts import content_text
from ..errors import AgentSmithError, ConfigError, EvalError
from .evaluator import EvalContext, Evaluator
from .verdict import EvalResult

if TYPE_CHECKING:
    from ..llm.model import ChatModel

_SYSTEM = (
    "You grade an AI assistant's answer against a rubric. Read the rubric, the question, "
    "the expected answer if given, and the assistant's answer. Reply with JSON only: "
    '{"passed": true or false, "score": a number from 0 to 1, "reason": one short sentence}.'
)


@dataclass(frozen=True)
class JudgeVerdict:
    """What the judge must answer: ``passed``, a ``score`` in [0, 1], a one-line ``reason``."""

    passed: bool
    score: float
    reason: str


@dataclass(frozen=True)
class LlmJudge(Evaluator):
    """Ask ``model`` (else the run's ``judge=`` model) to grade the answer by ``rubric``."""

    kind: ClassVar[str] = "judge"
    rubric: str
    model: ChatModel | None = field(default=None, compare=False, repr=False)
    label: str = ""
    output_retries: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.rubric, str) or not self.rubric.strip():
            raise ConfigError("judge evaluator: the rubric must be a non-empty string")

    @property
    def name(self) -> str:
        return self.label or self.kind

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data.pop("model", None)  # a live client; the run's judge= model grades a loaded judge
        return data

    def evaluate(self, ctx: EvalContext) -> EvalResult:
        run = ctx.run
        if run.error is not None:
            return self.verdict(False, f"the run failed: {run.error}")
        model = self.model if self.model is not None else ctx.judge
        if model is None:
            raise EvalError(
                f"case {ctx.case.id}: the judge has no model (give run_eval a judge= model)",
                case=ctx.case.id,
                where=self.name,
            )
        config = AgentConfig(
            max_iterations=1 + self.output_retries, stream=False, output_retries=self.output_retries
        )
        judge = Agent(model, _SYSTEM, config=config, name="judge", output_type=JudgeVerdict)
        try:
            reply = judge.send(self._prompt(ctx))
        except AgentSmithError as err:
            raise EvalError(
                f"case {ctx.case.id}: the judge's answer is no verdict ({err})",
                case=ctx.case.id,
                where=self.name,
            ) from err
        finally:
            judge.close()
        verdict: JudgeVerdict = reply.output
        if not 0.0 <= verdict.score <= 1.0:
            raise EvalError(
                f"case {ctx.case.id}: the judge's score {verdict.score!r} is not in [0, 1]",
                case=ctx.case.id,
                where=self.name,
            )
        return EvalResult(self.name, bool(verdict.passed), float(verdict.score), verdict.reason)

    def _prompt(self, ctx: EvalContext) -> str:
        parts = [f"Rubric:\n{self.rubric}", f"Question:\n{content_text(ctx.case.input)}"]
        if ctx.expected is not None:
            expected = ctx.expected
            text = expected if isinstance(expected, str) else json.dumps(expected)
            parts.append(f"Expected answer:\n{text}")
        answer = ctx.run.content or ""
        if ctx.run.output is not None:
            answer = json.dumps(ctx.run.output, ensure_ascii=False)
        parts.append(f"Assistant's answer:\n{answer}")
        return "\n\n".join(parts)
