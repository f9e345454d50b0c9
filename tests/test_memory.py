"""Memory strategies and the tool-message pairing invariant."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_smith import (
    AssistantMessage,
    ConfigError,
    LlmRequest,
    LlmResponse,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    TransportError,
    UserMessage,
)
from agent_smith.memory import (
    FullMemory,
    Memory,
    RollingWindowMemory,
    SummaryMemory,
    estimate_tokens,
    strip_orphans,
)

SYSTEM = SystemMessage("be helpful")


def calling(*ids: str, content: str = "") -> AssistantMessage:
    return AssistantMessage(content, tuple(ToolCall(i, "t", {"i": i}) for i in ids))


def result(call_id: str, content: str = "ok") -> ToolMessage:
    return ToolMessage(call_id, "t", content)


def assert_paired(messages: Sequence[Message]) -> None:
    """Every tool message follows its calling turn; every calling turn has all results."""
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            k = index - 1
            while k >= 0 and isinstance(messages[k], ToolMessage):
                k -= 1
            assert k >= 0, f"tool message {message.tool_call_id} has no calling turn"
            caller = messages[k]
            assert isinstance(caller, AssistantMessage)
            assert message.tool_call_id in {c.id for c in caller.tool_calls}
        if isinstance(message, AssistantMessage) and message.tool_calls:
            end = index + 1
            while end < len(messages) and isinstance(messages[end], ToolMessage):
                end += 1
            answered = {m.tool_call_id for m in messages[index + 1 : end]}  # type: ignore[union-attr]
            assert {c.id for c in message.tool_calls} <= answered


class FakeLlm:
    """A summariser that answers from a script, or fails."""

    def __init__(self, reply: str = "they talked", fail: bool = False) -> None:
        self.reply = reply
        self.fail = fail
        self.requests: list[LlmRequest] = []

    def complete(self, request: LlmRequest) -> LlmResponse:
        self.requests.append(request)
        if self.fail:
            raise TransportError("refused", operation="complete", endpoint_or_server="x")
        return LlmResponse(AssistantMessage(self.reply), "stop")


# --- strip_orphans -----------------------------------------------------------


def test_complete_history_survives_strip_orphans_unchanged() -> None:
    history: list[Message] = [
        UserMessage("hi"),
        calling("a", "b"),
        result("b"),
        result("a"),
        AssistantMessage("done"),
    ]
    assert strip_orphans(history) == history


def test_leading_tool_results_without_their_turn_are_dropped() -> None:
    history: list[Message] = [result("a"), result("b"), UserMessage("hi")]
    assert strip_orphans(history) == [UserMessage("hi")]


def test_a_turn_missing_any_result_is_dropped_with_its_partial_results() -> None:
    history: list[Message] = [UserMessage("hi"), calling("a", "b"), result("a"), UserMessage("?")]
    assert strip_orphans(history) == [UserMessage("hi"), UserMessage("?")]


def test_results_after_an_intervening_message_are_orphans() -> None:
    history: list[Message] = [calling("a"), UserMessage("x"), result("a")]
    assert strip_orphans(history) == [UserMessage("x")]


def test_foreign_and_duplicate_results_are_dropped() -> None:
    history: list[Message] = [calling("a"), result("a", "1"), result("a", "2"), result("zz")]
    assert strip_orphans(history) == [calling("a"), result("a", "1")]


def test_a_single_call_answered_for_another_id_is_dropped_with_that_result() -> None:
    history: list[Message] = [UserMessage("hi"), calling("a"), result("zz"), calling("b")]
    assert strip_orphans(history) == [UserMessage("hi")]


# --- strategies ---------------------------------------------------------------


def test_full_memory_keeps_everything_and_puts_system_first() -> None:
    memory = FullMemory()
    for i in range(50):
        memory.append(UserMessage(str(i)))
    assert memory.size() == 50
    snapshot = memory.snapshot(SYSTEM)
    assert snapshot[0] == SYSTEM
    assert snapshot[1:] == memory.messages()
    assert memory.snapshot(SystemMessage("")) == memory.messages()
    assert memory.snapshot(None) == memory.messages()
    memory.clear()
    assert memory.size() == 0


def test_rolling_window_needs_a_bound() -> None:
    with pytest.raises(ConfigError):
        RollingWindowMemory()
    with pytest.raises(ConfigError):
        RollingWindowMemory(max_messages=0)


def test_rolling_window_by_messages_keeps_the_newest() -> None:
    memory = RollingWindowMemory(max_messages=3)
    for i in range(10):
        memory.append(UserMessage(str(i)))
    assert memory.snapshot(SYSTEM) == [SYSTEM, UserMessage("7"), UserMessage("8"), UserMessage("9")]
    assert memory.size() == 3


def test_rolling_window_by_tokens_uses_about_four_chars_per_token() -> None:
    memory = RollingWindowMemory(max_tokens=3 * estimate_tokens(UserMessage("x" * 40)))
    for i in range(10):
        memory.append(UserMessage(str(i) * 40))
    assert estimate_tokens(UserMessage("x" * 40)) == 10 + 4
    assert [m.content[0] for m in memory.snapshot()] == ["7", "8", "9"]


def test_rolling_window_never_splits_a_tool_group() -> None:
    memory = RollingWindowMemory(max_messages=3)
    for message in [
        UserMessage("q"),
        calling("a", "b"),
        result("a"),
        result("b"),
        UserMessage("n"),
    ]:
        memory.append(message)
    # The window [result a?, result b, user] would orphan results: they are dropped.
    assert memory.snapshot() == [UserMessage("n")]


def test_rolling_window_keeps_the_newest_group_even_over_budget() -> None:
    memory = RollingWindowMemory(max_messages=2)
    for message in [
        UserMessage("q"),
        calling("a", "b", "c"),
        result("a"),
        result("b"),
        result("c"),
    ]:
        memory.append(message)
    assert memory.snapshot() == [calling("a", "b", "c"), result("a"), result("b"), result("c")]


def test_rolling_window_does_not_cut_an_unfinished_group_on_append() -> None:
    memory = RollingWindowMemory(max_messages=2)
    memory.append(UserMessage("q"))
    memory.append(calling("a", "b"))
    memory.append(result("a"))  # "b" still running: append never truncates
    assert memory.messages() == [UserMessage("q"), calling("a", "b"), result("a")]


def test_summary_memory_replaces_older_messages_with_a_summary() -> None:
    llm = FakeLlm("the user asked about cats")
    memory = SummaryMemory(llm, threshold=4, keep_recent=2)
    for i in range(5):
        memory.append(UserMessage(f"m{i}"))
    snapshot = memory.snapshot(SYSTEM)
    assert len(llm.requests) == 1
    prompt = llm.requests[0].messages[1].content
    assert "user: m0" in prompt and "user: m2" in prompt and "m3" not in prompt
    assert snapshot == [
        SystemMessage(
            "be helpful\n\nSummary of the earlier conversation:\nthe user asked about cats"
        ),
        UserMessage("m3"),
        UserMessage("m4"),
    ]
    assert memory.messages()[0] == SystemMessage(
        "Summary of the earlier conversation:\nthe user asked about cats"
    )
    assert memory.snapshot(None)[0].content.startswith("Summary of the earlier")
    assert len(llm.requests) == 1  # below the threshold now: no new call


def test_summary_memory_falls_back_to_a_rolling_window_on_failure() -> None:
    llm = FakeLlm(fail=True)
    memory = SummaryMemory(llm, threshold=4, keep_recent=2)
    for i in range(6):
        memory.append(UserMessage(f"m{i}"))
    assert memory.snapshot(SYSTEM) == [SYSTEM, UserMessage("m4"), UserMessage("m5")]
    assert len(llm.requests) == 1


def test_summary_memory_treats_an_empty_summary_as_a_failure() -> None:
    memory = SummaryMemory(FakeLlm("  "), threshold=2, keep_recent=1)
    for i in range(3):
        memory.append(UserMessage(f"m{i}"))
    assert memory.snapshot() == [UserMessage("m2")]


def test_summary_memory_keeps_a_tool_group_on_the_recent_side() -> None:
    llm = FakeLlm()
    memory = SummaryMemory(llm, threshold=4, keep_recent=2)
    for message in [
        UserMessage("a"),
        UserMessage("b"),
        calling("x", "y"),
        result("x"),
        result("y"),
    ]:
        memory.append(message)
    snapshot = memory.snapshot()
    assert snapshot[1:] == [calling("x", "y"), result("x"), result("y")]
    assert "calling" not in llm.requests[0].messages[1].content


def test_summary_memory_validates_its_bounds() -> None:
    with pytest.raises(ConfigError):
        SummaryMemory(FakeLlm(), threshold=1)
    with pytest.raises(ConfigError):
        SummaryMemory(FakeLlm(), threshold=4, keep_recent=4)


# --- property test --------------------------------------------------------------


def random_history(rng: random.Random) -> list[Message]:
    """A history with complete groups, partial groups, orphans and noise."""
    history: list[Message] = []
    next_id = 0
    for _ in range(rng.randint(0, 40)):
        kind = rng.random()
        if kind < 0.25:
            history.append(UserMessage("u" * rng.randint(0, 80)))
        elif kind < 0.4:
            history.append(AssistantMessage("a" * rng.randint(0, 80)))
        elif kind < 0.45:
            history.append(SystemMessage("s" * rng.randint(0, 20)))
        elif kind < 0.5:
            history.append(result(f"orphan{next_id}"))
            next_id += 1
        else:
            ids = [f"c{next_id + k}" for k in range(rng.randint(1, 4))]
            next_id += len(ids)
            history.append(calling(*ids, content="t" * rng.randint(0, 30)))
            answered = ids if rng.random() < 0.8 else rng.sample(ids, rng.randint(0, len(ids)))
            rng.shuffle(answered)
            history.extend(result(i, "r" * rng.randint(0, 120)) for i in answered)
    return history


def strategies(rng: random.Random) -> list[Memory]:
    return [
        FullMemory(),
        RollingWindowMemory(max_messages=rng.randint(1, 12)),
        RollingWindowMemory(max_tokens=rng.randint(1, 200)),
        RollingWindowMemory(max_messages=rng.randint(1, 12), max_tokens=rng.randint(1, 200)),
        SummaryMemory(FakeLlm(), threshold=rng.randint(2, 12)),
        SummaryMemory(FakeLlm(fail=True), threshold=rng.randint(2, 12)),
    ]


@settings(max_examples=600, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_every_strategy_keeps_tool_messages_paired_after_truncation(seed: int) -> None:
    rng = random.Random(seed)
    history = random_history(rng)
    stripped = strip_orphans(history)
    assert_paired(stripped)
    assert strip_orphans(stripped) == stripped
    for memory in strategies(rng):
        # Snapshot at random points, as the loop does between LLM calls.
        for message in history:
            memory.append(message)
            if rng.random() < 0.2:
                assert_paired(memory.snapshot(SYSTEM))
        snapshot = memory.snapshot(SYSTEM)
        assert_paired(snapshot)
        if not isinstance(memory, RollingWindowMemory):
            continue  # the others store what they were given until they truncate
        kept = memory.messages()
        assert_paired(kept)
        if memory.max_messages is not None:
            newest_group = (
                bool(kept)
                and isinstance(kept[0], AssistantMessage)
                and bool(kept[0].tool_calls)
                and all(isinstance(m, ToolMessage) for m in kept[1:])
            )
            assert len(kept) <= memory.max_messages or newest_group


def test_rolling_window_token_budget_counts_the_system_message() -> None:
    per_message = estimate_tokens(UserMessage("x" * 40))
    memory = RollingWindowMemory(max_tokens=3 * per_message)
    for i in range(5):
        memory.append(UserMessage(str(i) * 40))
    system = SystemMessage("s" * 40)  # costs as much as one message
    assert [m.content[0] for m in memory.snapshot(system)] == ["s", "3", "4"]


def test_extend_adds_in_order_and_a_subclass_append_sees_every_message() -> None:
    seen: list[Message] = []

    class Logged(FullMemory):
        def append(self, message: Message) -> None:
            seen.append(message)
            super().append(message)

    batch: list[Message] = [UserMessage("a"), AssistantMessage("b"), UserMessage("c")]
    plain, logged = FullMemory(), Logged()
    for memory in (plain, logged):
        memory.append(UserMessage("first"))
        memory.extend(batch)
        assert memory.messages() == [UserMessage("first"), *batch]
    assert seen == [UserMessage("first"), *batch]
