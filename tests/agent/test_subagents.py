"""Sub-agents against the scripted server: factories, depth, tree cap, fan-out, cancel, events.

The scripted model decides from the system prompt who is asking (each spec has
its own prompt), so many agents can share one server concurrently.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    AgentHooks,
    AgentStopped,
    CancelledError,
    ConfigError,
    FullMemory,
    LlmClient,
    Memory,
    Runtime,
    SubAgentSpec,
    SubAgentTool,
    Tool,
    ToolContext,
    ToolMessage,
    UserMessage,
    make_tool,
)
from agent_smith.agent.events import SubAgentEvent
from agent_smith.agent.tree import AgentTree
from agent_smith.llm.events import TokenDelta
from agent_smith.messages import AssistantMessage, SystemMessage, TokenUsage, ToolCall
from tests.support.background import CANCEL_BOUND, Background
from tests.support.llm_server import Calls, Chunks, Reply, ScriptedLlmServer, Text

#: Generous bound for anything the tests wait on (a bug fails, never hangs).
WAIT = 10.0
#: The issue's bound for cancellation to reach every descendant.

JsonObject = dict[str, Any]


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every test here leaves no agent_smith thread behind."""


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    with Runtime() as rt:  # the default pool size, on purpose
        yield rt


@pytest.fixture
def llm(llm_server: ScriptedLlmServer, runtime: Runtime) -> LlmClient:
    return LlmClient(llm_server.url, "test", runtime=runtime, max_retries=0)


# -- helpers -------------------------------------------------------------------


def system_of(body: JsonObject) -> str:
    messages = body.get("messages", [])
    if messages and messages[0].get("role") == "system":
        return str(messages[0].get("content", ""))
    return ""


def tool_results(body: JsonObject) -> list[JsonObject]:
    """The tool messages after the last user message (this round's inputs)."""
    messages = body.get("messages", [])
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    return [m for m in messages[last_user + 1 :] if m.get("role") == "tool"]


def user_texts(body: JsonObject) -> list[str]:
    return [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]


def fan_out(tool_name: str, count: int) -> Calls:
    return Calls(*((tool_name, {"task": f"part {i}"}) for i in range(count)))


class Counter:
    """A thread-safe count that can be waited on."""

    def __init__(self) -> None:
        self._value = 0
        self._cond = threading.Condition()

    def add(self) -> None:
        with self._cond:
            self._value += 1
            self._cond.notify_all()

    def wait_for(self, target: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._value >= target, timeout)

    @property
    def value(self) -> int:
        with self._cond:
            return self._value


def child_with_grandchild() -> SubAgentSpec:
    """A "child" sub-agent whose one tool is a "grandchild" sub-agent."""
    grandchild = SubAgentSpec("grandchild", "Digs.", system_prompt="grandchild")
    return SubAgentSpec(
        "child",
        "Delegates.",
        system_prompt="child",
        tool_factories=(lambda: SubAgentTool(grandchild),),
    )


def tool_messages(agent: Agent) -> list[ToolMessage]:
    return [m for m in agent.history if isinstance(m, ToolMessage)]


def noop() -> str:
    """Do nothing."""
    return "ok"


# -- the spec and the tool -----------------------------------------------------


def test_the_tool_exposes_a_required_task_string() -> None:
    spec = SubAgentSpec("researcher", "Looks things up.")
    schema = SubAgentTool(spec).schema

    assert schema.name == "researcher"
    assert schema.description == "Looks things up."
    assert schema.parameters["required"] == ["task"]
    assert schema.parameters["properties"]["task"]["type"] == "string"


def test_a_spec_name_that_is_not_a_tool_name_is_refused() -> None:
    with pytest.raises(ConfigError, match="sub-agent name"):
        SubAgentSpec("two words", "Not a tool name.")


