"""Settings of one agent: stop conditions, budgets, caps and loop guards."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..errors import ConfigError
from ..tools.person_wait import DEFAULT_PERSON_TIMEOUT
from .compaction import Compaction
from .usage_limits import UsageLimits


@dataclass(frozen=True)
class AgentConfig:
    """How long an agent may run and what it does when things go wrong.

    Stop conditions (each raises :class:`~agent_smith.errors.AgentStopped`
    naming its ``condition``):

    * ``max_iterations`` — LLM calls per :meth:`Agent.send` (``max_iterations``).
    * ``tree_max_iterations`` — LLM calls by the whole sub-agent tree of one
      root send (``tree_iterations``).
    * ``max_total_tokens`` — server-reported ``usage.total`` summed over the
      send; checked before each LLM call, not estimated when the server
      reports no usage (``max_total_tokens``).
    * ``deadline`` — seconds for a whole send, enforced while streaming and
      while tools run too (``deadline``).

    Guards (on by default):

    * ``loop_guard`` — the model asking for the same set of tool calls (same
      names and arguments, in order) ``loop_guard_repeats`` times in a row
      stops the loop before the repeated calls run (``loop_detected``).
    * ``failure_guard`` — a round whose tool calls all failed counts as a
      failed round. After ``steer_after_failed_rounds`` consecutive failed
      rounds one steering note (a user message) is added to the history; after
      ``stop_after_failed_rounds`` the loop stops (``tool_failures``). A round
      with any successful call resets the count.

    Budgets: ``default_tool_timeout`` (seconds, per call, unless the tool's
    options say otherwise; it stops while the call waits for a person, such
    as a sub-agent's approval or an MCP server's URL-mode elicitation, and
    ``person_timeout`` bounds each such wait instead),
    ``tool_result_max_bytes`` (larger results are cut),
    ``skill_context_max_bytes`` (a larger skill context is refused).
    ``stream`` is the default for requests that do not choose.
    ``max_subagent_depth`` limits nesting (0 disables sub-agents).
    ``output_retries`` is how many times a reply that does not fit the turn's
    ``output_type`` is sent back to the model before ``OutputValidationError``.
    ``text_tool_calls`` recovers tool calls a model wrote as JSON text instead
    of making them, and keeps their text from the user
    (:mod:`agent_smith.agent.text_tool_calls`). ``small_model`` says the
    model is a small one (a local 0.5B, say) and shapes its requests for it:
    short tool descriptions, a constrained choice of tool whose call is
    grounded before it shows (:mod:`agent_smith.agent.grounding`), and
    after tool results a request that offers no tool and asks for the
    answer (:mod:`agent_smith.agent.small_model`).
    ``usage_limits`` caps requests, tool calls, tokens and cost across a
    root agent's run and its whole sub-agent tree, and prices its usage
    (:mod:`agent_smith.agent.usage_limits`; a sub-agent's own is ignored).
    ``compaction`` summarises older turns before a request would fill its
    share of the context window (:mod:`agent_smith.agent.compaction`); on
    by default, and it only acts once the window is known. ``None`` turns
    it off.
    ``tool_result_page_chars``: a tool result longer than this many
    characters (or cut to fit the window) reaches the model as its head and
    a handle for the built-in ``read_tool_result`` tool, which reads the
    rest (:mod:`agent_smith.agent.result_pages`; off when ``None``).
    ``finish_check``: when the model stops without tool calls, one hidden
    question asks it whether the task is finished, and the turn goes on if
    it says no (:mod:`agent_smith.agent.finish_check`).

    Policy mode (``mode``): ``"write"`` (the default) asks for approval as
    the tools are marked; ``"read"`` runs only tools declared read-only and
    denies every other call in-band (the model reads why); ``"yolo"``
    approves every call without asking
    (:mod:`agent_smith.agent.approval_gate`).
    ``approval_key`` (bytes, kept out of ``repr``) seals every paused turn
    with an HMAC and makes a resume verify it (:mod:`agent_smith.agent.sealing`).

    Bounds on each reply and on what is sent (see ``docs/first-run.md``):

    * ``max_reply_tokens`` — sent as ``max_tokens`` when neither the request
      nor the client's ``default_sampling`` sets a cap; ``None`` sends none
      (:mod:`agent_smith.agent.reply_bounds`).
    * ``repetition_guard`` — a streamed reply that keeps repeating one passage
      is cut off and the turn stops (``repetition``).
    * ``context_window`` — the model's context window in tokens; ``None``
      asks the server (llama-server's ``/props``) when a large tool result
      needs it, or learns it from a context-overflow answer. Tool results are
      cut to what the window can take, and a request the server refuses as
      too long is trimmed and sent once more
      (:mod:`agent_smith.agent.context_fit`).
    """

    max_iterations: int = 16
    deadline: float | None = None
    max_total_tokens: int | None = None
    default_tool_timeout: float = 30.0
    person_timeout: float = DEFAULT_PERSON_TIMEOUT
    tool_result_max_bytes: int = 64 * 1024
    skill_context_max_bytes: int = 16 * 1024
    stream: bool = True
    max_subagent_depth: int = 3
    tree_max_iterations: int = 50
    loop_guard: bool = True
    loop_guard_repeats: int = 3
    failure_guard: bool = True
    steer_after_failed_rounds: int = 3
    stop_after_failed_rounds: int = 6
    output_retries: int = 2
    text_tool_calls: bool = True
    small_model: bool = False
    usage_limits: UsageLimits | None = None
    compaction: Compaction | None = field(default_factory=Compaction)
    tool_result_page_chars: int | None = None
    finish_check: bool = False
    mode: Literal["read", "write", "yolo"] = "write"
    max_reply_tokens: int | None = 1024
    repetition_guard: bool = True
    context_window: int | None = None
    approval_key: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        positive = {
            "max_iterations": self.max_iterations,
            "default_tool_timeout": self.default_tool_timeout,
            "person_timeout": self.person_timeout,
            "tool_result_max_bytes": self.tool_result_max_bytes,
            "skill_context_max_bytes": self.skill_context_max_bytes,
            "tree_max_iterations": self.tree_max_iterations,
            "loop_guard_repeats": self.loop_guard_repeats,
            "steer_after_failed_rounds": self.steer_after_failed_rounds,
            "stop_after_failed_rounds": self.stop_after_failed_rounds,
        }
        if self.deadline is not None:
            positive["deadline"] = self.deadline
        optionals = ("max_total_tokens", "max_reply_tokens", "context_window")
        for optional in (*optionals, "tool_result_page_chars"):
            if getattr(self, optional) is not None:
                positive[optional] = getattr(self, optional)
        for key, value in positive.items():
            if isinstance(value, bool) or not value > 0:
                raise ConfigError(f"AgentConfig.{key} must be positive, got {value!r}")
        if self.mode not in ("read", "write", "yolo"):
            raise ConfigError(f"AgentConfig.mode must be read, write or yolo, got {self.mode!r}")
        if isinstance(self.output_retries, bool) or self.output_retries < 0:
            raise ConfigError("AgentConfig.output_retries must not be negative")
        if self.approval_key is not None and (
            not isinstance(self.approval_key, bytes) or len(self.approval_key) < 16
        ):
            raise ConfigError("AgentConfig.approval_key must be bytes, at least 16 of them")
        if self.max_subagent_depth < 0:
            raise ConfigError("AgentConfig.max_subagent_depth must not be negative")
        if self.loop_guard_repeats < 2:
            raise ConfigError("AgentConfig.loop_guard_repeats must be at least 2")
        if self.stop_after_failed_rounds < self.steer_after_failed_rounds:
            raise ConfigError(
                "AgentConfig.stop_after_failed_rounds must not be below steer_after_failed_rounds"
            )
