"""An MCP server asking the user to visit a page does not eat the call's time (handshake era).

The hand-written stdio server's ``visit`` tool sends a URL-mode
``elicitation/create`` and answers the call with the client's answer; with
``--visit-notifies`` it also sends a log notification while the client's
handler runs. The person takes several times the request timeout (and the
agent tool's timeout): the call still answers, and the notification reaches
the hook while the person is still away.
"""

from __future__ import annotations

import json
import threading

import pytest

from agent_smith import CancellationSource, McpClient, Runtime, ToolCall, ToolOptions
from agent_smith.mcp import Elicitation, adapt_client_tools
from agent_smith.tools import ToolRegistry
from agent_smith.tools.dispatch import dispatch_tool_calls
from tests.integration.mcp_helpers import Recorder
from tests.integration.servers import tiny_stdio

pytestmark = pytest.mark.usefixtures("no_thread_leak")

BOUND = 10.0
TIMEOUT = 0.5  # the request's and the tool's timeout; the person takes several times longer


def _slow_person(recorder: Recorder, seen_while_away: list[str]) -> Elicitation:
    def visit(message: str, url: str) -> bool:
        # The server's notification arrives while this handler waits: the hook hears it now.
        recorder.wait_until(lambda: "notifications/message" in recorder.methods(), BOUND)
        seen_while_away.extend(recorder.methods())
        threading.Event().wait(3 * TIMEOUT)  # the person is away for a while
        return True

    return Elicitation(form=None, url=visit)


def test_a_waiting_url_elicitation_stops_the_request_timeout_and_holds_up_no_event() -> None:
    recorder, seen = Recorder(), []
    config = tiny_stdio("--visit-notifies", request_timeout=TIMEOUT)
    handler = _slow_person(recorder, seen)
    with McpClient.connect(config, hook=recorder, elicitation_handler=handler) as client:
        result = client.call_tool("visit", {})
        assert json.loads(result.content) == {"action": "accept"}
        assert "notifications/message" in seen
        assert client.call_tool("echo", {"text": "still here"}).content == "still here"


def test_an_agent_tool_call_waiting_for_the_person_keeps_its_timeout_for_its_work(
    runtime: Runtime,
) -> None:
    recorder, seen = Recorder(), []
    config = tiny_stdio("--visit-notifies", request_timeout=BOUND)
    handler = _slow_person(recorder, seen)
    with McpClient.connect(config, hook=recorder, elicitation_handler=handler) as client:
        registry = ToolRegistry()
        for remote in adapt_client_tools(client):
            registry.add(remote, ToolOptions(timeout=TIMEOUT))
        (outcome,) = dispatch_tool_calls(
            [ToolCall("c1", "mcp_tiny__visit", {})],
            registry,
            runtime=runtime,
            depth=0,
            cancel=CancellationSource().token,
            default_timeout=TIMEOUT,
            max_result_bytes=65536,
        )
        assert not outcome.message.is_error, outcome.message.content
        assert json.loads(outcome.message.content) == {"action": "accept"}


def test_handler_timeout_bounds_a_person_who_never_answers() -> None:
    released = threading.Event()

    def never(message: str, url: str) -> bool:
        released.wait(BOUND)
        return True

    config = tiny_stdio(request_timeout=BOUND, handler_timeout=TIMEOUT)
    with McpClient.connect(config, elicitation_handler=Elicitation(form=None, url=never)) as c:
        try:
            answer = json.loads(c.call_tool("visit", {}).content)  # the server relays our error
        finally:
            released.set()
    assert answer["code"] == -32603 and "did not answer within" in answer["message"]
