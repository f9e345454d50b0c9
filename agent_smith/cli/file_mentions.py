"""The demo's nudge to read a file the user names instead of guessing what it says.

Measured on the default local model (Qwen2.5-Coder-0.5B-Instruct,
docs/llama.md): asked "Which port does config.ini set?"
it answers from imagination ("8080") whatever the system prompt and the
tool's description say — it called the file tool for 1 of 8 questions
about files. The sentence "Read config.ini with read_file before you
answer." after the question made it call the tool for 5 of 8 (the tool is
now the files toolkit's ``read_file``). So the REPL
adds that sentence to a line that names files present in the sandbox
(:func:`mention_files`); any other line goes to the model as typed.
"""

from __future__ import annotations

import os
import re

from ..errors import ToolError
from ..toolkits.workspace import Workspace

#: A word that looks like a file name: a dot and an extension (notes.txt, src/app.py).
_FILE_NAME = re.compile(r"[\w./-]+\.\w+")


def mention_files(text: str, workspace: Workspace) -> str:
    """``text``, with a request to read the files it names that are in ``workspace``."""
    names = [name for name in dict.fromkeys(_FILE_NAME.findall(text)) if _present(workspace, name)]
    if not names:
        return text
    return f"{text}\n\nRead {', '.join(names)} with read_file before you answer."


def _present(workspace: Workspace, name: str) -> bool:
    try:
        return os.path.isfile(workspace.resolve(name, tool="read_file"))
    except ToolError:  # outside the sandbox
        return False
