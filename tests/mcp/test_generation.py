"""Both MCP generations against a scripted server: negotiation, _meta, input loop, cache."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from agent_smith import McpClient
from agent_smith.errors import McpError, McpProtocolError
from agent_smith.mcp import McpEvent, Notification
from agent_smith.mcp.input_required import MAX_INPUT_ROUNDS
from agent_smith.mcp.transport import transport_failure
from tests.mcp.scripted import RpcFailure, ScriptedServer

Connect = Callable[..., McpClient]
MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"


def discover(caps: dict[str, Any] | None = None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda p: {
        "resultType": "complete",
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {}} if caps is None else caps,
        "serverInfo": {"name": "modern", "version": "2"},
        "ttlMs": 0,
        "cacheScope": "public",
    }


def modern_server(**handlers: Callable[[dict[str, Any]], dict[str, Any] | None]) -> ScriptedServer:
    named = {k.replace("__", "/"): v for k, v in handlers.items()}
    return ScriptedServer({"server/discover": discover(), **named})


def requests_of(server: ScriptedServer, method: str) -> list[dict[str, Any]]:
    return [f for f in server.sent if f.get("method") == method]


def test_auto_speaks_2026_to_a_server_that_answers_discover(scripted: Connect) -> None:
    server = modern_server()
    client = scripted(server, elicitation_handler=lambda p: {"action": "decline"})
    assert client.protocol_version == MODERN and client.server_info.name == "modern"
    client.call_tool("echo", {})
    assert server.methods() == ["server/discover", "tools/list", "tools/call"]
    for frame in server.sent:  # no initialize, no session: every request says who it is
        meta = frame["params"]["_meta"]
        assert meta[META_VERSION] == MODERN and META_CAPS in meta
        assert meta[META_CAPS] == {"elicitation": {}}


def test_auto_initialises_a_server_that_does_not_know_discover(scripted: Connect) -> None:
    server = ScriptedServer()  # answers server/discover with "method not found"
    client = scripted(server, protocol_version="2025-11-25")
    assert client.protocol_version == "2025-11-25"
    assert server.methods()[:3] == ["server/discover", "initialize", "notifications/initialized"]
    client.call_tool("echo", {})
    assert "_meta" not in (requests_of(server, "tools/call")[0].get("params") or {})


def test_pinned_generations(scripted: Connect) -> None:
    old = ScriptedServer()
    scripted(old, protocol="legacy")
    assert old.methods()[0] == "initialize"
    with pytest.raises(McpError, match="server/discover"):
        scripted(ScriptedServer(), protocol="modern")


def test_a_modern_only_server_that_rejects_the_version_is_not_taken_for_an_old_one(
    scripted: Connect,
) -> None:
    def refuse(params: dict[str, Any]) -> dict[str, Any]:
        raise RpcFailure(-32022, "unsupported")

    server = ScriptedServer({"server/discover": refuse})
    # The scripted failure has no data naming versions: an old server's error, so it falls back.
    client = scripted(server)
    assert client.protocol_version != MODERN


def test_a_server_silent_on_discover_gets_the_handshake_after_discover_timeout(
    scripted: Connect,
) -> None:
    server = ScriptedServer({"server/discover": lambda p: None})  # never answers
    client = scripted(server, discover_timeout=0.05, request_timeout=60)
    assert client.protocol_version == "2025-06-18"
    assert server.methods()[:3] == ["server/discover", "notifications/cancelled", "initialize"]


def test_a_slow_server_that_settled_on_2026_after_the_probe_is_asked_again(
    scripted: Connect,
) -> None:
    # It read server/discover after the client stopped waiting, so it refuses the
    # handshake naming 2026-07-28; the second probe is waited for in full.
    answers = iter([None, discover()({})])

    def refuse(params: dict[str, Any]) -> dict[str, Any]:
        raise RpcFailure(-32022, "unsupported", data={"supported": [MODERN], "requested": "x"})

    server = ScriptedServer({"server/discover": lambda p: next(answers), "initialize": refuse})
    client = scripted(server, discover_timeout=0.05)
    assert client.protocol_version == MODERN
    assert server.methods()[:4] == [
        "server/discover",
        "notifications/cancelled",
        "initialize",
        "server/discover",
    ]


def input_loop_server(rounds: list[dict[str, Any]], seen: list[dict[str, Any]]) -> ScriptedServer:
    """tools/call answers each of ``rounds`` in turn (recording the params), then completes."""

    def call(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        if len(seen) <= len(rounds):
            return {"resultType": "input_required", **rounds[len(seen) - 1]}
        return {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}

    return modern_server(tools__call=call)


def test_input_required_rounds_are_answered_and_the_state_echoed(scripted: Connect) -> None:
    rounds = [
        {
            "inputRequests": {
                "who": {"method": "elicitation/create", "params": {"message": "name?"}},
                "where": {"method": "roots/list", "params": {}},
            },
            "requestState": "opaque-1",
        },
        {
            "inputRequests": {"llm": {"method": "sampling/createMessage", "params": {}}},
            "requestState": "opaque-2 ✓",
        },
    ]
    seen: list[dict[str, Any]] = []
    server = input_loop_server(rounds, seen)
    asked: list[str] = []
    sample = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
    client = scripted(
        server,
        elicitation_handler=lambda p: asked.append(p["message"]) or {"action": "accept"},
        roots_handler=lambda p: {"roots": [{"uri": "file:///w"}]},
        sampling_handler=lambda p: sample,
    )
    assert client.call_tool("echo", {"x": 1}).content == "done"
    assert asked == ["name?"]
    assert len(seen) == 3 and all(p["arguments"] == {"x": 1} for p in seen)
    assert "requestState" not in seen[0] and "inputResponses" not in seen[0]
    assert seen[1]["requestState"] == "opaque-1"
    assert seen[1]["inputResponses"] == {
        "who": {"action": "accept"},
        "where": {"roots": [{"uri": "file:///w"}]},
    }
    assert seen[2]["requestState"] == "opaque-2 ✓" and seen[2]["inputResponses"] == {"llm": sample}
    ids = [f["id"] for f in requests_of(server, "tools/call")]
    assert len(set(ids)) == 3  # every round is a new request


def test_the_input_loop_is_bounded(scripted: Connect) -> None:
    forever = [{"inputRequests": {"r": {"method": "roots/list"}}, "requestState": "s"}] * 50
    seen: list[dict[str, Any]] = []
    client = scripted(input_loop_server(forever, seen), roots_handler=lambda p: {"roots": []})
    with pytest.raises(McpProtocolError, match="rounds"):
        client.call_tool("echo", {})
    assert len(seen) == MAX_INPUT_ROUNDS + 1


def test_an_input_request_without_handler_or_with_a_failing_one_fails_the_call(
    scripted: Connect,
) -> None:
    wants_roots = [{"inputRequests": {"r": {"method": "roots/list"}}}]
    client = scripted(input_loop_server(wants_roots, []))
    with pytest.raises(McpError, match="roots/list"):
        client.call_tool("echo", {})

    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("no disk")

    client = scripted(input_loop_server(wants_roots, []), roots_handler=broken)
    with pytest.raises(McpError, match="no disk"):
        client.call_tool("echo", {})


def test_an_unknown_result_type_is_a_protocol_error(scripted: Connect) -> None:
    client = scripted(modern_server(tools__call=lambda p: {"resultType": "mystery"}))
    with pytest.raises(McpProtocolError, match="mystery"):
        client.call_tool("echo", {})


def test_lists_are_cached_for_their_ttl_and_dropped_on_list_changed(scripted: Connect) -> None:
    lists: list[int] = []

    def tools(params: dict[str, Any]) -> dict[str, Any]:
        lists.append(1)
        return {
            "resultType": "complete",
            "tools": [{"name": f"t{len(lists)}", "inputSchema": {"type": "object"}}],
            "ttlMs": 600_000,
            "cacheScope": "private",
        }

    heard = threading.Event()

    def hook(event: McpEvent) -> None:
        if isinstance(event, Notification):
            heard.set()  # the hook hears of it after the refresh

    server = modern_server(tools__list=tools)
    client = scripted(server, hook=hook)
    assert [t.name for t in client.refresh_tools()] == ["t1"]  # served from the cache
    assert len(lists) == 1
    server.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    assert heard.wait(5)
    assert [t.name for t in client.tools] == ["t2"] and len(lists) == 2


def test_subscriptions_listen_asks_for_the_list_changes_the_server_offers(
    scripted: Connect,
) -> None:
    server = ScriptedServer(
        {
            "server/discover": discover({"tools": {"listChanged": True}, "prompts": {}}),
            "subscriptions/listen": lambda p: None,  # a long-lived request: never answered
        }
    )
    scripted(server)
    (listen,) = requests_of(server, "subscriptions/listen")
    assert listen["params"]["notifications"] == {"toolsListChanged": True}
    assert listen["params"]["_meta"][META_VERSION] == MODERN


def test_a_lost_exchange_during_discover_is_asked_again_not_taken_for_an_old_server(
    scripted: Connect,
) -> None:
    server = ScriptedServer()
    answers = iter([None, discover()({})])

    def flaky(params: dict[str, Any]) -> dict[str, Any] | None:
        answer = next(answers)
        if answer is None:  # the transport could not read an answer (a reset connection)
            frame_id = requests_of(server, "server/discover")[-1]["id"]
            server.push({"jsonrpc": "2.0", "id": frame_id, "error": transport_failure("reset")})
        return answer

    server.handlers["server/discover"] = flaky
    client = scripted(server)
    assert client.protocol_version == MODERN
    assert server.methods()[:2] == ["server/discover", "server/discover"]