def test_a_sub_agent_tool_outside_an_agent_returns_an_error(runtime: Runtime) -> None:
    from agent_smith.base.cancellation import CancellationSource

    ctx = ToolContext(
        cancel=CancellationSource().token,
        budget=1.0,
        call_id="c1",
        logger=__import__("logging").getLogger("test"),
        runtime=runtime,
    )
    result = SubAgentTool(SubAgentSpec("helper", "Helps.")).invoke({"task": "x"}, ctx)

    assert result.is_error
    assert "only run as a tool call of an agent" in result.content


def test_each_invocation_builds_fresh_memory_and_tools(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    memories: list[Memory] = []
    tools: list[Tool] = []

    def make_memory() -> Memory:
        memory = FullMemory()
        memories.append(memory)
        return memory

    def make_note() -> Tool:
        def note(text: str) -> str:
            """Take a note."""
            return text

        made = make_tool(note)
        tools.append(made)
        return made

    spec = SubAgentSpec(
        "helper",
        "Helps.",
        system_prompt="You are the helper.",
        tool_factories=(make_note,),
        memory_factory=make_memory,
    )
    llm_server.script(
        Calls(("helper", {"task": "first job"})),  # root
        Text("first done"),  # helper 1
        Calls(("helper", {"task": "second job"})),  # root
        Text("second done"),  # helper 2
        Text("both done"),  # root
    )
    root = Agent(llm, "You are the root.", runtime=runtime)
    root.add_subagent(spec)

    final = root.send("do two jobs")

    assert final.content == "both done"
    assert [m.content for m in tool_messages(root)] == ["first done", "second done"]
    assert len(memories) == 2 and memories[0] is not memories[1]
    assert len(tools) == 2 and tools[0] is not tools[1]
    # Each child saw only its own task: no history is shared between invocations.
    assert [m.content for m in memories[0].messages()] == ["first job", "first done"]
    assert [m.content for m in memories[1].messages()] == ["second job", "second done"]
    second_child = llm_server.requests[3]
    assert system_of(second_child) == "You are the helper."
    assert user_texts(second_child) == ["second job"]
    assert [t["function"]["name"] for t in second_child["tools"]] == ["note"]


def test_without_a_memory_factory_each_child_starts_empty(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    spec = SubAgentSpec("helper", "Helps.", system_prompt="helper")
    llm_server.script(
        Calls(("helper", {"task": "one"}), ("helper", {"task": "two"})),
        Text("a"),
        Text("b"),
        Text("done"),
    )
    root = Agent(llm, "root", [SubAgentTool(spec)], runtime=runtime)

    root.send("go")

    children = [body for body in llm_server.requests if system_of(body) == "helper"]
    assert sorted(user_texts(body)[0] for body in children) == ["one", "two"]
    assert all(len(body["messages"]) == 2 for body in children)


# -- depth ---------------------------------------------------------------------


def chain_responder(body: JsonObject) -> Reply:
    """``level N`` agents delegate once to ``level{N+1}``, then report what came back."""
    system = system_of(body)
    level = int(system.removeprefix("level "))
    results = tool_results(body)
    if not results and body.get("tools"):
        return Calls((f"level{level + 1}", {"task": f"from level {level}"}))
    return Text(f"level {level} got: {results[-1]['content'] if results else 'nothing'}")


def chain_specs(levels: int) -> SubAgentSpec:
    """Specs ``level1`` .. ``level<levels>``, each able to call the next one."""
    spec: SubAgentSpec | None = None
    for level in range(levels, 0, -1):
        deeper = spec
        factories = (lambda s=deeper: SubAgentTool(s),) if deeper is not None else ()
        spec = SubAgentSpec(
            f"level{level}", "Delegate.", system_prompt=f"level {level}", tool_factories=factories
        )
    assert spec is not None
    return spec


def test_default_depth_limit_allows_three_levels_and_refuses_the_fourth(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.responder = chain_responder
    root = Agent(llm, "level 0", runtime=runtime)
    root.add_subagent(chain_specs(4))

    final = root.send("start")

    systems = [system_of(body) for body in llm_server.requests]
    assert "level 3" in systems
    assert "level 4" not in systems  # never built
    level3_second = [b for b in llm_server.requests if system_of(b) == "level 3"][-1]
    refused = tool_results(level3_second)[0]
    payload = json.loads(refused["content"])
    assert payload["error"] is True
    assert "depth limit" in payload["message"] and "depth 4" in payload["message"]
    assert final.content.startswith("level 0 got: level 1 got: level 2 got: level 3 got:")


def test_a_call_beyond_max_subagent_depth_is_an_error_result_the_model_sees(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.responder = chain_responder
    root = Agent(llm, "level 0", config=AgentConfig(max_subagent_depth=1), runtime=runtime)
    root.add_subagent(chain_specs(2))

    final = root.send("start")

    assert [system_of(b) for b in llm_server.requests] == [
        "level 0",
        "level 1",
        "level 1",
        "level 0",
    ]
    assert "depth limit reached" in final.content
    assert final.content.startswith("level 0 got: level 1 got: ")


def test_max_subagent_depth_zero_disables_sub_agents(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    built: list[int] = []

    def make_memory() -> Memory:
        built.append(1)
        return FullMemory()

    spec = SubAgentSpec("helper", "Helps.", system_prompt="helper", memory_factory=make_memory)
    llm_server.script(Calls(("helper", {"task": "x"})), Text("ok, alone then"))
    root = Agent(llm, "root", config=AgentConfig(max_subagent_depth=0), runtime=runtime)
    root.add_subagent(spec)

    final = root.send("go")

    assert final.content == "ok, alone then"
    assert built == []
    assert len(llm_server.requests) == 2
    (result,) = tool_messages(root)
    assert result.is_error and "max_subagent_depth is 0" in result.content
    # The model saw the error in its second request.
    assert "depth limit" in tool_results(llm_server.requests[1])[0]["content"]


# -- the tree-wide iteration cap ------------------------------------------------


def test_agent_tree_counts_exactly_up_to_its_cap_from_many_threads() -> None:
    tree = AgentTree(500)
    start = threading.Barrier(16, timeout=WAIT)
    taken = Counter()

    def claim() -> None:
        start.wait()
        for _ in range(100):
            if tree.take_iteration():
                taken.add()

    threads = [threading.Thread(target=claim, name=f"test-claim-{i}") for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)

    assert taken.value == 500
    assert tree.iterations == 500


def test_parallel_children_race_for_the_last_tree_iterations(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    # Root: 1 call. Eight workers: 1 call each, then all meet at a barrier and
    # race for their second call. A cap of 12 leaves 3 of those 8 calls.
    cap, workers = 12, 8
    all_waiting = threading.Barrier(workers, timeout=WAIT)

    def make_rendezvous() -> Tool:
        def rendezvous() -> str:
            """Wait for every worker."""
            all_waiting.wait()
            return "everyone is here"

        return make_tool(rendezvous)

    def respond(body: JsonObject) -> Reply:
        if system_of(body) == "root":
            return fan_out("worker", workers) if not tool_results(body) else Text("root done")
        return Calls(("rendezvous", {})) if not tool_results(body) else Text("worker done")

    llm_server.responder = respond
    spec = SubAgentSpec(
        "worker", "Works.", system_prompt="worker", tool_factories=(make_rendezvous,)
    )
    root = Agent(llm, "root", config=AgentConfig(tree_max_iterations=cap), runtime=runtime)
    root.add_subagent(spec)

    with pytest.raises(AgentStopped) as info:
        root.send("go")

    # The losers' stops are error results in the parent; the root itself stops
    # when it asks for its next round.
    assert info.value.condition == "tree_iterations"
    assert len(llm_server.requests) == cap
    results = tool_messages(root)
    assert len(results) == workers
    won = [r for r in results if not r.is_error]
    lost = [r for r in results if r.is_error]
    assert [r.content for r in won] == ["worker done"] * 3
    assert len(lost) == 5
    for result in lost:
        message = json.loads(result.content)["message"]
        assert "sub-agent 'worker' stopped (tree_iterations)" in message


# -- no deadlock ---------------------------------------------------------------


def test_eight_by_eight_by_eight_fan_out_to_depth_three_finishes_on_default_pools(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    assert runtime.max_workers == 8  # fan-out 8 at each level: as wide as each pool

    def respond(body: JsonObject) -> Reply:
        level = int(system_of(body).removeprefix("level "))
        results = tool_results(body)
        if level < 3 and not results:
            return fan_out(f"level{level + 1}", 8)
        if any(r["content"].startswith("{") for r in results):
            return Text(f"level {level} saw an error")
        return Text(f"level {level} done")

    llm_server.responder = respond
    # 1 + 8 + 64 agents fan out and answer (2 calls each), 512 leaves answer (1 call).
    expected_calls = 2 * (1 + 8 + 64) + 512
    # A deadlock would surface as tool timeouts and errors, then as the deadline.
    config = AgentConfig(tree_max_iterations=expected_calls, deadline=120.0)
    root = Agent(llm, "level 0", config=config, runtime=runtime)
    root.add_subagent(chain_specs(3))

    final = root.send("go")

    assert final.content == "level 0 done"
    assert len(llm_server.requests) == expected_calls
    assert [m.content for m in tool_messages(root)] == ["level 1 done"] * 8


# -- cancellation --------------------------------------------------------------


def test_cancelling_the_root_stops_streaming_and_tool_running_grandchildren(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    hold = threading.Event()  # never set while the test runs: the stream stalls
    partial = (
        'data: {"choices":[{"index":0,"delta":{"content":"partial"},"finish_reason":null}]}\n\n'
    )
    streaming = Counter()  # grandchildren that got their first token
    in_tool = Counter()  # grandchildren whose tool waits on its token
    tool_returned = Counter()
    cancelled: list[tuple[str, int]] = []
    cancelled_count = Counter()

    def wait_for_cancel(ctx: ToolContext) -> str:
        """Wait until cancelled."""
        in_tool.add()
        ctx.cancel.wait(WAIT)
        tool_returned.add()
        return "cancelled" if ctx.cancel.cancelled else "not cancelled"

    def respond(body: JsonObject) -> Reply:
        system = system_of(body)
        if system == "root":
            return fan_out("child", 2)
        if system == "child":
            return Calls(("streamer", {"task": "talk"}), ("blocker", {"task": "wait"}))
        if system == "streamer":
            return Chunks(partial, hold)
        return Calls(("wait_for_cancel", {}))  # blocker

    def on_subagent_event(event: SubAgentEvent) -> None:
        if isinstance(event.event, TokenDelta) and event.name == "streamer":
            streaming.add()
        if isinstance(event.event, CancelledError):
            cancelled.append((event.name, event.depth))
            cancelled_count.add()

    llm_server.responder = respond
    streamer = SubAgentSpec("streamer", "Talks.", system_prompt="streamer")
    blocker = SubAgentSpec(
        "blocker",
        "Waits.",
        system_prompt="blocker",
        tool_factories=(lambda: make_tool(wait_for_cancel),),
    )
    child = SubAgentSpec(
        "child",
        "Delegates.",
        system_prompt="child",
        tool_factories=(lambda: SubAgentTool(streamer), lambda: SubAgentTool(blocker)),
    )
    hooks = AgentHooks(on_subagent_event=on_subagent_event)
    root = Agent(llm, "root", hooks=hooks, runtime=runtime)
    root.add_subagent(child)

    job = Background(lambda: root.send("go"), name="test-root-send")
    try:
        assert streaming.wait_for(2, WAIT), "grandchildren never started streaming"
        assert in_tool.wait_for(2, WAIT), "grandchildren never reached their tool"
        root.cancel()
        # One bound for everything: the root, 2 children and 4 grandchildren.
        deadline = time.monotonic() + CANCEL_BOUND

        def left() -> float:
            return max(0.0, deadline - time.monotonic())

        root_stopped = job.done.wait(left())
        all_cancelled = cancelled_count.wait_for(6, left())
        tools_returned = tool_returned.wait_for(2, left())
        assert root_stopped and all_cancelled and tools_returned, (
            f"root done={root_stopped}, cancelled={sorted(cancelled)}, "
            f"tools returned={tool_returned.value}"
        )
    finally:
        hold.set()
        job.join(WAIT)

    assert isinstance(job.error, CancelledError)
    assert sorted(cancelled) == [
        ("blocker", 2),
        ("blocker", 2),
        ("child", 1),
        ("child", 1),
        ("streamer", 2),
        ("streamer", 2),
    ]
    # Every recorded call has its (cancelled) result in the root's history.
    assert len(tool_messages(root)) == 2 and all(m.is_error for m in tool_messages(root))
    runtime.close()  # joins every worker; the autouse fixture checks none is left


# -- events --------------------------------------------------------------------


def test_sub_agent_events_reach_the_parent_tagged_with_name_and_depth(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    seen: list[SubAgentEvent] = []
    root_messages: list[Any] = []
    child = child_with_grandchild()
    llm_server.script(
        Calls(("child", {"task": "dig"})),  # root
        Calls(("grandchild", {"task": "dig deeper"})),  # child
        Text("found it"),  # grandchild
        Text("child says found it"),  # child
        Text("all found"),  # root
    )
    hooks = AgentHooks(on_subagent_event=seen.append, on_message=root_messages.append)
    root = Agent(llm, "root", hooks=hooks, runtime=runtime)
    root.add_subagent(child)

    root.send("go")

    tags = {(e.name, e.depth) for e in seen}
    assert tags == {("child", 1), ("grandchild", 2)}

    def of(name: str, kind: type) -> list[Any]:
        return [e.event for e in seen if e.name == name and isinstance(e.event, kind)]

    # The child's messages, tool calls, results and stream events are tagged ...
    assert UserMessage("dig") in of("child", UserMessage)
    assert [c.name for c in of("child", ToolCall)] == ["grandchild"]
    # (a tool result reaches both on_message and on_tool_result)
    assert {m.content for m in of("child", ToolMessage)} == {"found it"}
    assert "".join(d.text for d in of("child", TokenDelta)) == "child says found it"
    # ... and so are the grandchild's, with its own name and depth.
    assert UserMessage("dig deeper") in of("grandchild", UserMessage)
    assert [m.content for m in of("grandchild", AssistantMessage)] == ["found it"]
    assert "".join(d.text for d in of("grandchild", TokenDelta)) == "found it"
    # The grandchild finished before its parent answered.
    order = [(e.name, e.event) for e in seen if isinstance(e.event, AssistantMessage)]
    assert [name for name, m in order if m.content] == ["grandchild", "child"]
    # The root's own hooks only see the root's messages.
    assert not any(isinstance(m, SystemMessage) for m in root_messages)
    assert [m.content for m in root_messages if isinstance(m, UserMessage)] == ["go"]


def test_parallel_invocations_and_grandchildren_carry_their_own_ids_and_parent_links(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    seen: list[SubAgentEvent] = []  # list.append is atomic: children report concurrently
    digger = SubAgentSpec("digger", "Digs.", system_prompt="digger")
    worker = SubAgentSpec(
        "worker", "Works.", system_prompt="worker", tool_factories=(lambda: SubAgentTool(digger),)
    )

    def respond(body: JsonObject) -> Reply:
        system, results, task = system_of(body), tool_results(body), user_texts(body)[0]
        if system == "root":
            return fan_out("worker", 2) if not results else Text("root done")
        if system == "worker":
            if not results:
                return Calls(("digger", {"task": f"dig {task}"}))
            return Text(f"worker {task} got {results[0]['content']}")
        return Text(f"dug {task}")

    llm_server.responder = respond
    root = Agent(llm, "root", hooks=AgentHooks(on_subagent_event=seen.append), runtime=runtime)
    root.add_subagent(worker)

    assert root.send("go").content == "root done"

    # One node per invocation; every event of a node carries the same tags.
    nodes: dict[str, set[tuple[str, int, str | None]]] = {}
    tasks: dict[str, str] = {}
    for e in seen:
        nodes.setdefault(e.invocation, set()).add((e.name, e.depth, e.parent))
        if isinstance(e.event, UserMessage):
            tasks[e.invocation] = str(e.event.content)
    assert all(len(tags) == 1 for tags in nodes.values())
    tag = {invocation: next(iter(tags)) for invocation, tags in nodes.items()}
    workers = [i for i, (name, _, _) in tag.items() if name == "worker"]
    diggers = [i for i, (name, _, _) in tag.items() if name == "digger"]
    assert len(workers) == 2 and len(diggers) == 2 and len(tag) == 4
    assert all(tag[w][1:] == (1, None) for w in workers)
    assert sorted(tasks[w] for w in workers) == ["part 0", "part 1"]
    # Each grandchild points at the worker that started it (its task names it).
    for d in diggers:
        _, depth, parent = tag[d]
        assert depth == 2 and parent in workers
        assert tasks[d] == f"dig {tasks[parent]}"
    # Each worker's tool result is its own digger's answer.
    for w in workers:
        results = [e.event for e in seen if e.invocation == w and isinstance(e.event, ToolMessage)]
        assert {m.content for m in results} == {f"dug dig {tasks[w]}"}


# -- token usage ---------------------------------------------------------------


def test_the_roots_usage_covers_children_and_grandchildren(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    child = child_with_grandchild()
    llm_server.script(
        Calls(("child", {"task": "dig"}), usage=(100, 10)),  # root
        Calls(("grandchild", {"task": "dig deeper"}), usage=(20, 2)),  # child
        Text("found it", usage=(3, 1)),  # grandchild
        Text("child says found it", usage=(20, 2)),  # child
        Text("all found", usage=(100, 10)),  # root
    )
    root = Agent(llm, "root", runtime=runtime)
    root.add_subagent(child)

    final = root.send("go")

    assert final.content == "all found"
    assert final.usage == TokenUsage(243, 25, 268)
    assert root.usage == TokenUsage(243, 25, 268)


def test_a_stopped_childs_usage_still_counts_for_its_parent(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    spec = SubAgentSpec(
        "helper",
        "Helps.",
        system_prompt="helper",
        tool_factories=(lambda: make_tool(noop),),
        config=AgentConfig(max_iterations=1),
    )
    llm_server.script(
        Calls(("helper", {"task": "loop"}), usage=(10, 5)),  # root
        Calls(("noop", {}), usage=(40, 0)),  # helper's only round; its next one is refused
        Text("helper gave up", usage=(10, 5)),  # root
    )
    root = Agent(llm, "root", runtime=runtime)
    root.add_subagent(spec)

    final = root.send("go")

    (result,) = tool_messages(root)
    assert result.is_error and "stopped (max_iterations)" in result.content
    assert final.usage == TokenUsage(60, 10, 70)


def test_a_childs_usage_counts_against_the_parents_max_total_tokens(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    spec = SubAgentSpec(
        "helper", "Helps.", system_prompt="helper", config=AgentConfig(max_total_tokens=1000)
    )
    llm_server.script(
        Calls(("helper", {"task": "expensive"}), usage=(10, 5)),  # root: 15 tokens
        Text("that was costly", usage=(150, 50)),  # helper: 200 tokens
        Text("root carries on"),  # must not be asked for: 215 > 100
    )
    root = Agent(llm, "root", config=AgentConfig(max_total_tokens=100), runtime=runtime)
    root.add_subagent(spec)

    with pytest.raises(AgentStopped) as info:
        root.send("go")

    assert info.value.condition == "max_total_tokens"
    assert "215 tokens used" in str(info.value)
    assert len(llm_server.requests) == 2
    assert [m.content for m in tool_messages(root)] == ["that was costly"]
    assert root.usage.total == 215
