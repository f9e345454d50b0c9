"""Fuzzing the skill loader: arbitrary bytes in a skill folder raise only SkillError."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from agent_smith import SkillError, load_skill
from tests.support.fuzz import SLOW, TOO_DEEP

_front_matter = st.builds(
    lambda head, body: f"---\n{head}\n---\n{body}".encode(),
    st.text(max_size=120),
    st.text(max_size=60),
)


def load(name: str, content: bytes) -> None:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-skill-"))
    try:
        (folder / name).write_bytes(content)
        try:
            with load_skill(folder):
                pass
        except SkillError:
            pass
    finally:
        shutil.rmtree(folder)


@SLOW
@given(st.binary(max_size=300) | _front_matter)
@example(b"---\nname: x\ndescription: '\n---\n")
def test_an_arbitrary_skill_md_loads_or_raises_skill_error(content: bytes) -> None:
    load("SKILL.md", content)


@SLOW
@given(st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
@example(TOO_DEEP.encode())
@example(b'{"name": "x", "system_prompt": 5}')
def test_an_arbitrary_skill_json_loads_or_raises_skill_error(content: bytes) -> None:
    load("skill.json", content)
