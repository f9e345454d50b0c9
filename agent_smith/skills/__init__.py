"""Skills: bundles of prompt, tools, MCP servers and context an agent switches on.

See :class:`Skill`, :func:`load_skill` (``skill.json`` and ``SKILL.md``
folders), :func:`normalize_skill_name` (the tool-prefix rule) and
:func:`compose_system_prompt` (seed §12.4).
"""

from __future__ import annotations

from .loader import load_skill
from .prompt import compose_system_prompt, context_json, skill_context_bytes
from .skill import Skill, normalize_skill_name

__all__ = [
    "Skill",
    "compose_system_prompt",
    "context_json",
    "load_skill",
    "normalize_skill_name",
    "skill_context_bytes",
]
