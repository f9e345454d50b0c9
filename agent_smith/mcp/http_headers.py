"""The 2026-07-28 HTTP headers mirroring a request: ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``.

Every POST names its JSON-RPC method in ``Mcp-Method``; ``tools/call`` and
``prompts/get`` name their target in ``Mcp-Name`` (``resources/read`` its
URI), so gateways can route without reading bodies. A tool may mark
arguments of its input schema with ``"x-mcp-header": "Region"``; a call then
carries ``Mcp-Param-Region: <value>``. A value that would not survive as a
header (not printable ASCII, or with whitespace at an edge) is sent as
``=?base64?<utf-8 bytes in base64>?=``.

A tool whose annotations are invalid (empty or non-token header name, on a
non-primitive or number type, or a name used twice, case-insensitively) is
excluded from the tool list: calling it could not be mirrored correctly.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

X_MCP_HEADER = "x-mcp-header"
#: Methods whose target is mirrored in ``Mcp-Name``, and the params key holding it.
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_SAFE = re.compile(r"^[\x20-\x7E]*$")
_PRIMITIVE = {"string", "integer", "boolean"}


def header_params(schema: Any) -> dict[str, str] | None:
    """A tool's annotated arguments: argument -> header name; None if an annotation is invalid."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return {}
    found: dict[str, str] = {}
    seen: set[str] = set()
    for name, spec in properties.items():
        if not isinstance(spec, dict) or X_MCP_HEADER not in spec:
            continue
        header = spec[X_MCP_HEADER]
        if not isinstance(header, str) or not _TOKEN.fullmatch(header):
            return None
        if spec.get("type") not in _PRIMITIVE or header.lower() in seen:
            return None
        seen.add(header.lower())
        found[name] = header
    return found


def request_headers(
    frame: Mapping[str, Any], params_of: Mapping[str, Mapping[str, str]]
) -> dict[str, str]:
    """The mirroring headers of ``frame`` (``params_of``: :func:`header_params` per tool)."""
    method = frame.get("method")
    if not isinstance(method, str):
        return {}
    headers = {"Mcp-Method": method}
    params = frame.get("params")
    params = params if isinstance(params, dict) else {}
    key = NAMED.get(method)
    if key is not None and isinstance(params.get(key), str):
        headers["Mcp-Name"] = encode_value(params[key])
    if method == "tools/call":
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        for argument, header in params_of.get(str(params.get("name")), {}).items():
            value = arguments.get(argument)
            if value is not None:
                headers[f"Mcp-Param-{header}"] = encode_value(value)
    return headers


def encode_value(value: Any) -> str:
    """A header value for ``value``: booleans as ``true``/``false``, unsafe text in base64."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if _SAFE.fullmatch(text) and text == text.strip() and not text.startswith("=?base64?"):
        return text
    return f"=?base64?{base64.b64encode(text.encode('utf-8')).decode('ascii')}?="
