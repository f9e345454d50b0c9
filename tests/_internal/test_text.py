"""The truncation helpers: a UTF-8 boundary and the exact marker; one short line."""

from __future__ import annotations

import pytest

from agent_smith._internal.text import one_line, truncate_utf8


def test_text_within_the_budget_is_returned_unchanged() -> None:
    assert truncate_utf8("hello", 5) == "hello"
    assert truncate_utf8("é" * 3, 6) == "é" * 3


def test_ascii_text_is_cut_at_the_budget_with_the_exact_marker() -> None:
    assert truncate_utf8("abcdefghij", 4) == "abcd\n…[truncated, original size 10 bytes]"


@pytest.mark.parametrize("budget", range(0, 13))
def test_multibyte_text_is_never_cut_inside_a_character(budget: int) -> None:
    text = "aé€😀b"  # 1 + 2 + 3 + 4 + 1 = 11 bytes
    result = truncate_utf8(text, budget)
    if budget >= 11:
        assert result == text
        return
    kept, marker = result.split("\n…", 1)
    assert marker == "[truncated, original size 11 bytes]"
    assert len(kept.encode("utf-8")) <= budget
    assert text.startswith(kept)
    # The longest whole-character prefix that fits is kept.
    longer = text[: len(kept) + 1]
    assert len(longer.encode("utf-8")) > budget


def test_cut_backs_up_to_the_start_of_a_split_character() -> None:
    assert truncate_utf8("ab€", 4) == "ab\n…[truncated, original size 5 bytes]"


def test_negative_budget_is_rejected() -> None:
    with pytest.raises(ValueError):
        truncate_utf8("x", -1)


def test_one_line_joins_whitespace_and_cuts_with_an_ellipsis_within_the_limit() -> None:
    assert one_line("  HTTP 503\n from\tthe   server ", 40) == "HTTP 503 from the server"
    assert one_line("abcdefghij", 10) == "abcdefghij"
    assert one_line("abcdefghijk", 10) == "abcdefghi…"
    assert one_line(" \n ", 10) == ""
