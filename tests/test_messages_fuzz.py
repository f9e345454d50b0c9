"""Fuzzing the messages codec: arbitrary text and JSON raise only ParseError."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agent_smith import LlmResponse, ParseError, message_from_openai, messages_from_json
from agent_smith.history_json import message_from_dict
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
