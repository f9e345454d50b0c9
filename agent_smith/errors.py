"""The one exception hierarchy of agent_smith.

Every error the library raises is an :class:`AgentSmithError`. Each subclass
carries the fields of the matching error of the original design (seed §6.1) so
callers branch on types and attributes, never on message text. Messages are
one line, say what failed and where, and never contain secrets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base.paused_turn import ApprovalRequest, PausedTurn


class AgentSmithError(Exception):
    """Base class of every error raised by agent_smith."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(AgentSmithError):
    """A configuration value or argument is invalid (caught before any I/O)."""


class ParseError(AgentSmithError):
    """Untrusted input (a server reply, a frame, a manifest) has the wrong shape."""

    def __init__(self, message: str, *, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


class TruncatedReplyError(ParseError):
    """The model's reply was cut off (finish reason ``length``) inside a tool call."""

    def __init__(self, message: str, *, finish_reason: str = "length") -> None:
        super().__init__(message)
        self.finish_reason = finish_reason


class OutputValidationError(ParseError):
    """The model's replies never fitted the requested output type, retries included.

    ``raw`` is the last reply's text (or the ``final_result`` call's
    arguments), ``errors`` what was wrong with it, ``attempts`` how many
    replies were read.
    """

    def __init__(
        self, message: str, *, raw: str, errors: tuple[str, ...] = (), attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.raw = raw
        self.errors = errors
        self.attempts = attempts


class ToolError(AgentSmithError):
    """A tool failed. Inside the agent loop this becomes an error tool message."""

    def __init__(self, message: str, *, tool_name: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.retryable = retryable


class TransportError(AgentSmithError):
    """A connection, pipe, subprocess or HTTP exchange failed.

    ``http_status`` is the status of an HTTP error answer, when that was the failure.
    """

    def __init__(
        self,
        message: str,
        *,
        operation: str,
        endpoint_or_server: str,
        http_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.operation = operation
        self.endpoint_or_server = endpoint_or_server
        self.http_status = http_status


class McpError(AgentSmithError):
    """An MCP server reported an error or returned content we cannot use.

    ``rpc_code`` and ``data`` are the JSON-RPC error's, when the server sent one.
    """

    def __init__(
        self, message: str, *, server: str, rpc_code: int | None = None, data: object = None
    ) -> None:
        super().__init__(message)
        self.server = server
        self.rpc_code = rpc_code
        self.data = data


class McpProtocolError(AgentSmithError):
    """The MCP message flow was invalid (bad JSON-RPC, unsupported revision, ...)."""

    def __init__(self, message: str, *, server: str, rpc_code: int | None = None) -> None:
        super().__init__(message)
        self.server = server
        self.rpc_code = rpc_code


class McpAuthError(AgentSmithError):
    """Authorizing with an MCP server failed (OAuth discovery, registration, consent, tokens).

    ``http_status`` is the status of the answer that failed (None when no
    answer came); ``oauth_error`` the OAuth error code the authorization
    server gave (``invalid_grant``, ``access_denied``, ...), if any.
    """

    def __init__(
        self,
        message: str,
        *,
        server: str,
        http_status: int | None = None,
        oauth_error: str | None = None,
    ) -> None:
        super().__init__(message)
        self.server = server
        self.http_status = http_status
        self.oauth_error = oauth_error


class LlmApiError(AgentSmithError):
    """The LLM server answered with an error (HTTP status or an error frame)."""

    def __init__(self, message: str, *, http_status: int, body_excerpt: str = "") -> None:
        super().__init__(message)
        self.http_status = http_status
        self.body_excerpt = body_excerpt


class ContextOverflowError(LlmApiError):
    """The LLM server refused a request as longer than the model's context window.

    ``prompt_tokens`` is how long the server counted the request and
    ``context_window`` the window it has (each None when the answer did not
    say). An agent trims what it sends and tries once more before raising it.
    """

    def __init__(
        self,
        message: str,
        *,
        http_status: int,
        body_excerpt: str = "",
        prompt_tokens: int | None = None,
        context_window: int | None = None,
    ) -> None:
        super().__init__(message, http_status=http_status, body_excerpt=body_excerpt)
        self.prompt_tokens = prompt_tokens
        self.context_window = context_window


class AgentTimeoutError(AgentSmithError, TimeoutError):
    """An operation ran out of its time budget (``budget`` in seconds)."""

    def __init__(self, message: str, *, operation: str, budget: float) -> None:
        super().__init__(message)
        self.operation = operation
        self.budget = budget


class CancelledError(AgentSmithError):
    """An operation was cancelled through a cancellation token."""

    def __init__(self, message: str, *, operation: str) -> None:
        super().__init__(message)
        self.operation = operation


class SkillError(AgentSmithError):
    """A skill could not be loaded or activated."""

    def __init__(self, message: str, *, skill_name: str) -> None:
        super().__init__(message)
        self.skill_name = skill_name


class AgentStopped(AgentSmithError):
    """The agent loop hit a stop condition before the model gave a final answer.

    ``condition`` is one of ``max_iterations``, ``tree_iterations``,
    ``max_total_tokens``, ``deadline``, ``loop_detected``, ``tool_failures``,
    ``repetition`` (a streamed reply kept repeating one passage and was cut off).
    """

    def __init__(self, message: str, *, condition: str) -> None:
        super().__init__(message)
        self.condition = condition


class UsageLimitExceeded(AgentStopped):
    """A run (its sub-agents included) reached one of its :class:`~agent_smith.UsageLimits`.

    ``limit`` names the cap (``max_requests``, ``max_tool_calls``,
    ``max_input_tokens``, ``max_output_tokens``, ``max_total_tokens``,
    ``max_cost``), ``allowed`` its value and ``spent`` what the run had spent
    of that quantity when the next request or tool call was refused; the
    message says the rest. ``condition`` is ``usage_limit``.
    """

    def __init__(self, message: str, *, limit: str, allowed: float, spent: float) -> None:
        super().__init__(message, condition="usage_limit")
        self.limit = limit
        self.allowed = allowed
        self.spent = spent


class GuardrailTripped(AgentSmithError):
    """A guardrail refused a turn's input or final output (``guardrail`` names it).

    ``stage`` is ``input`` or ``output``; ``reason`` what the guardrail said.
    The history keeps the user's message; a tripped output is not recorded.
    """

    def __init__(self, message: str, *, guardrail: str, stage: str, reason: str) -> None:
        super().__init__(message)
        self.guardrail = guardrail
        self.stage = stage
        self.reason = reason


class AgentBusyError(AgentSmithError):
    """A second turn was started on an agent that is already running one."""


class SessionError(AgentSmithError):
    """A session store failed: not a session database, corrupt, unwritable or closed.

    ``store`` names the store (the database path for :class:`SqliteSession`).
    """

    def __init__(self, message: str, *, store: str) -> None:
        super().__init__(message)
        self.store = store


class StreamLostError(AgentSmithError):
    """An event stream cannot go on: its writer stopped before the end, or it was deleted.

    ``stream`` names the stream (a web turn's resumable stream).
    """

    def __init__(self, message: str, *, stream: str) -> None:
        super().__init__(message)
        self.stream = stream


class ApprovalRequired(AgentSmithError):
    """A turn paused because tool calls wait for a person's decision.

    Not a failure: keep ``state`` (a :class:`~agent_smith.base.paused_turn.PausedTurn`;
    ``state.to_json()`` to store it) and the agent's history, ask about
    ``requests`` (the waiting calls with their arguments), then call
    ``agent.resume(state, {call_id: True | False | "reason"})``.
    """

    def __init__(self, message: str, *, state: PausedTurn) -> None:
        super().__init__(message)
        self.state = state

    @property
    def requests(self) -> tuple[ApprovalRequest, ...]:
        """The calls waiting for a decision, in the order the model made them."""
        return self.state.requests


class ResultsError(AgentSmithError):
    """A batch's results file cannot be opened, read, locked or written (``path``)."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class PausedTurnMismatch(ConfigError):
    """A resume was refused: its paused turn is not the one the agent can resume.

    The state does not match the history or the pause stored with the
    session (another round, already resumed, abandoned), or its seal does not
    verify with the agent's ``approval_key``. Nothing was changed.
    """


class DurableStateError(AgentSmithError):
    """A durable turn's record cannot be used: unreadable, of another shape, or unreachable.

    ``turn_id`` names the durable turn (``""`` when the database itself failed).
    """

    def __init__(self, message: str, *, turn_id: str = "") -> None:
        super().__init__(message)
        self.turn_id = turn_id


class ReplayMismatchError(DurableStateError):
    """A durable turn would replay under other code than it was recorded with.

    The agent that recovers the turn has another tool set, model or name, or a
    replayed model request differs from the recorded one: the turn fails
    closed instead of replaying differently. ``difference`` names what differs.
    """

    def __init__(self, message: str, *, turn_id: str, difference: str) -> None:
        super().__init__(message, turn_id=turn_id)
        self.difference = difference


class A2AError(AgentSmithError):
    """A remote A2A agent answered with an error, or its task failed, was rejected or cancelled.

    ``agent`` is the agent's URL; ``rpc_code`` the A2A / JSON-RPC error code
    (``-32001`` task not found, ...) when the answer carried one;
    ``http_status`` the HTTP status of an error answer; ``task_id`` the task
    concerned, if any.
    """

    def __init__(
        self,
        message: str,
        *,
        agent: str,
        rpc_code: int | None = None,
        http_status: int | None = None,
        task_id: str = "",
    ) -> None:
        super().__init__(message)
        self.agent = agent
        self.rpc_code = rpc_code
        self.http_status = http_status
        self.task_id = task_id


class A2AProtocolError(A2AError):
    """A remote A2A agent's answer is not valid A2A.

    An agent card that does not validate, a reply of the wrong shape, or a
    stream that ended before the task reached a final or interrupted state.
    """


class PartError(AgentSmithError):
    """A content part (an image, a document, audio) cannot be sent or read as it is.

    Raised before any request goes out: ``part`` names the part
    (``"messages[2].content[1] (image/png, 21 MB)"``) and ``reason`` says what
    is wrong in one word: ``"unsupported"`` (the model takes no part of that
    kind, or not in that form), ``"media_type"`` (the bytes are not what the
    media type says), ``"too_large"`` (over the provider's size limit),
    ``"private_url"`` (a URL inside the private ranges), ``"fetch"`` (a URL
    that could not be fetched) or ``"encoding"`` (corrupt base64 in a stored
    history).
    """

    def __init__(self, message: str, *, part: str, reason: str) -> None:
        super().__init__(message)
        self.part = part
        self.reason = reason


class EvalError(AgentSmithError):
    """One case of an eval cannot be read, run or judged (``case``: its id, or ``""``).

    A dataset line that is not a case, an evaluator the dataset names but no
    code knows, an expected value that does not fit the agent's output type,
    an evaluator that raised, a judge whose answer is not a verdict: each is
    this error for its case, reported with the case while the rest of the
    run goes on. ``where`` says where it was found (``file:line``, an
    evaluator's name) when that helps.
    """

    def __init__(self, message: str, *, case: str = "", where: str = "") -> None:
        super().__init__(message)
        self.case = case
        self.where = where
