"""The system prompt an agent sends with its active skills (seed §12.4).

Layout, in activation order, sections separated by one blank line::

    <base system prompt>

    # Skill: <name>
    <system prompt>

    # Skill Context: <name>
    <context data as compact JSON>

Empty sections are left out: an empty base, a skill without a prompt, a skill
whose ``context_data`` is ``None``. Surrounding whitespace of each prompt is
trimmed so prompt files ending in a newline do not leave double blank lines.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..errors import SkillError
from .skill import Skill


def context_json(skill: Skill) -> str | None:
    """The skill's context as the JSON text the model sees (``None`` for no context).

    Compact (no spaces after separators) and UTF-8, not ``\\u`` escapes, so the
    byte count the size cap checks is the byte count sent. Values JSON cannot
    represent (NaN, sets, objects) raise :class:`SkillError`.
    """
    if skill.context_data is None:
        return None
    try:
        return json.dumps(
            skill.context_data, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except (TypeError, ValueError) as err:
        raise SkillError(
            f"skill {skill.name!r}: context_data is not JSON-serialisable: {err}",
            skill_name=skill.name,
        ) from err


def skill_context_bytes(skill: Skill) -> int:
    """UTF-8 size of the skill's context JSON (0 when it has none)."""
    text = context_json(skill)
    return 0 if text is None else len(text.encode("utf-8"))


def compose_system_prompt(base: str, skills: Sequence[Skill]) -> str:
    """The base prompt followed by each skill's prompt and context sections."""
    sections: list[str] = []
    if base.strip():
        sections.append(base.strip())
    for skill in skills:
        prompt = skill.system_prompt.strip()
        if prompt:
            sections.append(f"# Skill: {skill.name}\n{prompt}")
        context = context_json(skill)
        if context is not None:
            sections.append(f"# Skill Context: {skill.name}\n{context}")
    return "\n\n".join(sections)
