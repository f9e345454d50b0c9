"""HTML turned into readable text: the words a reader sees, in blocks, without markup.

Scripts, styles, templates, SVG and the like are dropped; block elements
(paragraphs, headings, list items, table rows, ``<br>``) start new lines;
headings are marked ``#``, list items ``-``; whitespace is collapsed except
inside ``<pre>``; the title comes first. Stdlib ``html.parser`` only: it
never raises on broken markup.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object"})
_BLOCK = frozenset(
    """p div section article main header footer nav aside blockquote ul ol dl dt dd table
    thead tbody tfoot tr form fieldset figure figcaption details summary hr br pre li
    h1 h2 h3 h4 h5 h6""".split()  # noqa: SIM905 (a word list reads better)
)
_SPACES = re.compile(r"\s+")
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.title = ""
        self._line: list[str] = []
        self._skipping: list[str] = []
        self._in_title = False
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP and tag not in _VOID:
            self._skipping.append(tag)
        if tag == "title":
            self._in_title = True
        if tag in _BLOCK:
            self._break()
        if tag == "pre":
            self._pre += 1
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._line.append("#" * int(tag[1]) + " ")
        elif tag == "li":
            self._line.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if self._skipping and self._skipping[-1] == tag:
            self._skipping.pop()
        if tag == "title":
            self._in_title = False
        if tag == "pre" and self._pre:
            self._break(keep=True)
            self._pre -= 1
        elif tag in _BLOCK:
            self._break()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skipping:
            return
        if self._pre:
            for i, part in enumerate(data.split("\n")):
                if i:
                    self._break(keep=True)
                self._line.append(part)
            return
        self._line.append(_SPACES.sub(" ", data))

    def _break(self, *, keep: bool = False) -> None:
        text = "".join(self._line)
        line = text.rstrip() if keep else " ".join(text.split())
        if line or keep:
            self.lines.append(line)
        self._line = []

    def text(self) -> str:
        self._break()
        title = " ".join(self.title.split())
        body = "\n".join(self.lines).strip("\n")
        return f"{title}\n\n{body}" if title else body


def html_to_text(html: str) -> str:
    """The readable text of an HTML document (see the module doc)."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.text()
