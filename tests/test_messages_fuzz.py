"""Fuzzing the messages codec: arbitrary text and JSON raise only ParseError."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agent_smith import LlmResponse, ParseError, message_from_openai, messages_from_json
from agent_smith.base.history_json import message_from_dict
from tests.support.fuzz import QUICK, TOO_DEEP, json_objects_with, json_values

_MESSAGE_KEYS = ["role", "content", "tool_calls", "tool_call_id", "name", "usage", "reasoning"]
_ROLES = st.sampled_from(["system", "user", "assistant", "tool", "other"])
_messages = st.builds(lambda m, r: {**m, "role": r}, json_objects_with(_MESSAGE_KEYS), _ROLES)


def parse_only(parse: Any, value: Any) -> None:
    with contextlib.suppress(ParseError):
        parse(value)


@QUICK
@given(st.text(max_size=300))
@example(TOO_DEEP)
@example("[" + json.dumps({"role": "user", "content": TOO_DEEP[:50_000]}) + "]")
def test_messages_from_json_raises_only_parse_errors_on_arbitrary_text(text: str) -> None:
    parse_only(messages_from_json, text)


@QUICK
@given(st.lists(_messages | json_values, max_size=4))
def test_a_history_of_arbitrary_json_raises_only_parse_errors(items: list[Any]) -> None:
    parse_only(messages_from_json, json.dumps(items))


@QUICK
@given(_messages | json_values)
@pytest.mark.parametrize("parse", [message_from_openai, message_from_dict])
def test_one_arbitrary_message_raises_only_parse_errors(parse: Any, value: Any) -> None:
    parse_only(parse, value)


@QUICK
@given(
    st.fixed_dictionaries(
        {
            "choices": st.lists(
                st.fixed_dictionaries({"message": _messages | json_values}), max_size=2
            )
        },
        optional={"usage": json_values, "id": json_values, "model": json_values},
    )
    | json_values
)
def test_an_arbitrary_whole_reply_raises_only_parse_errors(body: Any) -> None:
    parse_only(LlmResponse.from_openai, body)


_CALLS = json_objects_with(["id", "name", "arguments", "invalid_arguments"])
_USAGE = json_objects_with(["prompt", "completion", "total", "cache_read", "cache_write", "cost"])
_WRITTEN = st.fixed_dictionaries(
    {"role": _ROLES},
    optional={
        "content": st.text(max_size=5) | json_values,
        "tool_calls": st.lists(_CALLS | json_values, max_size=2) | json_values,
        "usage": _USAGE | st.none() | json_values,
        "reasoning": st.text(max_size=5) | st.none() | json_values,
        "provider_data": st.none() | json_values,
        "tool_call_id": st.text(max_size=5) | json_values,
        "name": st.text(max_size=5) | json_values,
        "is_error": st.booleans() | json_values,
    },
)


@QUICK
@given(_WRITTEN)
@example({"role": "assistant", "provider_data": {}})
@example({"role": "assistant", "usage": {"prompt": True}})
@example({"role": "assistant", "usage": {"cost": 1}})
@example({"role": "tool", "tool_call_id": "c", "name": "n", "content": "x", "is_error": None})
def test_the_quick_reading_of_a_stored_message_agrees_with_the_checked_one(obj: Any) -> None:
    from agent_smith.base.history_json import _checked_message, _written_message

    quick = _written_message(obj)
    try:
        checked = _checked_message(obj, "m")
    except ParseError:
        assert quick is None
        return
    assert quick is None or (type(quick) is type(checked) and quick == checked)


@QUICK
@given(st.lists(_messages, max_size=4))
@example([{"role": "user", "content": []}])  # parts, not text: the quick reading declines
def test_stored_messages_read_back_equal_through_both_readings(items: list[Any]) -> None:
    from agent_smith.base.history_json import _checked_message, _written_message, message_to_dict

    for item in items:
        try:
            message = _checked_message(item, "m")
        except ParseError:
            continue
        written = json.loads(json.dumps(message_to_dict(message)))
        assert _checked_message(written, "m") == message
        quick = _written_message(written)
        if isinstance(message.content, str):  # the quick reading's shape: it must read it
            assert quick == message
        else:  # a tuple of parts goes to the field-by-field reading
            assert quick is None
