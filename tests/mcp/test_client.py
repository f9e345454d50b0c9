"""McpClient against an in-memory scripted server: lifecycle, lists, errors, sessions."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

import agent_smith
from agent_smith import (
    AgentTimeoutError,
    LifecycleEvent,
    McpClient,
    McpError,
    McpEvent,
    McpProtocolError,
    Notification,
    TransportError,
    UserMessage,
)
from agent_smith.messages import AssistantMessage
from tests.mcp.scripted import RpcFailure, ScriptedServer
from tests.support.background import Background

Connect = Callable[..., McpClient]


def listing(names: list[str]) -> ScriptedServer:
    """A server whose ``tools/list`` answers with what ``names`` holds at the time."""
    return ScriptedServer(
        {"tools/list": lambda p: {"tools": [{"name": n, "inputSchema": {}} for n in names]}}
    )


class ToolsOnListChanged:
    """A hook that notes the client's tool names whenever it hears ``list_changed``."""

    def __init__(self) -> None:
        self.client: McpClient | None = None
        self.seen: list[list[str]] = []
        self.heard = threading.Event()

    def __call__(self, event: McpEvent) -> None:
        if isinstance(event, Notification) and event.method == "notifications/tools/list_changed":
            assert self.client is not None
            self.seen.append([t.name for t in self.client.tools])
            self.heard.set()


