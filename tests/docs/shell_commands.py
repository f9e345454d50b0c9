"""The shell commands of the README and the docs pages: ```sh, ```bash and ```console blocks.

In ``sh``/``bash`` blocks every line is a command (a trailing ``\\`` joins the
next line); in ``console`` blocks only the lines after a ``$`` prompt are
(the others are the output). Comments go, a command line is split at ``&&``
into its commands, and a trailing ``&`` (run in the background) goes too: what
is left is each command as a user types it, spaces collapsed.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.docs.markdown_blocks import Block, blocks, pages

SHELL_LANGUAGES = ("sh", "bash", "console")


@dataclass(frozen=True)
class Command:
    """One command and every place (``page:line``) the docs show it."""

    text: str
    places: tuple[str, ...]


def without_comment(line: str) -> str:
    """``line`` up to a ``#`` that starts a comment (not one inside quotes or a word)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _lines(block: Block) -> list[str]:
    """The command lines of ``block``, continuation lines joined."""
    found: list[str] = []
    pending = ""
    for raw in block.code.splitlines():
        if block.language == "console":
            if not raw.startswith("$ "):
                continue
            raw = raw[2:]
        line = without_comment(raw).rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.strip():
            found.append(line)
    return found


def commands_of(block: Block) -> list[str]:
    """The commands of one shell block, in order."""
    out: list[str] = []
    for line in _lines(block):
        for part in line.split("&&"):
            text = " ".join(part.split()).removesuffix(" &")
            if text:
                out.append(text)
    return out


def documented_commands() -> list[Command]:
    """Every command of every page's shell blocks, once each, in order of first mention."""
    places: dict[str, list[str]] = {}
    for page in pages():
        for block in blocks(page):
            if block.language in SHELL_LANGUAGES:
                for text in commands_of(block):
                    where = places.setdefault(text, [])
                    if block.where not in where:
                        where.append(block.where)
    return [Command(text, tuple(where)) for text, where in places.items()]
