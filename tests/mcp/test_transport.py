"""encode_frame: the one JSON encoding both transports put on the wire."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_smith import McpError
from agent_smith.mcp.transport import encode_frame


def test_frames_encode_as_compact_utf8_json() -> None:
    frame = {"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"text": "héllo 🙂"}}
    data = encode_frame(frame, "srv")
    assert data == json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert b"\n" not in data


@pytest.mark.parametrize(
    "value",
    [object(), {1, 2}, float("nan"), float("inf"), "lone \ud800 surrogate"],
    ids=["object", "set", "nan", "inf", "surrogate"],
)
def test_values_json_cannot_carry_are_an_mcp_error_naming_the_method(value: Any) -> None:
    frame = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"x": value}}
    with pytest.raises(McpError, match="tools/call") as info:
        encode_frame(frame, "srv")
    assert info.value.server == "srv"
