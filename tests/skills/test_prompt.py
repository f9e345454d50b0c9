"""System prompt composition (seed §12.4) and the context size measure."""

from __future__ import annotations

import pytest

from agent_smith import SkillError
from agent_smith.skills import Skill, compose_system_prompt, context_json, skill_context_bytes

GOLDEN = """You are a helpful assistant.

# Skill: web-search
Search the web before answering.

# Skill Context: web-search
{"engine":"duck","limits":{"results":5}}

# Skill Context: glossary
["agent","skill","café"]

# Skill: maths
Show your working.

# Skill Context: maths
0"""


def test_compose_follows_activation_order_and_omits_empty_sections() -> None:
    skills = [
        Skill(
            name="web-search",
            system_prompt="Search the web before answering.\n",
            context_data={"engine": "duck", "limits": {"results": 5}},
        ),
        Skill(name="glossary", system_prompt="  \n", context_data=["agent", "skill", "café"]),
        Skill(name="empty"),
        Skill(name="maths", system_prompt="\nShow your working.", context_data=0),
    ]
    assert compose_system_prompt("You are a helpful assistant.\n", skills) == GOLDEN


def test_compose_without_base_starts_with_the_first_skill() -> None:
    skill = Skill(name="a", system_prompt="Do A.")
    assert compose_system_prompt("", [skill]) == "# Skill: a\nDo A."


def test_compose_without_skills_is_the_base_prompt() -> None:
    assert compose_system_prompt("Base.", []) == "Base."
    assert compose_system_prompt("", []) == ""


def test_compose_keeps_the_order_it_is_given() -> None:
    a, b = Skill(name="a", system_prompt="A"), Skill(name="b", system_prompt="B")
    assert compose_system_prompt("", [b, a]) == "# Skill: b\nB\n\n# Skill: a\nA"


def test_context_bytes_is_the_utf8_size_of_the_compact_json() -> None:
    skill = Skill(name="s", context_data={"word": "café"})
    assert context_json(skill) == '{"word":"café"}'
    assert skill_context_bytes(skill) == len('{"word":"café"}'.encode()) == 16


def test_context_bytes_is_zero_without_context_but_counts_falsy_values() -> None:
    assert skill_context_bytes(Skill(name="s")) == 0
    assert skill_context_bytes(Skill(name="s", context_data={})) == 2
    assert skill_context_bytes(Skill(name="s", context_data="")) == 2


@pytest.mark.parametrize("bad", [{1, 2}, float("nan"), object()])
def test_context_that_is_not_json_is_a_skill_error(bad: object) -> None:
    skill = Skill(name="odd", context_data=bad)
    with pytest.raises(SkillError) as info:
        skill_context_bytes(skill)
    assert info.value.skill_name == "odd"
    with pytest.raises(SkillError):
        compose_system_prompt("", [skill])
