"""Files the user names in the REPL: text files to read, images (and PDFs, audio) to attach.

Measured on the default local model (Qwen2.5-Coder-0.5B-Instruct,
docs/llama.md): asked "Which port does config.ini set?"
it answers from imagination ("8080") whatever the system prompt and the
tool's description say — it called the file tool for 1 of 8 questions
about files. The sentence "Read config.ini with read_file before you
answer." after the question made it call the tool for 5 of 8 (the tool is
now the files toolkit's ``read_file``). So the REPL
adds that sentence to a line that names text files present in the sandbox
(:func:`mention_files`). A named image, PDF or audio file in the sandbox
is no text to read: it goes with the line as a part, for a model that
sees. ``/image PATH`` attaches any file the user can read
(:func:`attachment`). Any other line goes to the model as typed.
"""

from __future__ import annotations

import mimetypes
import os
import re
from pathlib import Path

from ..base.media_input import media_part
from ..base.parts import Content, MediaPart, TextPart, sniff_media_type
from ..errors import ConfigError, ToolError
from ..toolkits.workspace import Workspace

#: A word that looks like a file name: a dot and an extension (notes.txt, src/app.py).
_FILE_NAME = re.compile(r"[\w./-]+\.\w+")
#: Media types that travel as parts rather than as text to read.
_MEDIA = ("image/", "audio/", "application/pdf")


def mention_files(text: str, workspace: Workspace) -> Content:
    """``text``, asking to read the text files it names in ``workspace``; its media attached."""
    names = [name for name in dict.fromkeys(_FILE_NAME.findall(text)) if _present(workspace, name)]
    media = [name for name in names if _is_media(name)]
    read = [name for name in names if name not in media]
    if read:
        text = f"{text}\n\nRead {', '.join(read)} with read_file before you answer."
    if not media:
        return text
    parts = (attachment(workspace.resolve(name, tool="read_file")) for name in media)
    return (TextPart(text), *parts)


def attachment(path: str | os.PathLike[str]) -> MediaPart:
    """The file at ``path`` as a part (image, PDF, text file or audio), else ConfigError."""
    file = Path(path).expanduser()
    try:
        data = file.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read {str(file)!r}: {err.strerror or err}") from err
    media_type = sniff_media_type(data) or mimetypes.guess_type(file.name)[0]
    if media_type is None:
        raise ConfigError(f"cannot tell what kind of file {str(file)!r} is")
    return media_part(media_type, data=data, name=file.name)


def _is_media(name: str) -> bool:
    guessed = mimetypes.guess_type(name)[0] or ""
    return guessed.startswith(_MEDIA)


def _present(workspace: Workspace, name: str) -> bool:
    try:
        return os.path.isfile(workspace.resolve(name, tool="read_file"))
    except ToolError:  # outside the sandbox
        return False