def test_initialize_offers_the_configured_revision_and_names_the_client(scripted: Connect) -> None:
    server = ScriptedServer()
    client = scripted(server, protocol_version="2025-11-25", protocol="legacy")
    init = server.sent[0]
    assert init["method"] == "initialize"
    assert init["params"]["protocolVersion"] == "2025-11-25"
    assert init["params"]["clientInfo"] == {
        "name": "agent_smith",
        "version": agent_smith.__version__,
    }
    assert server.methods()[:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert client.protocol_version == "2025-11-25"
    assert server.negotiated_version == "2025-11-25"
    assert client.server_info.name == "scripted"


@pytest.mark.parametrize("answer", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_supported_revisions_chosen_by_the_server_are_accepted(
    scripted: Connect, answer: str
) -> None:
    client = scripted(ScriptedServer(protocol=answer))
    assert client.protocol_version == answer


def test_an_unknown_revision_is_refused_clearly(scripted: Connect) -> None:
    server = ScriptedServer(protocol="2024-11-05")
    with pytest.raises(McpProtocolError, match="2024-11-05"):
        scripted(server)
    assert server.closed


def test_lists_follow_next_cursor_pagination(scripted: Connect) -> None:
    def pages(kind: str, make: Callable[[int], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        def handler(params: dict[str, Any]) -> dict[str, Any]:
            page = int(params.get("cursor", "0"))
            result: dict[str, Any] = {kind: [make(page * 2), make(page * 2 + 1)]}
            if page < 2:
                result["nextCursor"] = str(page + 1)
            return result

        return handler

    server = ScriptedServer(
        {
            "tools/list": pages(
                "tools", lambda n: {"name": f"t{n}", "inputSchema": {"type": "object"}}
            ),
            "resources/list": pages("resources", lambda n: {"uri": f"r://{n}", "name": f"r{n}"}),
            "prompts/list": pages("prompts", lambda n: {"name": f"p{n}"}),
        },
        capabilities={"tools": {}, "resources": {}, "prompts": {}},
    )
    client = scripted(server)
    assert [t.name for t in client.tools] == [f"t{n}" for n in range(6)]
    assert [r.uri for r in client.resources] == [f"r://{n}" for n in range(6)]
    assert [p.name for p in client.prompts] == [f"p{n}" for n in range(6)]


def test_a_repeated_cursor_is_a_protocol_error(scripted: Connect) -> None:
    server = ScriptedServer({"tools/list": lambda p: {"tools": [], "nextCursor": "same"}})
    with pytest.raises(McpProtocolError, match="nextCursor"):
        scripted(server)


def test_tool_schemas_pass_through_untouched_and_filters_apply(scripted: Connect) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer", "minimum": 3}}, "$defs": {}}
    tools = [{"name": n, "description": f"d{n}", "inputSchema": schema} for n in ("a", "b", "c")]
    server = ScriptedServer({"tools/list": lambda p: {"tools": tools}})
    client = scripted(server, allow_tools=("a", "b"), deny_tools=("b",))
    assert [(t.name, t.description) for t in client.tools] == [("a", "da")]
    assert client.tools[0].parameters == schema
    with pytest.raises(McpError, match="not allowed"):
        client.call_tool("b", {})


def test_unsupported_optional_lists_warn_and_stay_empty(
    scripted: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    server = ScriptedServer(capabilities={"tools": {}, "resources": {}, "prompts": {}})
    with caplog.at_level(logging.WARNING, logger="agent_smith.mcp"):
        client = scripted(server)
    assert client.resources == [] and client.prompts == []
    assert "resources/list failed" in caplog.text
    assert "prompts/list failed" in caplog.text


def test_lists_the_server_did_not_advertise_are_not_requested(scripted: Connect) -> None:
    server = ScriptedServer(capabilities={"tools": {}})
    scripted(server)
    assert "resources/list" not in server.methods()
    assert "prompts/list" not in server.methods()


def test_failing_tools_list_is_fatal_only_when_tools_are_required(scripted: Connect) -> None:
    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise RpcFailure(-32603, "broken")

    with pytest.raises(McpError) as info:
        scripted(ScriptedServer({"tools/list": broken}))
    assert info.value.rpc_code == -32603
    client = scripted(ScriptedServer({"tools/list": broken}), tools_required=False)
    assert client.tools == []


def test_error_answers_raise_mcp_error_with_the_rpc_code(scripted: Connect) -> None:
    def missing(params: dict[str, Any]) -> dict[str, Any]:
        raise RpcFailure(-32602, "unknown tool")

    client = scripted(ScriptedServer({"tools/call": missing}))
    with pytest.raises(McpError) as info:
        client.call_tool("nope", {})
    assert info.value.rpc_code == -32602


def test_call_tool_result_keeps_is_error_structured_and_describes_images(scripted: Connect) -> None:
    result = {
        "content": [
            {"type": "text", "text": "t"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
        ],
        "isError": True,
        "structuredContent": {"k": 1},
    }
    client = scripted(ScriptedServer({"tools/call": lambda p: result}))
    got = client.call_tool("echo", {"a": 1})
    assert got.content == "t\n[image: image/png, 3 bytes]"
    assert got.is_error is True
    assert got.structured == {"k": 1}


def test_get_prompt_gives_messages_and_refuses_non_text(scripted: Connect) -> None:
    text = {
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": {"type": "text", "text": "hello"}},
        ]
    }
    image = {
        "messages": [{"role": "user", "content": {"type": "image", "data": "", "mimeType": "x"}}]
    }
    server = ScriptedServer({"prompts/get": lambda p: text if p["name"] == "t" else image})
    client = scripted(server)
    assert client.get_prompt("t", {"a": "b"}) == [
        UserMessage("hi"),
        AssistantMessage(content="hello"),
    ]
    assert server.sent[-1]["params"] == {"name": "t", "arguments": {"a": "b"}}
    with pytest.raises(McpError, match="image"):
        client.get_prompt("i")


def test_stale_session_reinitialises_once_and_resends_other_requests(scripted: Connect) -> None:
    server = ScriptedServer(
        {"resources/read": lambda p: {"contents": [{"uri": "u", "text": "body"}]}}
    )
    client = scripted(server)
    server.stale_once.add("resources/read")
    assert client.read_resource("u") == "body"
    assert server.methods()[-3:] == ["initialize", "notifications/initialized", "resources/read"]
    assert server.methods().count("initialize") == 2


def test_stale_session_during_tools_call_reinitialises_but_does_not_resend(
    scripted: Connect,
) -> None:
    calls: list[dict[str, Any]] = []

    def call(params: dict[str, Any]) -> dict[str, Any]:
        calls.append(params)
        return {"content": []}

    server = ScriptedServer({"tools/call": call})
    client = scripted(server)
    server.stale_once.add("tools/call")
    with pytest.raises(TransportError, match="session"):
        client.call_tool("echo", {})
    assert calls == []
    assert server.methods().count("initialize") == 2
    client.call_tool("echo", {})
    assert len(calls) == 1


def test_server_requests_use_handlers_or_safe_defaults(scripted: Connect) -> None:
    server = ScriptedServer()
    scripted(server)
    server.push({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {}})
    server.push({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {}})
    server.push({"jsonrpc": "2.0", "id": 2, "method": "roots/list", "params": {}})
    server.push({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    answers = server.wait_for_answers({0, 1, 2, 3})
    assert answers[0]["result"] == {"action": "decline"}
    assert answers[1]["error"]["code"] == -32601
    assert answers[2]["error"]["code"] == -32601
    assert answers[3]["result"] == {}


def test_registered_handlers_answer_and_are_advertised(scripted: Connect) -> None:
    server = ScriptedServer()
    scripted(
        server,
        elicitation_handler=lambda p: {"action": "accept", "content": {"name": "x"}},
        sampling_handler=lambda p: {"role": "assistant", "content": {"type": "text", "text": "s"}},
        roots_handler=lambda p: {"roots": []},
        protocol="legacy",
    )
    caps = server.sent[0]["params"]["capabilities"]
    assert set(caps) == {"elicitation", "sampling", "roots"}
    server.push({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {}})
    server.push({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {}})
    server.push({"jsonrpc": "2.0", "id": 2, "method": "roots/list", "params": {}})
    answers = server.wait_for_answers({0, 1, 2})
    assert answers[0]["result"]["action"] == "accept"
    assert answers[1]["result"]["content"]["text"] == "s"
    assert answers[2]["result"] == {"roots": []}


def test_list_changed_refreshes_tools_before_the_hook_hears_of_it(scripted: Connect) -> None:
    names = ["a"]
    server = listing(names)
    hook = ToolsOnListChanged()
    hook.client = scripted(server, hook=hook)
    names.append("b")
    server.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    assert hook.heard.wait(5)
    assert hook.seen == [["a", "b"]]


def test_close_fails_pending_calls_and_closes_the_transport(scripted: Connect) -> None:
    started = threading.Event()

    def hang(params: dict[str, Any]) -> None:
        started.set()
        return None

    server = ScriptedServer({"tools/call": hang})
    events: list[McpEvent] = []
    client = scripted(server, hook=events.append)
    call = Background(lambda: client.call_tool("echo", {}, timeout=30), name="test-call")
    assert started.wait(5)
    client.close()
    assert call.join(5)
    assert isinstance(call.error, TransportError) and "closed" in str(call.error)
    assert server.closed
    assert [e.kind.name for e in events if isinstance(e, LifecycleEvent)] == [
        "CONNECTED",
        "DISCONNECTED",
    ]
    with pytest.raises(TransportError):
        client.call_tool("echo", {})


def test_refresh_tools_reinitialises_a_stale_session_and_lists_again(scripted: Connect) -> None:
    names = ["a"]
    server = listing(names)
    client = scripted(server)
    names.append("b")
    server.stale_once.add("tools/list")
    assert [t.name for t in client.refresh_tools()] == ["a", "b"]
    assert server.methods()[-3:] == ["initialize", "notifications/initialized", "tools/list"]


def test_list_changed_after_a_stale_session_still_refreshes_and_reaches_the_hook(
    scripted: Connect,
) -> None:
    names = ["a"]
    server = listing(names)
    hook = ToolsOnListChanged()
    hook.client = scripted(server, hook=hook)
    names.append("b")
    server.stale_once.add("tools/list")
    server.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    assert hook.heard.wait(5)
    assert hook.seen == [["a", "b"]]


def test_a_session_dropped_again_during_reinitialisation_is_a_transport_error(
    scripted: Connect,
) -> None:
    server = ScriptedServer({"resources/read": lambda p: {"contents": []}})
    client = scripted(server)
    server.stale_once.update({"resources/read", "notifications/initialized"})
    with pytest.raises(TransportError, match="session"):
        client.read_resource("u")
    server.stale_once.update({"tools/list", "notifications/initialized"})
    with pytest.raises(TransportError, match="session"):
        client.refresh_tools()  # typed, never a raw StaleSession


def test_a_negative_timeout_times_out_instead_of_raising_value_error(scripted: Connect) -> None:
    server = ScriptedServer({"tools/call": lambda p: None})
    client = scripted(server)
    with pytest.raises(AgentTimeoutError):
        client.call_tool("echo", {}, timeout=-1)


@pytest.mark.parametrize("messages", [7, "text", {"role": "user"}])
def test_get_prompt_with_a_malformed_message_list_is_a_protocol_error(
    scripted: Connect, messages: object
) -> None:
    client = scripted(ScriptedServer({"prompts/get": lambda p: {"messages": messages}}))
    with pytest.raises(McpProtocolError, match="messages"):
        client.get_prompt("p")
