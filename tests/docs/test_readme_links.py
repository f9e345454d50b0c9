"""The README's relative links reach a file, and its anchors a heading.

The docs pages are checked by ``mkdocs build --strict``; the README is not
part of the site, so it is checked here.
"""

from __future__ import annotations

import re

from tests.docs.markdown_blocks import ROOT

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(markdown: str) -> set[str]:
    in_fence = False
    found = set()
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            found.add(_anchor(line.lstrip("#")))
    return found


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    broken = []
    for target in _LINK.findall(readme):
        if re.match(r"[a-z]+:", target):
            continue  # http(s) and mailto: not checked offline
        path, _, anchor = target.partition("#")
        file = ROOT / path if path else ROOT / "README.md"
        missing_anchor = (
            file.exists()
            and bool(anchor)
            and file.suffix == ".md"
            and anchor not in _anchors(file.read_text("utf-8"))
        )
        if not file.exists() or missing_anchor:
            broken.append(target)
    assert not broken, f"README links that lead nowhere: {broken}"
