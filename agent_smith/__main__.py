"""``python -m agent_smith``: the demo REPL (same as the ``agent-smith`` command)."""

from __future__ import annotations

from .cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
