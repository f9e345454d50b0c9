"""A file the user named, read whole: the one place its read errors become a ConfigError."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError


def read_named_file(path: str | os.PathLike[str], what: str) -> str:
    """The UTF-8 text of ``path``; ConfigError ``cannot read <what> '<path>': <why>``."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read {what} {os.fspath(path)!r}: {err}") from err
