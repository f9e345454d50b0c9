from __future__ import annotations

import enum
import json
from dataclasses import dataclass

import pytest

from agent_smith import BatchResult, ItemError, LlmApiError, ParseError, TokenUsage
from agent_smith.batch.result import MESSAGE_MAX_CHARS, json_ready


def test_a_result_round_trips_through_json() -> None:
    result = BatchResult(
        "a", "question", "answer", {"label": "yes"}, TokenUsage(3, 4, 7), None, 2, 0.25
    )
    assert BatchResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    failed = BatchResult("b", "q", error=ItemError("LlmApiError", "HTTP 500"), attempts=3)
    assert BatchResult.from_dict(json.loads(json.dumps(failed.to_dict()))) == failed
    assert result.ok and not failed.ok


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"input": "q"},
        {"id": 1, "input": "q"},
        {"id": "a", "input": "q", "usage": {"tokens": 1}},
        {"id": "a", "input": "q", "error": {"type": "X"}},
        {"id": "a", "input": "q", "attempts": "2"},
    ],
)
def test_a_malformed_result_is_a_parse_error(data: object) -> None:
    with pytest.raises(ParseError):
        BatchResult.from_dict(data)


def test_an_item_error_keeps_the_class_name_and_one_short_line() -> None:
    error = ItemError.of(LlmApiError("HTTP 503 from\nthe server", http_status=503))
    assert error == ItemError("LlmApiError", "HTTP 503 from the server")
    assert str(error) == "LlmApiError: HTTP 503 from the server"
    long = ItemError.of(ValueError("x" * 10_000))
    assert len(long.message) == MESSAGE_MAX_CHARS
    assert ItemError.of(KeyError()).message == "KeyError()"


class Color(enum.Enum):
    RED = "red"


@dataclass
class Inner:
    color: Color
    tags: tuple[str, ...]


@dataclass
class Outer:
    name: str
    inner: Inner


class FakeModel:
    """Duck-typed like a pydantic model."""

    def model_dump(self, *, mode: str) -> dict[str, object]:
        assert mode == "json"
        return {"dumped": True}


def test_json_ready_turns_typed_outputs_into_json_values() -> None:
    value = Outer("x", Inner(Color.RED, ("a", "b")))
    assert json_ready(value) == {"name": "x", "inner": {"color": "red", "tags": ["a", "b"]}}
    assert json_ready(FakeModel()) == {"dumped": True}
    assert json_ready({"n": [1, 2.5, None, True]}) == {"n": [1, 2.5, None, True]}
    assert json_ready(None) is None
