"""How to install an optional extra, said the same way in every error that needs one."""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """The command that installs the optional extra ``extra`` into a checkout's environment."""
    return f"pip install -e '.[{extra}]' (in the agent_smith checkout)"
