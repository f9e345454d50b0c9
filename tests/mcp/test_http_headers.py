"""The 2026-07-28 mirroring headers: which tools are valid, what each request carries."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from agent_smith.mcp.http_headers import encode_value, header_params, request_headers


def schema(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_annotated_primitive_arguments_are_found() -> None:
    found = header_params(
        schema(
            region={"type": "string", "x-mcp-header": "Region"},
            n={"type": "integer", "x-mcp-header": "N"},
            flag={"type": "boolean", "x-mcp-header": "Flag"},
            plain={"type": "string"},
        )
    )
    assert found == {"region": "Region", "n": "N", "flag": "Flag"}


@pytest.mark.parametrize(
    "properties",
    [
        {"v": {"type": "string", "x-mcp-header": ""}},
        {"v": {"type": "string", "x-mcp-header": "My Region"}},
        {"v": {"type": "string", "x-mcp-header": "Région"}},
        {"v": {"type": "string", "x-mcp-header": "A:B"}},
        {"v": {"type": "number", "x-mcp-header": "Score"}},
        {"v": {"type": "object", "x-mcp-header": "Data"}},
        {"v": {"type": "null", "x-mcp-header": "Nil"}},
        {
            "a": {"type": "string", "x-mcp-header": "F"},
            "b": {"type": "string", "x-mcp-header": "f"},
        },
    ],
)
def test_invalid_annotations_reject_the_tool(properties: dict[str, Any]) -> None:
    assert header_params(schema(**properties)) is None


def test_a_call_carries_method_name_and_its_annotated_arguments() -> None:
    frame = {
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"region": "eu-west", "flag": False, "skip": None}},
    }
    headers = request_headers(frame, {"t": {"region": "Region", "flag": "Flag", "skip": "Skip"}})
    assert headers == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "t",
        "Mcp-Param-Region": "eu-west",
        "Mcp-Param-Flag": "false",
    }
    read = request_headers({"method": "resources/read", "params": {"uri": "file:///a"}}, {})
    assert read == {"Mcp-Method": "resources/read", "Mcp-Name": "file:///a"}


@pytest.mark.parametrize("text", [" edge", "tab\tinside", "Grüße", "line\r\nbreak"])
def test_values_a_header_cannot_carry_go_as_base64(text: str) -> None:
    encoded = encode_value(text)
    assert encoded.startswith("=?base64?") and encoded.endswith("?=")
    assert base64.b64decode(encoded[9:-2]).decode() == text
    assert encode_value("inner spaces ok") == "inner spaces ok"
