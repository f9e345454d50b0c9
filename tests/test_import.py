"""`import agent_smith` stays light: no heavy or optional packages pulled in."""

from __future__ import annotations

import json
import subprocess
import sys

from agent_smith._lazy_names import LAZY

FORBIDDEN = (
    "openai",
    "opentelemetry",
    "pydantic",
    "httpx",
    "jsonschema",
    "mcp",
    "xllamacpp",
    "flask",
    "jwt",
    "distributed",
    "dask",
    "waitress",
    "dbos",
    "sqlalchemy",
)


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


def test_every_public_name_resolves_and_dir_lists_them() -> None:
    # __init__.py names each public object three times (type-checking imports,
    # the lazy table, __all__); this catches the three drifting apart.
    import agent_smith

    for name in agent_smith.__all__:
        assert getattr(agent_smith, name) is not None, name
    assert set(dir(agent_smith)) == set(agent_smith.__all__)
    assert set(LAZY) <= set(agent_smith.__all__)
