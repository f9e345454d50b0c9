"""The SKILL.md front-matter subset."""

from __future__ import annotations

import pytest

from agent_smith import ParseError
from agent_smith.skills.frontmatter import parse_front_matter


def test_plain_values_and_body_are_split_at_the_closing_line() -> None:
    front = parse_front_matter("---\nname: pdf-tools\ndescription: Fill PDF forms.\n---\n\nBody\n")
    assert front.fields == {"name": "pdf-tools", "description": "Fill PDF forms."}
    assert front.body == "Body"


def test_quoted_values_keep_colons_hashes_and_escapes() -> None:
    text = (
        "---\n"
        "name: 'it''s'\n"
        'description: "Use: when asked # not a comment \\"really\\" \\u00e9"\n'
        "---\n"
    )
    fields = parse_front_matter(text).fields
    assert fields["name"] == "it's"
    assert fields["description"] == 'Use: when asked # not a comment "really" é'


def test_plain_values_drop_trailing_comments_and_fold_continuation_lines() -> None:
    text = "---\nname: x # the name\ndescription: first line\n  second line\n\n  para\n---\n"
    fields = parse_front_matter(text).fields
    assert fields["name"] == "x"
    assert fields["description"] == "first line second line\npara"


def test_block_scalars_keep_or_fold_lines() -> None:
    text = "---\nliteral: |\n  one\n    two\n\nfolded: >-\n  a\n  b\n---\n"
    fields = parse_front_matter(text).fields
    assert fields["literal"] == "one\n  two"
    assert fields["folded"] == "a b"


def test_nested_mappings_lists_and_comments_are_tolerated_as_none() -> None:
    text = (
        "---\n"
        "# a comment\n"
        "name: x\n"
        "metadata:\n"
        "  author: someone\n"
        "  version: '1.0'\n"
        "allowed-tools: [Read, Grep]\n"
        "tags:\n"
        "- a\n"
        "- b\n"
        "empty:\n"
        "---\n"
        "body"
    )
    fields = parse_front_matter(text).fields
    assert fields == {
        "name": "x",
        "metadata": None,
        "allowed-tools": None,
        "tags": None,
        "empty": None,
    }


def test_byte_order_mark_and_crlf_line_ends_are_accepted() -> None:
    front = parse_front_matter("\ufeff---\r\nname: x\r\n---\r\nline 1\r\nline 2\r\n")
    assert front.fields == {"name": "x"}
    assert front.body == "line 1\nline 2"


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("name: x\n", 1, "expected '---'"),
        ("---\nname: x\n", 3, "not closed"),
        ("---\nname x\n---\n", 2, "expected 'key: value'"),
        ("---\nname: a\nname: b\n---\n", 3, "duplicate key 'name'"),
        ('---\nname: "open\n---\n', 2, "not closed on its line"),
        ("---\nname: 'a' b\n---\n", 2, "text after the closing quote"),
        ('---\nname: "\\q"\n---\n', 2, "unknown escape"),
        ("---\n  indented: x\n---\n", 2, "indented line before any key"),
        ('---\nname: "a"\n  more\n---\n', 3, "continuation of the quoted value"),
    ],
)
def test_malformed_front_matter_names_the_line(text: str, line: int, problem: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_front_matter(text)
    assert str(info.value).startswith(f"line {line}: ")
    assert problem in str(info.value)
    assert info.value.offset == sum(len(row) + 1 for row in text.split("\n")[: line - 1])
