"""The Skill value and the skill-name normalisation rule."""

from __future__ import annotations

import pytest

from agent_smith import SkillError, Tool, ToolContext, ToolResult, ToolSchema
from agent_smith.skills import Skill, normalize_skill_name
from agent_smith.skills.skill import MAX_PREFIX_LENGTH


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        ("web_search", "web_search"),
        ("web-search", "web_search"),
        ("Web Search", "web_search"),
        ("pdf.tools", "pdf_tools"),
        ("GitHub", "github"),
        ("a", "a"),
        ("v2-api", "v2_api"),
        ("time-keeper-2", "time_keeper_2"),
        ("  padded  ", "padded"),
    ],
)
def test_normalize_maps_names_to_lowercase_underscore_prefixes(name: str, normalized: str) -> None:
    assert normalize_skill_name(name) == normalized


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "---",
        "!!!",
        "2fa",  # leading digit
        "_private",  # leading separator
        "trailing-",  # trailing separator
        "web--search",  # doubled separator would make the '__' that splits skill from tool
        "web_-search",
        "web  search",
        "c++",  # dropping symbols would merge it with "c"
        "café",  # non-ASCII letters are not transliterated
        "a/b",
        "tab\tname",
        "new\nline",
    ],
)
def test_normalize_refuses_ambiguous_names_with_skill_error(name: str) -> None:
    with pytest.raises(SkillError) as info:
        normalize_skill_name(name)
    assert info.value.skill_name == name
    assert repr(name) in str(info.value)


def test_normalized_names_never_contain_the_prefix_separator() -> None:
    for name in ("a-b-c", "x_y", "Q.R S"):
        prefix = normalize_skill_name(name)
        assert "__" not in prefix
        assert not prefix.endswith("_")
        assert f"{prefix}__tool".split("__", 1) == [prefix, "tool"]


def test_normalize_caps_the_prefix_so_skill_tool_names_fit_64_characters() -> None:
    longest = "a" * MAX_PREFIX_LENGTH
    assert normalize_skill_name(longest) == longest
    with pytest.raises(SkillError, match="too long"):
        normalize_skill_name(longest + "b")


def test_normalize_refuses_a_non_string_name() -> None:
    with pytest.raises(SkillError):
        normalize_skill_name(42)  # type: ignore[arg-type]


class _Upper(Tool):
    @property
    def schema(self) -> ToolSchema:
        return ToolSchema("upper", "Upper-case text.")

    def invoke(self, args: dict[str, object], ctx: ToolContext) -> ToolResult:
        return ToolResult(str(args.get("text", "")).upper())


def test_skill_wraps_plain_functions_as_tools_and_keeps_tool_objects() -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    upper = _Upper()
    skill = Skill(name="maths", tools=[add, upper])  # type: ignore[list-item]
    assert isinstance(skill.tools, tuple)
    assert [t.name for t in skill.tools] == ["add", "upper"]
    assert skill.tools[1] is upper
    assert skill.tools[0].schema.description == "Add two numbers."


def test_skill_refuses_a_tool_that_is_neither_a_tool_nor_callable() -> None:
    with pytest.raises(SkillError) as info:
        Skill(name="broken", tools=("not a tool",))  # type: ignore[arg-type]
    assert info.value.skill_name == "broken"


def test_skill_defaults_are_empty_and_normalized_name_follows_the_rule() -> None:
    skill = Skill(name="Web Search")
    assert (skill.system_prompt, skill.tools, skill.mcp_clients) == ("", (), ())
    assert skill.context_data is None and skill.description == ""
    assert skill.normalized_name == "web_search"


class _FakeClient:
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_close_leaves_clients_passed_in_by_the_caller_open() -> None:
    client = _FakeClient()
    skill = Skill(name="s", mcp_clients=(client,))  # type: ignore[arg-type]
    skill.close()
    assert client.closed == 0
    assert skill.mcp_clients == (client,)
