"""The first-answers probe's verdict: right only as a careful reader would say it is."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "probe_first_answers.py"
AT = datetime(2026, 12, 7, 16, 20, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def probe() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("probe_first_answers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def prompt(probe: ModuleType, text: str) -> object:
    return next(p for p in probe.PROMPTS if p.text == text and p.before is None)


def outcome(probe: ModuleType, answer: str, *calls: str) -> object:
    return probe.Outcome(calls, answer, shown_call=False, seconds=1.0, at=AT)


def test_the_time_is_the_time_of_the_turn_not_the_year(probe: ModuleType) -> None:
    assert probe.says_time("It is 16:21 UTC.", AT)
    assert probe.says_time("It is 4:19 PM.", AT)
    assert probe.says_time("Now: 2026-12-07T16:20:05+00:00", AT)
    assert not probe.says_time("It is 2026.", AT)
    assert not probe.says_time("It is 10:00.", AT)
    assert not probe.says_time("It is 4:20 AM.", AT)


def test_the_date_is_todays_in_any_common_spelling(probe: ModuleType) -> None:
    assert probe.says_date("Today is 2026-12-07.", AT)
    assert probe.says_date("It is December 7, 2026.", AT)
    assert probe.says_date("Monday, 7 December", AT)
    assert not probe.says_date("It is December 17.", AT)
    assert not probe.says_date("It is 2026.", AT)


def test_release_notes_echoing_the_request_are_wrong(probe: ModuleType) -> None:
    notes = prompt(probe, "Release notes for: remove the legacy CSV export; fix the login timeout.")
    echo = "Release notes for: remove the legacy CSV export; fix the login timeout."
    written = "**Removed**\n- The legacy CSV export.\n\n**Fixed**\n- Login no longer times out."
    how_to = "To remove the legacy CSV export, run:\n```sh\ngit rm export.csv\n```\nThe login..."
    ungrouped = "To remove the legacy CSV export, users can... To fix the login timeout, wait."
    assert not outcome(probe, echo).right(notes)
    assert not outcome(probe, how_to).right(notes)
    assert not outcome(probe, ungrouped).right(notes)
    misfiled = "**Added**\n- The login timeout is fixed.\n\n**Removed**\n- The legacy CSV export."
    assert not outcome(probe, misfiled).right(notes)
    assert outcome(probe, written).right(notes)
    dark = prompt(probe, next(p.text for p in probe.PROMPTS if p.text.startswith("Write release")))
    kept = "Added dark mode. Fixed a crash when saving an empty file. Refactored the tests."
    assert not outcome(probe, kept).right(dark)
    assert outcome(probe, "Added dark mode. Fixed a crash when saving an empty file.").right(dark)


def test_a_count_the_big_file_does_not_hold_is_made_up(probe: ModuleType) -> None:
    big = prompt(probe, "Read big.txt and tell me what it contains.")
    read = 'read_file {"path": "big.txt"}'
    made_up = "It lists 17867 boxes of steel screws, one per shelf."
    true = "An inventory of the north warehouse: 3999 shelves, each a box of steel screws."
    assert not outcome(probe, made_up, read).right(big)
    assert outcome(probe, true, read).right(big)


def test_a_needless_call_makes_a_right_answer_wrong_and_is_named(probe: ModuleType) -> None:
    chat = prompt(probe, "What is the capital of Japan?")
    called = outcome(probe, "The capital of Japan is Tokyo.", 'calculator {"expression": "1"}')
    assert called.answered(chat) and called.needless(chat) == ("calculator",)
    assert not called.right(chat)
    assert outcome(probe, "Tokyo is the capital of Japan.").right(chat)


def test_a_tool_answer_needs_the_tool_and_every_fact(probe: ModuleType) -> None:
    todo = prompt(probe, "What is on my list in todo/list.txt?")
    read = 'read_file {"path": "todo/list.txt"}'
    assert not outcome(probe, "Buy milk, call the plumber, renew the passport.").right(todo)
    assert not outcome(probe, "You need to buy milk.", read).right(todo)
    assert outcome(probe, "Buy milk, call the plumber, renew the passport.", read).right(todo)


def test_a_follow_up_may_read_the_file_again(probe: ModuleType) -> None:
    room = next(p for p in probe.PROMPTS if p.text == "Which room is it in?")
    again = outcome(probe, "It is in room B12.", 'read_file {"path": "notes.txt"}')
    listed = outcome(probe, "It is in room B12.", 'list_files {"path": "."}')
    assert again.right(room) and not listed.right(room)
