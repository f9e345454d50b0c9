"""The one filter of visible text: written calls hidden in every syntax, at every split."""

from __future__ import annotations

import pytest

from agent_smith.agent.call_text import CallText, could_be_call, read_call_text, starts_like_a_call

CALL = '{"name": "calculator", "arguments": {"expression": "17 * 23"}}'
PRETTY = '{\n  "name": "calculator",\n  "arguments": {\n    "expression": "17 * 23"\n  }\n}'
READ_CALL = '{"name": "read_file", "arguments": {"path": "notes.txt"}}'
SEVENTEEN = ("calculator", {"expression": "17 * 23"})
READ = ("read_file", {"path": "notes.txt"})
WEATHER = '{"name": "weather", "arguments": {"city": "Paris"}}'
NAMED = '{"name": "read_file", "country": "France"}'
STRING_ARGS = '{"name": "calculator", "arguments": "17"}\nok'

# (text, what the user sees, the calls kept, cut off)
CASES = [
    (CALL, "", (SEVENTEEN,), False),
    (f"  \n{PRETTY}\n", "  \n", (SEVENTEEN,), False),  # a blank line is no call
    (f"```json\n{PRETTY}\n```", "", (SEVENTEEN,), False),
    (f"```JSON\n{CALL}```", "", (SEVENTEEN,), False),
    (f"```\n{CALL}\n```", "", (SEVENTEEN,), False),
    (f"<tool_call>\n{CALL}\n</tool_call>", "", (SEVENTEEN,), False),
    (f"{CALL}\n{CALL}\n{CALL}\n{CALL}", "", (SEVENTEEN,), False),  # repeated: kept once
    (f"{READ_CALL}\n{CALL}", "", (READ, SEVENTEEN), False),
    (f"<tool_call>{CALL}</tool_call>\n```json\n{READ_CALL}\n```", "", (SEVENTEEN, READ), False),
    (f"{CALL}\n{CALL[:30]}", "", (SEVENTEEN,), True),  # the cap cut the second copy
    (CALL[:40], "", (), True),
    (f"<tool_call>\n{CALL}", "", (), True),  # a tag never closed
    (f"{READ_CALL}line of text", "line of text", (READ,), False),  # the result it imagines
    (f"Sure.\n{CALL}\nThe answer is 391.", "Sure.\nThe answer is 391.", (SEVENTEEN,), False),
    (WEATHER, "", (("weather", {"city": "Paris"}),), False),
    ('{"city": "Paris"}', '{"city": "Paris"}', (), False),
    (NAMED, NAMED, (), False),
    (STRING_ARGS, STRING_ARGS, (), False),
    (f"[{CALL}]", f"[{CALL}]", (), False),
    (f"Sure! {CALL}", f"Sure! {CALL}", (), False),  # mid-line: prose, as written
    ("```python\nprint(1)\n```", "```python\nprint(1)\n```", (), False),
    ("17 * 23 = 391\n\n  Done.  ", "17 * 23 = 391\n\n  Done.  ", (), False),
    ("", "", (), False),
]
IDS = [
    "bare", "pretty", "fence", "fence-upper", "fence-plain", "tags", "repeated", "two-calls",
    "mixed-units", "repeated-cut", "cut", "unclosed-tag", "imagined-result", "prose-around",
    "unoffered-name", "json", "name-not-call", "string-arguments", "array", "mid-line",
    "python-fence", "prose", "empty",
]  # fmt: skip


@pytest.mark.parametrize(("text", "visible", "calls", "cut"), CASES, ids=IDS)
def test_a_reply_read_whole_shows_only_what_is_no_call(
    text: str, visible: str, calls: tuple[object, ...], cut: bool
) -> None:
    reading = read_call_text(text)
    assert reading.visible == visible
    assert reading.calls == calls
    assert reading.cut is cut
    assert reading.hidden is (bool(calls) or cut)


@pytest.mark.parametrize(("text", "visible", "calls", "cut"), CASES, ids=IDS)
def test_a_streamed_reply_shows_the_same_text_split_at_every_boundary(
    text: str, visible: str, calls: tuple[object, ...], cut: bool
) -> None:
    for split in range(len(text) + 1):
        reader = CallText()
        shown = reader.feed(text[:split]) + reader.feed(text[split:]) + reader.end()
        assert shown == visible, split
        assert tuple(reader.calls) == calls
    reader = CallText()
    shown = "".join(reader.feed(char) for char in text)  # one character a delta
    assert shown + reader.end() == visible


def test_a_call_is_held_while_it_arrives_and_prose_is_shown_at_once() -> None:
    reader = CallText()
    assert reader.feed("The answer") == "The answer"
    assert reader.feed(" is 391.\n") == " is 391.\n"
    assert reader.feed('{"name": "calc') == ""
    assert reader.holding
    assert reader.feed('ulator", "arguments": {}}') == ""
    assert reader.feed("\nBye") == "Bye"
    assert reader.end() == ""
    assert reader.calls == [("calculator", {})]


def test_json_that_turns_out_no_call_is_shown_as_soon_as_it_cannot_be_one() -> None:
    reader = CallText()
    assert reader.feed('{"na') == ""
    assert reader.feed('me": "Paris", "c') == '{"name": "Paris", "c'


def test_absurd_nesting_is_text_not_a_crash() -> None:
    deep = '{"name": "calculator", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert read_call_text(deep).calls == ()


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("", None),
        ("  \n", None),
        ("<tool", None),
        ("`", None),
        ("{", True),
        (" ```j", True),
        ("<tool_call>", True),
        ("<b>", False),
        ("The", False),
        ("[{", False),
    ],
)
def test_starts_like_a_call_decides_as_early_as_it_can(text: str, verdict: bool | None) -> None:
    assert starts_like_a_call(text) is verdict


@pytest.mark.parametrize(
    "content",
    [CALL, f"```json\n{PRETTY}\n```", f"<tool_call>\n{CALL}\n</tool_call>",
     '{"arguments": {"expression": "1"}, "name": "calculator"}'],
)  # fmt: skip
def test_every_prefix_of_a_call_could_be_one(content: str) -> None:
    for end in range(len(content) + 1):
        assert could_be_call(content[:end]), content[:end]


@pytest.mark.parametrize(
    "text",
    [
        '{"city": "Paris"}',
        '{"na": 1',
        '{"name": "read_file", "country": "France"}',
        '{"name": "calculator"}',
        '{"name": "calculator" "arguments"',
        '{"name" 1',
        '{"name": 1',
        "{}",
        "```python\nprint(1)",
        "```js\n{",
        "<b>",
        "The answer is 391.",
        '[{"name": "calculator"}]',
    ],
)
def test_text_that_cannot_become_a_call_is_said_to_be_none(text: str) -> None:
    assert not could_be_call(text)
