"""The client runner the MCP conformance suite launches: ``python conformance_client.py <url>``.

The suite starts a test server per scenario, runs this script with the
server's URL as the last argument and the scenario's name in
``MCP_CONFORMANCE_SCENARIO``, then judges what the server saw. The runner
uses agent_smith's McpClient the way an application would: connect, list the
tools, call each of them (arguments filled from the input schema), and answer
elicitation requests by accepting the schema's defaults (SEP-1034).

Exit status 0 when everything the scenario asked for worked, 1 otherwise.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from agent_smith.errors import AgentSmithError
from agent_smith.mcp.client import McpClient
from agent_smith.mcp.config import ServerConfig

log = logging.getLogger("conformance_client")

_PLACEHOLDER: dict[str, Any] = {
    "string": "agent_smith",
    "integer": 2,
    "number": 3,
    "boolean": True,
    "array": [],
    "object": {},
}


def accept_with_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """Elicitation handler: accept, answering every field that has a default with it."""
    schema = params.get("requestedSchema") or {}
    properties = schema.get("properties") or {}
    content = {
        name: spec["default"]
        for name, spec in properties.items()
        if isinstance(spec, dict) and "default" in spec
    }
    return {"action": "accept", "content": content}


def arguments_for(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: defaults where given, placeholders for other required fields."""
    properties = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for name, spec in properties.items():
        if not isinstance(spec, dict):
            continue
        if "default" in spec:
            args[name] = spec["default"]
        elif name in (schema.get("required") or []):
            args[name] = _PLACEHOLDER.get(str(spec.get("type")), "agent_smith")
    return args


def run(url: str, scenario: str) -> int:
    config = ServerConfig(
        alias="conformance",
        url=url,
        protocol_version=os.environ.get("MCP_PROTOCOL_VERSION", "2025-06-18"),
        request_timeout=20.0,
    )
    with McpClient.connect(config, elicitation_handler=accept_with_defaults) as client:
        log.info("scenario %s: connected to %s", scenario, client.server_info.name)
        for tool in client.tools:
            result = client.call_tool(tool.name, arguments_for(tool.parameters))
            log.info(
                "tool %s -> %s%s", tool.name, result.content, " (error)" if result.is_error else ""
            )
            if result.is_error:
                return 1
    return 0


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        return run(sys.argv[-1], scenario)
    except AgentSmithError as err:
        log.error("scenario %s failed: %s", scenario, err)
        return 1


if __name__ == "__main__":
    sys.exit(main())
