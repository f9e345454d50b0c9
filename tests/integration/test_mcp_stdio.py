"""The MCP client over stdio against real servers: the official SDK's and a hand-written one."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith import (
    AgentTimeoutError,
    CancellationSource,
    CancelledError,
    McpClient,
    McpError,
    McpEvent,
    Notification,
    Runtime,
    ServerConfig,
    TransportError,
    UserMessage,
)
from agent_smith.mcp import adapt_client_tools
from agent_smith.mcp.stdio import StdioTransport
from tests.integration.mcp_helpers import Recorder, echo_from_threads
from tests.integration.servers import sdk_stdio, tiny_stdio
from tests.support.background import Background
from tests.support.tools import tool_context

pytestmark = pytest.mark.usefixtures("no_thread_leak")


def child_pid(client: McpClient) -> int:
    transport = client._keeper.current().transport
    assert isinstance(transport, StdioTransport) and transport.pid is not None
    return transport.pid


def assert_reaped(pid: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


#: The SDK (2.x) speaks both generations: "auto" finds 2026-07-28, "legacy" initialises.
GENERATIONS = {"auto": "2026-07-28", "legacy": "2025-06-18"}


@pytest.fixture(scope="module", params=sorted(GENERATIONS))
def shared(request: pytest.FixtureRequest) -> Iterator[McpClient]:
    """One SDK-server connection per generation for the read-only tests (each takes a second)."""
    with McpClient.connect(sdk_stdio(protocol=request.param)) as client:
        yield client


# -- the official SDK server ----------------------------------------------------


def test_connect_lists_tools_resources_and_prompts(shared: McpClient) -> None:
    names = {t.name for t in shared.tools}
    assert {"echo", "add", "slow", "chatty"} <= names
    echo = next(t for t in shared.tools if t.name == "echo")
    assert echo.parameters["properties"]["text"]["type"] == "string"
    assert [r.uri for r in shared.resources] == ["test://greeting"]
    assert [p.name for p in shared.prompts] == ["greet"]
    assert shared.server_info.name == "agent-smith-test-server"
    assert shared.protocol_version == GENERATIONS[shared.config.protocol]


def test_fifty_concurrent_calls_from_ten_threads_get_their_own_results(shared: McpClient) -> None:
    results = echo_from_threads(shared, argument="text")
    assert results == {(t, c): f"t{t}-c{c}" for t in range(10) for c in range(5)}


def test_tool_results_keep_errors_structure_and_describe_images(shared: McpClient) -> None:
    added = shared.call_tool("add", {"a": 2, "b": 3})
    assert added.content == "5" and added.structured == {"result": 5} and not added.is_error
    assert shared.call_tool("fail", {}).is_error
    assert shared.call_tool("image", {}).content == "a red dot\n[image: image/png, 8 bytes]"


def test_arguments_json_cannot_carry_are_an_mcp_error_and_the_connection_goes_on(
    shared: McpClient,
) -> None:
    with pytest.raises(McpError, match="JSON"):
        shared.call_tool("echo", {"text": object()})
    assert shared.call_tool("echo", {"text": "still here"}).content == "still here"


def test_a_command_that_cannot_be_spawned_is_a_transport_error() -> None:
    with pytest.raises(TransportError, match="cannot start"):
        McpClient.connect(ServerConfig(alias="bad", command=("python\0oops",)))


def test_read_resource_and_get_prompt(shared: McpClient) -> None:
    assert shared.read_resource("test://greeting") == "hello from the resource"
    assert shared.get_prompt("greet", {"name": "Ann"}) == [UserMessage("Please greet Ann warmly.")]


def test_server_requests_are_answered_ping_elicitation_and_roots(shared: McpClient) -> None:
    if shared.config.protocol == "legacy":  # requests on the session; no handlers: defaults
        assert shared.call_tool("ping_client", {}).content == "client answered ping"
        assert shared.call_tool("ask", {"question": "name?"}).content == "decline"
        assert "not found" in shared.call_tool("roots", {}).content
        return
    # 2026-07-28: a server sends no requests (the SDK's session tools are refused), and a
    # client without handlers declares no elicitation, so the server may not ask.
    with pytest.raises(McpError, match="no back-channel"):
        shared.call_tool("ping_client", {})
    with pytest.raises(McpError, match="elicitation capability"):
        shared.call_tool("ask_both", {"question": "name?"})
    # With handlers, the questions ride input_required and the handlers' answers go back.
    asked: list[dict[str, object]] = []
    with McpClient.connect(
        shared.config,
        elicitation_handler=lambda params: asked.append(params) or {"action": "decline"},
        roots_handler=lambda params: asked.append(params) or {"roots": []},
    ) as client:
        result = client.call_tool("ask_both", {"question": "name?"})
    assert result.is_error and "elicitation was decline" in result.content
    assert [params.get("message") for params in asked] == ["name?", None]


def test_registered_elicitation_and_roots_handlers_answer_the_server() -> None:
    with McpClient.connect(
        sdk_stdio(),
        elicitation_handler=lambda p: {"action": "accept", "content": {"answer": "Ann"}},
        roots_handler=lambda p: {"roots": [{"uri": "file:///work", "name": "work"}]},
    ) as client:
        assert client.call_tool("ask", {"question": "name?"}).content == "accept: Ann"
        assert client.call_tool("roots", {}).content == "file:///work"


def test_logging_progress_and_list_changed_reach_the_hook() -> None:
    events = Recorder()
    with McpClient.connect(sdk_stdio(), hook=events) as client:
        assert client.call_tool("chatty", {}, progress_token="p1").content == "chatted"
        events.wait_until(lambda: "notifications/tools/list_changed" in events.methods())
        logged = [e for e in events.events if isinstance(e, Notification)]
        assert logged[0].method == "notifications/message"
        assert logged[0].params["data"] == "chatty says hello"
        progress = [e.params for e in logged if e.method == "notifications/progress"]
        assert [(p["progressToken"], p["progress"]) for p in progress] == [("p1", 1), ("p1", 2)]


def test_list_changed_refreshes_tools_before_the_hook_is_told() -> None:
    seen: list[bool] = []
    told = threading.Event()
    holder: list[McpClient] = []

    def hook(event: McpEvent) -> None:
        if isinstance(event, Notification) and event.method.endswith("list_changed") and holder:
            seen.append("extra" in {t.name for t in holder[0].tools})
            told.set()

    with McpClient.connect(sdk_stdio(), hook=hook) as client:
        holder.append(client)
        assert "extra" not in {t.name for t in client.tools}
        client.call_tool("add_tool", {})
        assert told.wait(10)
        assert seen == [True]
        assert client.call_tool("extra", {}).content == "extra!"


def test_a_megabyte_of_stderr_before_answering_does_not_deadlock(
    shared: McpClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="agent_smith.mcp"):
        result = shared.call_tool("stderr_spam", {"size": 1 << 20}, timeout=30)
    assert result.content == f"wrote {1 << 20}"
    assert any("stderr" in r.getMessage() and "xxxx" in r.getMessage() for r in caplog.records)


def test_timeout_cancels_the_call_on_the_server_and_the_connection_goes_on() -> None:
    with McpClient.connect(sdk_stdio()) as client:
        with pytest.raises(AgentTimeoutError) as info:
            client.call_tool("slow", {"seconds": 30}, timeout=0.5)
        assert info.value.budget == 0.5
        seen = client.call_tool("cancellations", {"wait": 10})
        assert seen.structured is not None and len(seen.structured["result"]) == 1
        assert client.call_tool("echo", {"text": "still here"}).content == "still here"


def test_cancel_token_cancels_a_running_call_on_the_server() -> None:
    source = CancellationSource()

    def hook(event: McpEvent) -> None:
        if isinstance(event, Notification) and event.method == "notifications/progress":
            source.cancel()  # the call is running on the server now

    with McpClient.connect(sdk_stdio(), hook=hook) as client:
        with pytest.raises(CancelledError):
            client.call_tool(
                "slow", {"seconds": 30}, timeout=30, cancel=source.token, progress_token=7
            )
        seen = client.call_tool("cancellations", {"wait": 10})
        assert seen.structured is not None and len(seen.structured["result"]) == 1


def test_server_exit_mid_call_fails_it_and_the_next_call_reconnects() -> None:
    events = Recorder()
    with McpClient.connect(sdk_stdio(), hook=events) as client:
        first = child_pid(client)
        with pytest.raises(TransportError):
            client.call_tool("exit_now", {}, timeout=30)
        events.wait_until(lambda: events.kinds() == ["CONNECTED", "DISCONNECTED"])
        assert client.call_tool("echo", {"text": "back"}).content == "back"
        assert child_pid(client) != first
        assert_reaped(first)
        # The exit_now call was not replayed: that would have killed the new server too.
        events.wait_until(
            lambda: events.kinds() == ["CONNECTED", "DISCONNECTED", "RECONNECTING", "CONNECTED"]
        )
        assert client.call_tool("echo", {"text": "again"}).content == "again"


# -- the hand-written server ------------------------------------------------------


def test_failed_reconnect_is_reported_and_raised(tmp_path: Path) -> None:
    events = Recorder()
    config = tiny_stdio("--once", str(tmp_path / "started"))
    with McpClient.connect(config, hook=events) as client:
        os.kill(child_pid(client), signal.SIGKILL)
        events.wait_until(lambda: "DISCONNECTED" in events.kinds())
        with pytest.raises(TransportError, match="reconnect"):
            client.call_tool("echo", {"text": "x"})
        events.wait_until(lambda: "RECONNECT_FAILED" in events.kinds())
        assert events.kinds() == ["CONNECTED", "DISCONNECTED", "RECONNECTING", "RECONNECT_FAILED"]


def test_reconnect_off_fails_without_respawning() -> None:
    events = Recorder()
    with McpClient.connect(tiny_stdio(reconnect=False), hook=events) as client:
        os.kill(child_pid(client), signal.SIGKILL)
        events.wait_until(lambda: "DISCONNECTED" in events.kinds())
        with pytest.raises(TransportError, match="reconnect is off"):
            client.call_tool("echo", {"text": "x"})
    assert "RECONNECTING" not in events.kinds()


def test_non_json_stdout_lines_are_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="agent_smith.mcp"),
        McpClient.connect(tiny_stdio("--noise")) as client,
    ):
        assert client.call_tool("echo", {"text": "clean"}).content == "clean"
    assert "non-JSON line" in caplog.text


def test_a_server_silent_on_discover_is_initialised_after_a_short_wait_not_the_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The server never answers server/discover; were the probe bounded by the
    # request timeout, connecting would take 120 s (and the log would say so).
    config = tiny_stdio("--silent-discover", request_timeout=120)
    assert config.discover_wait == 5.0
    with (
        caplog.at_level(logging.INFO, logger="agent_smith.mcp"),
        McpClient.connect(config) as client,
    ):
        assert client.protocol_version == "2025-06-18"
        assert client.call_tool("echo", {"text": "old"}).content == "old"
    assert "did not answer server/discover within 5s; initialising" in caplog.text


def test_server_requests_with_id_zero_are_answered_from_the_reader() -> None:
    with McpClient.connect(tiny_stdio("--server-requests")) as client:
        answers = json.loads(client.call_tool("answers", {}, timeout=10).content)
    assert answers == {"0": {}, "1": {"action": "decline"}}


def test_a_call_in_flight_when_the_client_closes_fails_promptly() -> None:
    client = McpClient.connect(tiny_stdio())
    started = threading.Event()

    def call() -> object:
        started.set()
        return client.call_tool("hang", {}, timeout=60)

    job = Background(call, name="test-call")
    assert started.wait(5)
    client.close()
    assert job.join(10)
    assert isinstance(job.error, TransportError)


def test_close_leaves_no_thread_and_reaps_the_child() -> None:
    before = set(threading.enumerate())
    client = McpClient.connect(sdk_stdio(alias="own"))
    pid = child_pid(client)
    assert [t.name for t in set(threading.enumerate()) - before]  # it did start threads
    client.close()
    assert_reaped(pid)
    assert set(threading.enumerate()) - before == set()


def test_close_kills_a_server_that_ignores_eof_and_sigterm() -> None:
    client = McpClient.connect(tiny_stdio("--stubborn"))
    pid = child_pid(client)
    client.close()
    assert_reaped(pid)


def test_a_command_that_cannot_start_is_a_transport_error() -> None:
    config = tiny_stdio()
    bad = type(config)(alias="bad", command=("/nonexistent/mcp-server",))
    with pytest.raises(TransportError, match="cannot start"):
        McpClient.connect(bad)


def test_a_server_that_dies_at_start_is_reported_with_its_status_and_stderr(
    no_thread_leak: None,
) -> None:
    script = "import sys; print('ModuleNotFoundError: no mcp here', file=sys.stderr); sys.exit(3)"
    config = ServerConfig(alias="dies", command=(sys.executable, "-c", script))
    with pytest.raises(TransportError) as info:
        McpClient.connect(config)
    message = str(info.value)
    assert "exited with status 3" in message
    assert "ModuleNotFoundError: no mcp here" in message


# -- the adapter against a real server ------------------------------------------


def test_adapted_tools_are_prefixed_and_call_the_server(
    shared: McpClient, runtime: Runtime
) -> None:
    tools = {t.name: t for t in adapt_client_tools(shared)}
    assert "mcp_sdk__echo" in tools and "mcp_sdk__read_resource" in tools
    assert tools["mcp_sdk__echo"].schema.parameters == next(
        t.parameters for t in shared.tools if t.name == "echo"
    )
    assert tools["mcp_sdk__echo"].invoke({"text": "hi"}, tool_context(runtime)).content == "hi"
    assert tools["mcp_sdk__fail"].invoke({}, tool_context(runtime)).is_error
    read = tools["mcp_sdk__read_resource"]
    assert "test://greeting" in read.schema.description
    assert read.invoke({"uri": "test://greeting"}, tool_context(runtime)).content == (
        "hello from the resource"
    )


def test_adapter_filters_tools_and_honours_budget_and_cancel(runtime: Runtime) -> None:
    source = CancellationSource()

    def hook(event: McpEvent) -> None:
        if isinstance(event, Notification) and event.method == "notifications/progress":
            source.cancel()

    config = sdk_stdio(allow_tools=("slow", "echo", "cancellations"), deny_tools=("echo",))
    with McpClient.connect(config) as client:
        tools = {t.name: t for t in adapt_client_tools(client)}
        assert set(tools) == {"mcp_sdk__slow", "mcp_sdk__cancellations", "mcp_sdk__read_resource"}
        with pytest.raises(AgentTimeoutError):
            tools["mcp_sdk__slow"].invoke({"seconds": 30}, tool_context(runtime, budget=0.5))
        source.cancel()
        with pytest.raises(CancelledError):
            tools["mcp_sdk__slow"].invoke({"seconds": 30}, tool_context(runtime, cancel=source))
        seen = client.call_tool("cancellations", {"wait": 10})
        assert seen.structured is not None and len(seen.structured["result"]) >= 1


def test_the_bundled_example_server_offers_echo_and_now() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "mcp_server_example.py"
    config = sdk_stdio(alias="demo")
    config = type(config)(alias="demo", command=(config.command[0], str(example)))
    with McpClient.connect(config) as client:
        assert {t.name for t in client.tools} == {"echo", "now"}
        assert client.call_tool("echo", {"text": "hey"}).content == "hey"
        assert client.call_tool("now", {}).content.startswith("20")
