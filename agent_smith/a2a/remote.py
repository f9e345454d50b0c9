"""A2AAgent: a remote A2A agent as a tool (a sub-agent that lives in another process).

::

    agent = Agent(llm, "You plan trips.", [A2AAgent("http://127.0.0.1:9000/weather")])

The model sees one argument, ``task``; the tool sends it to the remote agent
(streaming when its card says it can), and the remote answer's text is the
tool result. While it runs, the remote task's progress reaches the calling
agent's ``on_subagent_event`` hook as
:class:`~agent_smith.agent.events.SubAgentEvent` values: a
:class:`~agent_smith.llm.events.TokenDelta` per artifact chunk, the
:class:`~agent_smith.a2a.wire.StatusUpdate` of each state change.

Time and cancellation. ``timeout`` is the call's tool timeout (the
dispatcher's); the client's own bounds each wait for bytes. When the call is
cancelled (its timeout, or the calling turn cancelled) the stream is closed
and the remote task is cancelled (``CancelTask``).

Input. A remote task in ``TASK_STATE_INPUT_REQUIRED`` goes through this
agent's approval flow: the approver of the calling agent (a root agent's,
also for its sub-agents) is asked, its clock stopped as for any wait for a
person. An agent_smith peer's approvals are asked one by one, as the
remote calls they are, and answered with a decision each; another agent's
question is asked as one request (approve: the answer is ``yes``; deny: the
reason). Without an approver nobody can answer: the remote task is
cancelled and the model reads an error result saying so (fail-safe, as for
a sub-agent's marked calls).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..agent.agent import Agent
from ..agent.approval_gate import ask_approver
from ..agent.approvals import ApprovalRequest, Approver
from ..agent.events import SubAgentEvent, new_invocation_id
from ..errors import A2AError, AgentSmithError, CancelledError, ConfigError
from ..llm.events import TokenDelta
from ..logs import invoke_hook
from ..messages import ToolCall
from ..runtime import Runtime
from ..tools.base import JsonObject, Tool, ToolContext, ToolOptions, ToolResult, ToolSchema
from ..tools.person_wait import waiting_for_person
from .client import A2AClient
from .wire import (
    COMPLETED,
    INPUT_REQUIRED,
    AgentMessage,
    ArtifactUpdate,
    StatusUpdate,
    TaskView,
    approvals_of,
    decisions_message,
    text_message,
)

log = logging.getLogger(__name__)

#: How many times one call answers the remote agent's requests for input.
MAX_INPUT_ROUNDS = 8
_TASK_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"task": {"type": "string", "description": "What to ask the remote agent"}},
    "required": ["task"],
}
_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_-]+")

Report = Callable[[object], None]


class A2AAgent(Tool):
    """The remote A2A agent at ``url`` as a tool (see the module doc).

    ``name`` and ``description`` default to the card's (the name made a
    valid tool name); with both given the card is fetched at the first call.
    ``headers``, ``binding`` and ``runtime`` are the :class:`A2AClient`'s;
    ``timeout`` (seconds) is the whole call's, ``read_timeout`` each wait for
    bytes.
    """

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        description: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        read_timeout: float = 120.0,
        binding: str | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        if not timeout > 0:
            raise ConfigError(f"A2A agent {url}: timeout must be positive")
        self.client = A2AClient(
            url, headers=headers, timeout=read_timeout, binding=binding, runtime=runtime
        )
        self._name, self._description = name, description
        self._options = ToolOptions(timeout=timeout)
        self._schema: ToolSchema | None = None

    @property
    def schema(self) -> ToolSchema:
        if self._schema is None:
            name, description = self._name, self._description
            if name is None or description is None:
                card = self.client.card()
                name = name or _tool_name(card.name)
                description = description or card.summary()
            self._schema = ToolSchema(name, description, _TASK_SCHEMA)
        return self._schema

    @property
    def options(self) -> ToolOptions:
        return self._options

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        caller = ctx.agent if isinstance(ctx.agent, Agent) else None
        report = _reporter(caller, self.name, ctx.depth + 1)
        approver = caller.approver if caller is not None else None
        message = text_message(str(args["task"]))
        task: TaskView | None = None
        try:
            for _ in range(MAX_INPUT_ROUNDS):
                task = self._run(message, ctx, report)
                if task.state == COMPLETED:
                    return ToolResult(task.text)
                if task.state != INPUT_REQUIRED:
                    return ToolResult(
                        f"the remote agent {self.name!r} ended its task {_state(task.state)}: "
                        f"{task.status_text[:500]}",
                        is_error=True,
                    )
                if approver is None:
                    self._cancel(task.id)
                    return ToolResult(
                        f"the remote agent {self.name!r} asked for input "
                        f"({task.status_text[:300]!r}) and nobody can answer here (give the root "
                        "agent an approver); its task was cancelled",
                        is_error=True,
                    )
                message = self._answer(task, approver, ctx)
            self._cancel(task.id if task is not None else "")
            return ToolResult(
                f"the remote agent {self.name!r} kept asking for input; its task was cancelled",
                is_error=True,
            )
        except CancelledError:
            self._cancel(task.id if task is not None else "")
            raise
        except AgentSmithError as err:
            return ToolResult(f"the remote agent {self.name!r} failed: {err}", is_error=True)

    def _run(self, message: JsonObject, ctx: ToolContext, report: Report) -> TaskView:
        """Send ``message``; the task when it is final or waits for input."""
        if not self.client.card().streaming:
            answer = self.client.send(message)
            return _as_task(answer, message)
        task_id, context, state, status, text = "", "", "", None, []
        try:
            for item in self.client.stream(message, cancel=ctx.cancel):
                if isinstance(item, ArtifactUpdate):
                    text.append(item.text)
                    report(TokenDelta(item.text))
                elif isinstance(item, StatusUpdate):
                    task_id, context, state, status = _progress(item)
                    report(item)
                elif isinstance(item, TaskView):
                    task_id, context, state, status = _progress(item)
                    if not text and item.artifacts:
                        text.append(item.text)
                else:
                    return _as_task(item, message)
        except CancelledError:
            self._cancel(task_id)
            raise
        artifacts = ({"parts": [{"text": "".join(text)}]},) if text else ()
        return TaskView(task_id, context, state, status, artifacts)

    def _answer(self, task: TaskView, approver: Approver, ctx: ToolContext) -> JsonObject:
        """The caller's answer to the task's request for input, asked of ``approver``."""
        wanted = approvals_of(task.message)
        with waiting_for_person():
            if wanted:
                decisions: dict[str, bool | str] = {}
                for ask in wanted:
                    arguments = ask.get("arguments")
                    call = ToolCall(
                        str(ask.get("callId", "")),
                        str(ask.get("tool", "")),
                        arguments if isinstance(arguments, dict) else {},
                    )
                    request = ApprovalRequest(
                        call, str(ask.get("description", "")), self.name, ctx.depth + 1, ctx.cancel
                    )
                    decision = ask_approver(approver, request)
                    decisions[call.id] = True if decision.approved else decision.reason
                return decisions_message(decisions, context_id=task.context_id, task_id=task.id)
            question = ToolCall(task.id, self.name, {"question": task.status_text})
            request = ApprovalRequest(
                question, f"the remote agent {self.name} asks", self.name, ctx.depth + 1, ctx.cancel
            )
            decision = ask_approver(approver, request)
        reply = "yes" if decision.approved else decision.reason
        return text_message(reply, context_id=task.context_id, task_id=task.id)

    def _cancel(self, task_id: str) -> None:
        """Cancel the remote task, best effort (it may have ended meanwhile)."""
        if not task_id:
            return
        try:
            self.client.cancel_task(task_id)
        except A2AError as err:
            log.info("cancelling remote task %s of %s: %s", task_id, self.client.url, err)
        except AgentSmithError as err:
            log.warning("cancelling remote task %s of %s failed: %s", task_id, self.client.url, err)

    def __repr__(self) -> str:
        return f"A2AAgent({self.client.url!r})"


def _tool_name(name: str) -> str:
    cleaned = _NAME_CHARACTERS.sub("_", name).strip("_")[:64]
    return cleaned or "remote_agent"


def _state(state: str) -> str:
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-")


def _progress(item: StatusUpdate | TaskView) -> tuple[str, str, str, JsonObject | None]:
    """Where a streamed task stands: its id, context, state and status message."""
    task_id = item.task_id if isinstance(item, StatusUpdate) else item.id
    return task_id, item.context_id, item.state, item.message


def _as_task(answer: TaskView | AgentMessage, message: JsonObject) -> TaskView:
    if isinstance(answer, TaskView):
        return answer
    parts = answer.message.get("parts", [])
    return TaskView(
        "", str(message.get("contextId", "")), COMPLETED, answer.message, ({"parts": parts},)
    )


def _reporter(caller: Agent | None, name: str, depth: int) -> Report:
    """What passes the remote progress to the caller's ``on_subagent_event`` (nothing without)."""
    sink: Any = caller.hooks.on_subagent_event if caller is not None else None
    if sink is None:
        return lambda event: None
    invocation = new_invocation_id(name)

    def report(event: object) -> None:
        invoke_hook(sink, SubAgentEvent(name, depth, event, invocation), name="on_subagent_event")

    return report
