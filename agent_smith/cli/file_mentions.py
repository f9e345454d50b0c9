"""The demo's nudge to read a file the user names instead of guessing what it says.

Measured on the default local model (Qwen2.5-Coder-0.5B-Instruct, with
``scripts/measure_local_tools.py``): asked "Which port does config.ini set?"
it answers from imagination ("8080") whatever the system prompt and the
tool's description say — it called read_local_file for 1 of 8 questions
about files. The sentence "Read config.ini with read_local_file before you
answer." after the question made it call the tool for 5 of 8. So the REPL
adds that sentence to a line that names files present in the sandbox
(:func:`mention_files`); any other line goes to the model as typed.
"""

from __future__ import annotations

import re

from ..errors import ToolError
from .demo_tools import ReadLocalFileTool

#: A word that looks like a file name: a dot and an extension (notes.txt, src/app.py).
_FILE_NAME = re.compile(r"[\w./-]+\.\w+")


def mention_files(text: str, reader: ReadLocalFileTool) -> str:
    """``text``, with a request to read the files it names that ``reader`` can read."""
    names = [name for name in dict.fromkeys(_FILE_NAME.findall(text)) if _readable(reader, name)]
    if not names:
        return text
    return f"{text}\n\nRead {', '.join(names)} with read_local_file before you answer."


def _readable(reader: ReadLocalFileTool, name: str) -> bool:
    try:
        return reader.resolve(name).is_file()
    except ToolError:  # not there, or outside the sandbox
        return False
