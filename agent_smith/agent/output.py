"""One turn's typed output: what to ask the model for, and how to read and check its reply.

A turn with an ``output_type`` (``send(text, output_type=Invoice)``, an
``AgentRequest`` field, or the agent's default) ends with a final
``AssistantMessage`` whose ``output`` is an ``Invoice`` and whose ``content``
is the raw JSON. :func:`turn_output` makes the turn's :class:`TurnOutput`;
the loop asks it to shape each request and to read each reply. The modes
(``output_mode``):

* ``"native"`` — ``response_format: {"type": "json_schema", "json_schema":
  {"name", "schema", "strict"}}``: the server constrains the reply to the
  schema (llama-server compiles it to a grammar). ``strict`` is true only
  when the schema qualifies (every object closed, every property required).
* ``"tool"`` — a synthetic ``final_result`` tool whose arguments are the
  output is offered beside the agent's tools, with ``tool_choice:
  "required"``; a valid call ends the turn through the done signal (seed
  §15.3). The agent's other tools keep working.
* ``"prompted"`` — the schema goes into the system prompt and the request
  asks for ``response_format: {"type": "json_object"}``; for servers with
  JSON mode but no schemas.
* ``"auto"`` (default) — native when the agent offers no tools, tool mode
  when it does: with ``response_format`` set, llama-server's grammar forces
  schema-shaped content, so the model could no longer call a tool. A model
  whose capabilities say it has no native structured output gets tool mode.
* ``"text"`` — no typed output for this turn (overrides an agent default).

A reply that does not fit (not JSON, a schema violation found by
``jsonschema``, the type's own constructor refusing it) goes back to the
model saying exactly what was wrong: as a user message in native and
prompted mode, as the ``final_result`` tool's error result in tool mode
(a plain text reply in tool mode is accepted if it is valid JSON for the
type, else the model is told to call the tool). Each retry is an
:class:`~agent_smith.agent.events.OutputRetry` event and stays in the
history. After ``AgentConfig.output_retries`` retries the turn raises
:class:`~agent_smith.errors.OutputValidationError`; the history is left
consistent (every ``final_result`` call has its result). Repeated
``final_result`` calls are bounded by these retries, so the loop guard
does not count them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, get_args

from ..errors import ConfigError, OutputValidationError
from ..llm.request import LlmRequest
from ..messages import AssistantMessage, SystemMessage, ToolCall, UserMessage
from ..tools.base import JsonObject, Tool, ToolContext, ToolResult, ToolSchema
from ..tools.dispatch import ToolOutcome
from ..tools.registry import ToolRegistry
from ..tools.validation import validation_errors
from .events import OutputRetry
from .output_type import OutputSchema, first_line, output_schema

if TYPE_CHECKING:
    from .agent import Agent
    from .request import AgentRequest

log = logging.getLogger("agent_smith.agent")

OutputMode = Literal["auto", "native", "tool", "prompted", "text"]
FINAL_RESULT = "final_result"

_MODES: tuple[str, ...] = get_args(OutputMode)
_PROMPT = (
    "# Output format\n"
    "Answer with one JSON object and nothing else (no prose, no code fence). "
    "It must match this JSON schema:\n{schema}"
)
_RETRY = "Your reply does not match the required {name} JSON schema:\n{errors}\n{ask}"
_ASK_JSON = "Reply again with only the corrected JSON object."
_ASK_TOOL = (
    f"Give your answer by calling the `{FINAL_RESULT}` tool with it as the arguments; "
    "a plain text reply does not count."
)


def check_output_options(output_type: Any, output_mode: str | None) -> None:
    """ConfigError unless ``output_mode`` is a mode and ``output_type`` has a JSON form."""
    if output_mode is not None and output_mode not in _MODES:
        raise ConfigError(f"output_mode must be one of {', '.join(_MODES)}; got {output_mode!r}")
    if output_type is not None:
        output_schema(output_type)


class TurnOutput:
    """A turn without a typed output: requests and replies pass through unchanged."""

    __slots__ = ()

    def prepare(
        self, registry: ToolRegistry, request: LlmRequest
    ) -> tuple[ToolRegistry, LlmRequest]:
        """The registry to dispatch from and the request to send this round."""
        return registry, request

    def tools(self, registry: ToolRegistry) -> ToolRegistry:
        """The registry to dispatch from (a resumed round's calls, say)."""
        return registry

    def read(self, message: AssistantMessage) -> AssistantMessage:
        """A reply, with ``output`` set when it is a final answer that fits."""
        return message

    def rejection(self) -> OutputRetry | None:
        """After the final reply just read was recorded: the retry, if it did not fit."""
        return None

    def fits(self) -> bool:
        """Whether the final reply just read fits the output type (before :meth:`rejection`)."""
        return True

    def rejected_call(self, outcomes: Sequence[ToolOutcome]) -> OutputRetry | None:
        """After a round's results were recorded: the retry, if ``final_result`` failed."""
        return None

    def answer(self, done: str, outcomes: Sequence[ToolOutcome]) -> AssistantMessage:
        """The final message of a turn a tool ended with the done signal."""
        return AssistantMessage(done)

    def guarded(self, calls: Sequence[ToolCall]) -> Sequence[ToolCall]:
        """The calls the loop guard counts."""
        return calls


PLAIN_TEXT = TurnOutput()


def turn_output(agent: Agent, request: AgentRequest) -> TurnOutput:
    """How this turn asks for and checks its output (see the module doc)."""
    output_type = request.output_type if request.output_type is not None else agent.output_type
    mode = request.output_mode or agent.output_mode
    if request.output_mode is None and request.output_type is not None and mode == "text":
        mode = "auto"  # an agent-wide "text" does not overrule a type asked for this turn
    if output_type is None:
        if request.output_mode not in (None, "text"):
            raise ConfigError(f"output_mode {request.output_mode!r} needs an output_type")
        return PLAIN_TEXT
    if mode == "text":
        return PLAIN_TEXT
    tools = agent.tools
    if mode == "auto":
        native = not tools and agent.model.capabilities.native_output
        mode = "native" if native else "tool"
    if mode == "tool" and FINAL_RESULT in tools:
        raise _name_taken(agent.name)
    return TypedOutput(
        output_schema(output_type), mode, retries=agent.config.output_retries, agent=agent.name
    )


class TypedOutput(TurnOutput):
    """A turn that must end with a valid ``output_type`` value, in one resolved mode."""

    __slots__ = (
        "_agent",
        "_attempts",
        "_base",
        "_format",
        "_mode",
        "_problem",
        "_registry",
        "_retries",
        "_schema",
        "_tool",
    )

    def __init__(self, schema: OutputSchema, mode: str, *, retries: int, agent: str) -> None:
        self._schema = schema
        self._mode = mode
        self._retries = retries
        self._agent = agent
        self._attempts = 0
        self._problem: tuple[tuple[str, ...], str] | None = None  # (errors, raw) of the last read
        self._tool = FinalResultTool(schema)
        self._format = native_format(schema) if mode == "native" else {"type": "json_object"}
        self._base: ToolRegistry | None = None
        self._registry: ToolRegistry | None = None

    def prepare(
        self, registry: ToolRegistry, request: LlmRequest
    ) -> tuple[ToolRegistry, LlmRequest]:
        if self._mode == "tool":
            registry = self.tools(registry)
            return registry, replace(request, tools=registry.schemas(), tool_choice="required")
        if self._mode == "native":
            return registry, _with_format(request, self._format)
        messages = list(request.messages)
        note = _PROMPT.format(schema=json.dumps(self._schema.schema, ensure_ascii=False))
        if messages and isinstance(messages[0], SystemMessage):
            messages[0] = SystemMessage(f"{messages[0].content}\n\n{note}")
        else:
            messages.insert(0, SystemMessage(note))
        prompted = replace(request, messages=tuple(messages))
        return registry, _with_format(prompted, self._format)

    def read(self, message: AssistantMessage) -> AssistantMessage:
        if message.tool_calls:
            return message
        try:
            value = self._schema.read(message.content)
        except OutputValidationError as problem:
            errors = problem.errors
            if self._mode == "tool":
                errors = (f"the reply is not a call to the {FINAL_RESULT} tool", *errors)
            self._problem = (errors, message.content)
            return message
        return replace(message, output=value)

    def fits(self) -> bool:
        return self._problem is None

    def rejection(self) -> OutputRetry | None:
        if self._problem is None:
            return None
        errors, raw = self._problem
        self._problem = None
        self._count_failure(errors, raw)
        listed = "\n".join(f"- {e}" for e in errors)
        ask = _ASK_TOOL if self._mode == "tool" else _ASK_JSON
        feedback = UserMessage(_RETRY.format(name=self._schema.name, errors=listed, ask=ask))
        return OutputRetry(self._attempts, errors, raw, feedback)

    def rejected_call(self, outcomes: Sequence[ToolOutcome]) -> OutputRetry | None:
        mine = [o for o in outcomes if o.call.name == FINAL_RESULT]
        if not mine or any(not o.result.is_error for o in mine):
            return None
        failed = mine[0]
        call = failed.call
        if call.invalid_arguments is not None:
            found = ["the arguments are not a valid JSON object"]
        else:
            found = validation_errors(self._schema.schema, call.arguments)
        raw = call.arguments_text()
        errors = self._schema.problem(raw, found or [failed.result.content]).errors
        self._count_failure(errors, raw)
        return OutputRetry(self._attempts, errors, raw, failed.message)

    def answer(self, done: str, outcomes: Sequence[ToolOutcome]) -> AssistantMessage:
        for outcome in outcomes:
            data = outcome.result.structured
            if outcome.call.name == FINAL_RESULT and isinstance(data, dict) and data.get("_done"):
                return AssistantMessage(str(data["final_message"]), output=data["output"])
        # Another tool ended the turn: its final message must be the output.
        try:
            return AssistantMessage(done, output=self._schema.read(done))
        except OutputValidationError as problem:
            raise OutputValidationError(
                f"agent {self._agent!r}: a tool ended the turn with a final message that does "
                f"not fit {self._schema.name}: {first_line(problem.errors)}",
                raw=done,
                errors=problem.errors,
            ) from None

    def guarded(self, calls: Sequence[ToolCall]) -> Sequence[ToolCall]:
        if self._mode != "tool":
            return calls
        return [c for c in calls if c.name != FINAL_RESULT]

    def _count_failure(self, errors: tuple[str, ...], raw: str) -> None:
        self._attempts += 1
        log.info(
            "agent %s: reply %d does not fit %s: %s",
            self._agent,
            self._attempts,
            self._schema.name,
            first_line(errors),
        )
        if self._attempts > self._retries:
            raise OutputValidationError(
                f"agent {self._agent!r}: the reply does not fit {self._schema.name} after "
                f"{self._attempts} attempt(s): {first_line(errors)}",
                raw=raw,
                errors=errors,
                attempts=self._attempts,
            )

    def tools(self, registry: ToolRegistry) -> ToolRegistry:
        if self._mode != "tool":
            return registry
        if registry is self._base and self._registry is not None:
            return self._registry
        if FINAL_RESULT in registry:  # appeared mid-turn (an MCP server's new tool, say)
            raise _name_taken(self._agent)
        combined = ToolRegistry()
        for tool in registry:
            combined.add(tool, registry.options(tool.name))
        combined.add(self._tool)
        self._base, self._registry = registry, combined
        return combined


class FinalResultTool(Tool):
    """The synthetic ``final_result`` tool of tool mode: its arguments are the output."""

    inline = True  # it only converts validated arguments

    def __init__(self, schema: OutputSchema) -> None:
        self._output = schema
        about = f" {schema.description}" if schema.description else ""
        self._schema = ToolSchema(
            FINAL_RESULT,
            "Give the final answer: call this once you have it, with the answer as the "
            f"arguments; the call ends the conversation turn.{about}",
            schema.schema,
        )

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        # The dispatcher has validated ``args`` against this very schema object.
        raw = json.dumps(args, ensure_ascii=False)
        try:
            value = self._output.convert(args, raw=raw, validated=True)
        except OutputValidationError as problem:
            return ToolResult("; ".join(problem.errors), is_error=True)
        return ToolResult(
            "Final result accepted.",
            structured={"_done": True, "final_message": raw, "output": value},
        )


def _name_taken(agent: str) -> ConfigError:
    return ConfigError(
        f"agent {agent!r} has a tool named {FINAL_RESULT!r}, which tool-mode output needs "
        "for itself; rename the tool or pass output_mode='native'"
    )


def native_format(schema: OutputSchema) -> JsonObject:
    """The ``response_format`` of native mode for ``schema``."""
    spec: JsonObject = {"name": schema.name, "schema": schema.schema, "strict": schema.strict}
    if schema.description:
        spec["description"] = schema.description
    return {"type": "json_schema", "json_schema": spec}


def _with_format(request: LlmRequest, response_format: JsonObject) -> LlmRequest:
    return replace(request, sampling=replace(request.sampling, response_format=response_format))
