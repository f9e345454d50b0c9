"""The agent: a blocking LLM/tool loop with streaming events, hooks and stop conditions.

:class:`Agent` is the public front: its tools, skills, MCP clients and
settings, and ``send``/``stream``/``cancel``/``close``. A turn starts and ends
in :mod:`~agent_smith.agent.turn_scope`, its rounds run in
:class:`~agent_smith.agent.loop.TurnLoop`; a turn's counters and stop
conditions live in :class:`~agent_smith.agent.turn.Turn`.

An agent is not thread-safe: it runs one turn at a time and a second
concurrent ``send``/``stream`` raises :class:`AgentBusyError` at once.
:meth:`cancel` is the exception: any thread may call it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .._internal.closing import Closeable
from ..base.cancellation import CancellationToken
from ..errors import AgentSmithError
from ..logs import invoke_hook
from ..memory import FullMemory, Memory
from ..messages import AssistantMessage, Message, TokenUsage
from ..observer import get_observer
from ..runtime import Runtime, default_runtime
from ..tools.base import Tool, ToolOptions, ToolSchema
from ..tools.function import make_tool
from ..tracing.agent_span import AgentIdentity, invoke_agent
from .approval_gate import drain, resumption
from .approvals import Approver, Decisions
from .config import AgentConfig
from .context_gate import ContextGate
from .events import NO_HOOKS, AgentEvent, AgentHooks, final_message
from .lineage import Lineage
from .output import OutputMode, check_output_options
from .request import AgentRequest, ImageLike, RequestLike, as_request
from .result_pages import ResultPages
from .toolset import ToolSet
from .turn import Turn
from .turn_scope import run_turn

if TYPE_CHECKING:
    from ..llm.model import ChatModel
    from ..mcp.client import McpClient
    from ..mcp.config import ServerConfig
    from ..mcp.jsonrpc import RequestHandler
    from ..sessions.binding import SessionBinding
    from ..sessions.session import Session
    from ..skills import Skill
    from .guardrails import Guardrails
    from .paused import PausedTurn, Resumption
    from .subagents import SubAgentSpec

log = logging.getLogger(__name__)

_NO_USAGE = TokenUsage()


class Agent(Closeable):
    """An LLM agent: ``send()`` a message, get the final answer (see the module doc).

    ``llm`` is any :class:`~agent_smith.llm.model.ChatModel`: an
    :class:`~agent_smith.LlmClient`, a native provider client, a
    ``FallbackModel`` or a ``TestModel``.
    ``tools`` may be :class:`Tool` objects or plain functions (wrapped with
    ``make_tool``). ``memory`` defaults to a fresh ``FullMemory``; ``runtime``
    to the client's runtime, else the process default. ``session`` (see
    :mod:`agent_smith.sessions`) loads the stored conversation now, stores
    each message as it is recorded and lets one turn at a time run on it;
    the caller closes it. ``approver`` decides on calls needing approval
    (:mod:`.approvals`). ``output_type`` and ``output_mode`` are the default
    typed output of every turn (:mod:`.output`). ``guardrails`` check each
    turn's input, final answer and tool calls (:mod:`.guardrails`; not a
    sub-agent's). ``_lineage``: framework use (:meth:`spawn_child`).
    """

    def __init__(
        self,
        llm: ChatModel,
        system_prompt: str = "",
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        memory: Memory | None = None,
        config: AgentConfig = AgentConfig(),  # noqa: B008 - frozen, shared on purpose
        hooks: AgentHooks | None = None,
        runtime: Runtime | None = None,
        name: str = "agent",
        session: Session | None = None,
        approver: Approver | None = None,
        output_type: Any = None,
        output_mode: OutputMode = "auto",
        guardrails: Guardrails | None = None,
        _lineage: Lineage | None = None,
    ) -> None:
        check_output_options(output_type, output_mode)
        self.name = name
        self.approver = approver
        self.guardrails = guardrails
        self._context_gate = ContextGate.of(config)
        self.system_prompt = system_prompt
        self.output_type, self.output_mode = output_type, output_mode
        self._llm = llm
        self._memory: Memory = memory if memory is not None else FullMemory()
        self._config = config
        self._hooks = hooks if hooks is not None else NO_HOOKS
        self._runtime = runtime if runtime is not None else _runtime_of(llm)
        self._lineage = _lineage
        self._depth = _lineage.depth if _lineage is not None else 0
        self._busy = threading.Lock()
        self._turn: Turn | None = None
        self._usage = _NO_USAGE
        self._owned: list[McpClient] = []
        self._tools = ToolSet(on_mcp_event=self._on_mcp_event)
        for item in tools:
            self.add_tool(item)
        self._result_pages = ResultPages.of(config, self.add_tool)
        self._session: SessionBinding | None = None
        if session is not None:
            from ..sessions.binding import SessionBinding  # loaded only by agents with a session

            self._session = SessionBinding(session, self._memory)
        invocation = _lineage.invocation if _lineage is not None else None
        conversation = session.session_id if session is not None else None
        self._identity = AgentIdentity.of(llm, invocation, conversation)  # names its turns' spans

    # -- configuration -------------------------------------------------------

    @property
    def config(self) -> AgentConfig:
        return self._config

    @property
    def hooks(self) -> AgentHooks:
        return self._hooks

    @property
    def model(self) -> ChatModel:
        """The chat model this agent talks to."""
        return self._llm

    @property
    def runtime(self) -> Runtime:
        return self._runtime

    @property
    def depth(self) -> int:
        """Nesting depth: 0 for a root agent, parent's depth + 1 for a sub-agent."""
        return self._depth

    @property
    def memory(self) -> Memory:
        return self._memory

    @property
    def history(self) -> list[Message]:
        """The conversation so far (a copy), without the system prompt."""
        return list(self._memory.messages())

    @property
    def paused_turn(self) -> PausedTurn | None:
        """The paused turn this agent's session stores, to :meth:`resume` (None: nothing waits)."""
        return self._session.paused_turn() if self._session is not None else None

    @property
    def usage(self) -> TokenUsage:
        """Token usage of the last (or current) send, its sub-agents' included."""
        turn = self._turn
        return turn.usage if turn is not None else self._usage

    @property
    def tools(self) -> list[str]:
        """Names of the tools the model sees, in the order it sees them."""
        return self._tools.registry().names()

    @property
    def tool_schemas(self) -> tuple[ToolSchema, ...]:
        """The schemas of the tools the model sees, in the order it sees them."""
        return self._tools.registry().schemas()

    @property
    def skills(self) -> list[Skill]:
        """Active skills in activation order."""
        return self._tools.skills()

    def effective_system_prompt(self) -> str:
        """The system prompt sent to the model: the base plus active skills' sections."""
        return self._tools.system_prompt(self.system_prompt)

    def add_tool(self, tool: Tool | Callable[..., Any], options: ToolOptions | None = None) -> Tool:
        """Give the model a tool (a Tool or a plain function); ConfigError on a taken name."""
        made = tool if isinstance(tool, Tool) else make_tool(tool)
        self._tools.add_tool(made, options)
        return made

    def add_subagent(
        self, spec: SubAgentSpec, *, llm: ChatModel | None = None, timeout: float | None = None
    ) -> Tool:
        """Give the model a sub-agent built from ``spec`` as a tool (see :mod:`.subagents`)."""
        from .subagents import SubAgentTool

        return self.add_tool(SubAgentTool(spec, llm, timeout=timeout))

    def remove_tool(self, name: str) -> None:
        """Take a tool added with :meth:`add_tool` away; ConfigError if there is none."""
        self._tools.remove_tool(name)

    def add_mcp_client(self, client: McpClient) -> None:
        """Expose a connected MCP client's tools; its events go to ``on_mcp_event``.

        The client's hook is replaced by the agent's, which forwards every
        event to ``hooks.on_mcp_event`` and refreshes the tools on
        ``tools/list_changed``. The caller still owns (and closes) the client.
        """
        self._tools.add_client(client)

    def connect_mcp(
        self,
        config: ServerConfig,
        *,
        elicitation_handler: RequestHandler | None = None,
        sampling_handler: RequestHandler | None = None,
        roots_handler: RequestHandler | None = None,
    ) -> McpClient:
        """Connect to an MCP server and expose its tools; the agent closes it in close().

        The handlers answer what the server asks of the client, as in
        :meth:`McpClient.connect` (``SamplingHandler(llm)`` lets the server
        use the agent's model).
        """
        client = self._tools.connect(
            config,
            runtime=self._runtime,
            elicitation_handler=elicitation_handler,
            sampling_handler=sampling_handler,
            roots_handler=roots_handler,
        )
        self._owned.append(client)
        return client

    def activate(self, skill: Skill) -> None:
        """Switch a skill on: its prompt, context, tools and MCP clients (seed §12.3).

        Raises SkillError when the name cannot be normalised or the context is
        over ``skill_context_max_bytes``. Activating a skill of the same name
        again replaces it and moves it to the end of the activation order.
        """
        self._tools.activate(skill, context_max_bytes=self._config.skill_context_max_bytes)

    def deactivate(self, name: str) -> None:
        """Switch the skill called ``name`` off; SkillError if it is not active."""
        self._tools.deactivate(name)

    # -- running -------------------------------------------------------------

    def send(
        self,
        request: RequestLike,
        *,
        images: Sequence[ImageLike] = (),
        output_type: Any = None,
        output_mode: OutputMode | None = None,
    ) -> AssistantMessage:
        """Run one turn to its end and return the final assistant message.

        ``request`` is the user's text, or parts in order (strings, ImagePart, DocumentPart,
        AudioPart); ``images`` (file paths, bytes, http(s) URLs or ImageParts) follow it:
        ``agent.send("What is in this picture?", images=["cat.png"])``. Its ``usage`` is the
        whole turn's usage; with an ``output_type`` its ``output`` is the validated value.
        PartError (before any request) names a part the model cannot take. Raises
        AgentStopped, CancelledError, AgentBusyError, the LLM client's errors,
        OutputValidationError, or ApprovalRequired (see :meth:`resume`).
        """
        turn = as_request(request, output_type, output_mode, images)
        return drain(self._traced(turn, stepwise=False))

    def resume(
        self,
        state: PausedTurn,
        decisions: Decisions,
        *,
        output_type: Any = None,
        output_mode: OutputMode | None = None,
    ) -> AssistantMessage:
        """Continue a turn paused by ApprovalRequired; return its final answer (or pause again).

        ``decisions``: waiting call id -> True (run), False or a reason (deny). The agent may be
        new (any process) with the saved history; ConfigError, changing nothing, on a mismatch.
        Pass the ``output_type``/``output_mode`` the paused ``send`` had, if it had its own.
        """
        request = as_request("", output_type, output_mode)  # a resumed turn has no new message
        return drain(self._traced(request, resumption(state, decisions), stepwise=False))

    def resume_stream(
        self,
        state: PausedTurn,
        decisions: Decisions,
        *,
        output_type: Any = None,
        output_mode: OutputMode | None = None,
    ) -> Iterator[AgentEvent]:
        """:meth:`resume`, yielding the rest of the turn's events like :meth:`stream`."""
        request = as_request("", output_type, output_mode)
        return self._traced(request, resumption(state, decisions), stepwise=True)

    def stream(
        self,
        request: RequestLike,
        *,
        images: Sequence[ImageLike] = (),
        output_type: Any = None,
        output_mode: OutputMode | None = None,
    ) -> Iterator[AgentEvent]:
        """Run one turn, yielding LLM stream events and agent events as they happen.

        The turn starts at the first ``next()``. Closing the iterator early (a
        ``break``) cancels the turn and leaves the history consistent.
        """
        return self._traced(as_request(request, output_type, output_mode, images), stepwise=True)

    def cancel(self) -> None:
        """Stop the running turn (from any thread): it raises CancelledError soon."""
        turn = self._turn
        if turn is not None:
            log.debug("agent %s: cancel requested", self.name)
            turn.source.cancel()

    def spawn_child(
        self,
        *,
        name: str = "subagent",
        system_prompt: str = "",
        tools: Iterable[Tool | Callable[..., Any]] = (),
        memory: Memory | None = None,
        config: AgentConfig | None = None,
        hooks: AgentHooks | None = None,
        llm: ChatModel | None = None,
        cancel: CancellationToken | None = None,
    ) -> Agent:
        """For framework use (sub-agent tools): a child one level deeper in this tree.

        Call it while this agent runs a turn (from one of its tool calls). The
        child shares this turn's tree (iteration cap, cancellation), is
        cancelled with this turn (and with ``cancel``, e.g. the tool call's
        token), runs its tools on the next depth's pool, adds each send's
        usage to this turn's, and by default reports its events to this
        agent's ``on_subagent_event`` tagged with a new invocation id.
        """
        lineage = Lineage.below(self, name, cancel)
        return Agent(
            llm if llm is not None else self._llm,
            system_prompt,
            tools,
            memory=memory,
            config=config if config is not None else self._config,
            hooks=hooks if hooks is not None else lineage.hooks(self, name),
            runtime=self._runtime,
            name=name,
            approver=self.approver,
            _lineage=lineage,
        )

    def close(self) -> None:
        """Cancel a running turn, unhook MCP clients, close those this agent connected."""
        self.cancel()
        self._tools.unbind_all()
        while self._owned:
            client = self._owned.pop()
            try:
                client.close()
            except AgentSmithError:
                log.warning("agent %s: closing MCP client %s failed", self.name, client.alias)

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, depth={self._depth})"

    # -- the loop ------------------------------------------------------------

    def _traced(
        self, request: AgentRequest, resume: Resumption | None = None, *, stepwise: bool
    ) -> Iterator[AgentEvent]:
        """The turn's events, as one ``invoke_agent`` span when tracing is on (see there)."""
        message = request.user_message if resume is None else None  # a resumed turn has none
        events = get_observer().on_turn_start(self).watch(run_turn(self, request, resume))
        return invoke_agent(
            self, self._identity, events, message, answer=final_message, stepwise=stepwise
        )

    def _on_mcp_event(self, event: object) -> None:
        invoke_hook(self._hooks.on_mcp_event, event, name="on_mcp_event")


def _runtime_of(llm: object) -> Runtime:
    runtime = getattr(llm, "runtime", None)
    return runtime if isinstance(runtime, Runtime) else default_runtime()
