"""The durable-state record decoder: any text gives a value or a DurableStateError, nothing else."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_smith.durable.records import (
    decode_record,
    reply_from,
    result_from,
    start_from,
)
from agent_smith.errors import DurableStateError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
KINDS = ("start", "reply", "result")
FIELDS = (
    "agent",
    "model",
    "tools",
    "history",
    "message",
    "request",
    "finish_reason",
    "response_id",
    "content",
    "error",
    "data",
    "role",
    "tool_calls",
)


@st.composite
def records(draw: st.DrawFn) -> str:
    """Text that is often a record of a known kind with fields of any shape."""
    if draw(st.booleans()):
        return draw(st.text())
    record = {"kind": draw(st.sampled_from(KINDS))}
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=8)):
        record[name] = draw(json_values)
    return json.dumps(record)


READERS = {
    "start": lambda record: start_from(record, "t"),
    "reply": lambda record: reply_from(record, "t", "m1"),
    "result": lambda record: result_from(record, "t", "t1"),
}


@settings(max_examples=300, deadline=None)
@given(records(), st.sampled_from(KINDS))
def test_any_record_text_decodes_or_raises_durable_state_error(text: str, kind: str) -> None:
    try:
        READERS[kind](decode_record(text, kind, "t", "s"))
    except DurableStateError as err:
        assert err.turn_id == "t"


@pytest.mark.parametrize("text", ["[" * 5000, '{"kind": "reply"}', "null", "{"])
def test_deep_or_partial_records_are_typed_errors(text: str) -> None:
    with pytest.raises(DurableStateError):
        READERS["reply"](decode_record(text, "reply", "t", "m1"))
