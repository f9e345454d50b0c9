"""`import agent_smith` stays light: no heavy or optional packages pulled in."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("openai", "pydantic", "httpx", "jsonschema", "mcp", "xllamacpp", "flask")


def test_import_pulls_in_no_heavy_packages() -> None:
    code = (
        "import json, sys, agent_smith\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert "agent_smith" in loaded
    assert loaded.isdisjoint(FORBIDDEN), sorted(loaded.intersection(FORBIDDEN))
