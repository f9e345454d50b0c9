"""The API reference documents every public name, by its public path."""

from __future__ import annotations

import re

import agent_smith
from tests.docs.markdown_blocks import ROOT

REFERENCE = ROOT / "docs" / "reference"
_DIRECTIVE = re.compile(r"^::: (\S+)$", re.M)


def _documented() -> list[str]:
    return [
        name
        for page in sorted(REFERENCE.glob("*.md"))
        for name in _DIRECTIVE.findall(page.read_text(encoding="utf-8"))
    ]


def test_every_public_name_has_a_reference_entry() -> None:
    documented = set(_documented())
    missing = [
        n
        for n in agent_smith.__all__
        if n != "__version__" and f"agent_smith.{n}" not in documented
    ]
    assert not missing, f"add these to a page under docs/reference/: {missing}"


def test_reference_entries_name_public_names_once() -> None:
    entries = _documented()
    # Module paths move (agent_smith.agent.events -> ...); the public name does not.
    assert all(e.startswith("agent_smith.") and e.count(".") == 1 for e in entries), entries
    assert all(e.removeprefix("agent_smith.") in agent_smith.__all__ for e in entries)
    assert len(entries) == len(set(entries))
