"""A tiny MCP server for the demo: tools ``echo`` and ``now``, over stdio.

Written with the official ``mcp`` Python SDK (a demo dependency, never used
by the library). Connect an agent to it with::

    from agent_smith import McpClient, ServerConfig
    config = ServerConfig(alias="demo", command=("python", "examples/mcp_server_example.py"))
    with McpClient.connect(config) as client:
        print(client.call_tool("now", {}).content)
"""

from __future__ import annotations

from datetime import datetime, timezone

from mcp.server.mcpserver import MCPServer

server = MCPServer("agent-smith-example", version="1.0.0")


@server.tool(description="Return the given text unchanged.")
def echo(text: str) -> str:
    return text


@server.tool(description="The current date and time in UTC, ISO 8601.")
def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


if __name__ == "__main__":
    server.run("stdio")
