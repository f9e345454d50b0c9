"""A scripted chat server whose replies fit what the request asks for.

The docs' snippets ask for anything: a typed ``Invoice``, a tool with an
integer argument, a sub-agent. :func:`fitting_responder` answers like a
well-behaved model: it calls the first offered tool once with arguments
built from that tool's schema, then answers; asked for a schema (native
mode) it answers JSON that fits; offered ``final_result`` (tool mode) it
calls it with fitting arguments after the other tools ran.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.llm_server import Calls, Reply, Text

JsonObject = dict[str, Any]
FINAL_RESULT = "final_result"


def example(schema: JsonObject, defs: JsonObject | None = None) -> Any:
    """A small value that fits ``schema`` (objects get every listed property)."""
    defs = defs if defs is not None else schema.get("$defs", schema.get("definitions", {}))
    if "$ref" in schema:
        return example(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return example(options[0], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: example(sub, defs) for name, sub in props.items()}
    if kind == "array":
        return [example(schema.get("items", {"type": "string"}), defs)]
    values = {"string": "Paris", "integer": 1, "number": 1.5, "boolean": True, "null": None}
    return values[kind]


def fitting_responder(body: JsonObject) -> Reply:
    """The reply a cooperative model would give to ``body`` (see the module doc)."""
    messages = body.get("messages", [])
    functions = [t["function"] for t in body.get("tools") or []]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    results = [m for m in messages[last_user + 1 :] if m.get("role") == "tool"]
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return Text(json.dumps(example(fmt["json_schema"]["schema"])))
    others = [f for f in functions if f["name"] != FINAL_RESULT]
    final = [f for f in functions if f["name"] == FINAL_RESULT]
    if others and not results:
        return _call(others[0])
    if final:
        return _call(final[0])
    if results:
        return Text(f"Result: {results[-1].get('content', '')}")
    return Text("Hello from the scripted server.")


def _call(function: JsonObject) -> Calls:
    return Calls((function["name"], example(function.get("parameters", {"type": "object"}))))
