"""The client runner the MCP conformance suite launches: ``python conformance_client.py <url>``.

The suite starts a test server per scenario, runs this script with the
server's URL as the last argument and the scenario's name in
``MCP_CONFORMANCE_SCENARIO``, then judges what the server saw. The runner
uses agent_smith's McpClient the way an application would: connect, list the
tools, call each of them (arguments filled from the input schema), and answer
elicitation requests by accepting the schema's defaults (SEP-1034).

For the ``auth/*`` scenarios it authorizes with OAuth (:func:`oauth_for`):
the suite's authorization server approves at once, so the authorization
handler fetches the authorization URL without following the redirect and
returns where it points. Credentials a scenario hands out come in
``MCP_CONFORMANCE_CONTEXT``.

Exit status 0 when everything the scenario asked for worked, 1 otherwise.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

import requests

from agent_smith import EnterpriseIdp, OAuthConfig
from agent_smith.errors import AgentSmithError
from agent_smith.mcp.client import McpClient
from agent_smith.mcp.config import ServerConfig
from agent_smith.tools.base import ToolSchema

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


#: Where the suite's authorization server sends the browser back to (never reached).
REDIRECT_URI = "http://127.0.0.1:3000/callback"
#: The client id metadata document URL the suite expects (SEP-991).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def follow_consent(authorization_url: str) -> str:
    """Authorization handler: the suite's server consents at once; return its redirect."""
    response = requests.get(authorization_url, allow_redirects=False, timeout=10)
    location = response.headers.get("Location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise RuntimeError(f"the authorization endpoint answered {response.status_code}")
    return location


def oauth_for(scenario: str, context: dict[str, Any]) -> OAuthConfig | None:
    """The OAuth config for an ``auth/*`` scenario, from the credentials it handed out."""
    if not scenario.startswith("auth/"):
        return None
    client_id = context.get("client_id")
    if "idp_id_token" in context:  # enterprise-managed authorization (SEP-990)
        return OAuthConfig(
            grant="enterprise",
            client_id=client_id,
            client_secret=context.get("client_secret"),
            enterprise_idp=EnterpriseIdp(
                token_endpoint=context["idp_token_endpoint"],
                id_token=context["idp_id_token"],
                client_id=context["idp_client_id"],
            ),
        )
    if "valid_jwt" in context:  # workload identity (SEP-1933): the platform's JWT
        return OAuthConfig(grant="jwt_bearer", client_id=client_id, assertion=context["valid_jwt"])
    if scenario.startswith("auth/client-credentials"):
        return OAuthConfig(
            grant="client_credentials",
            client_id=client_id,
            client_secret=context.get("client_secret"),
            private_key=context.get("private_key_pem"),
            signing_algorithm=context.get("signing_algorithm") or "RS256",
        )
    return OAuthConfig(
        client_id=client_id,
        client_secret=context.get("client_secret"),
        client_metadata_url=CLIENT_METADATA_URL,
        authorization_handler=follow_consent,
        redirect_uri=REDIRECT_URI,
    )


#: What ``http-custom-headers`` fills its optional header-mirrored strings with: a value
#: that needs the base64 form (non-ASCII, spaces at the edges).
_UNSAFE_TEXT = " Grüße "


def scenario_arguments(scenario: str, tool: ToolSchema, tools: list[ToolSchema]) -> dict[str, Any]:
    """The arguments a scenario wants for ``tool`` (:func:`arguments_for` unless it says more)."""
    args = arguments_for(tool.parameters)
    if scenario == "json-schema-2020-12-preservation" and tool.name == "json_schema_echo":
        focal = [t for t in tools if t.name != tool.name]
        args["schema"] = focal[0].parameters if focal else {}
    if scenario == "http-custom-headers":
        for name, spec in (tool.parameters.get("properties") or {}).items():
            if name not in args and spec.get("type") == "string" and "x-mcp-header" in spec:
                args[name] = _UNSAFE_TEXT
    return args


def run(url: str, scenario: str) -> int:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    config = ServerConfig(
        alias="conformance",
        url=url,
        protocol_version=os.environ.get("MCP_PROTOCOL_VERSION", "2025-06-18"),
        protocol=os.environ.get("AGENT_SMITH_MCP_PROTOCOL", "auto"),
        request_timeout=20.0,
        auth=oauth_for(scenario, context),
    )
    with McpClient.connect(config, elicitation_handler=accept_with_defaults) as client:
        log.info("scenario %s: connected to %s", scenario, client.server_info.name)
        tools = client.tools
        for tool in tools:
            result = client.call_tool(tool.name, scenario_arguments(scenario, tool, tools))
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
