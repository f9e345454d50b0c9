"""Every ```python block of the README and the docs runs, so no example rots.

The blocks of one page run in order in one namespace (a page reads as one
session: a later block may use the agent an earlier one built), in a fresh
subprocess whose working directory is a temporary one holding a link to
``examples/``. ``LLAMA_SERVER_URL`` points at a scripted chat server that
answers like a cooperative model (:mod:`tests.docs.schema_server`), so the
snippets written with ``os.environ.get("LLAMA_SERVER_URL", ...)`` reach it;
a page whose snippets read ``DATABASE_URL`` gets a fresh database on the
tests' PostgreSQL server there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.markdown_blocks import ROOT, Block, pages, python_blocks
from tests.docs.schema_server import fitting_responder
from tests.support.llm_server import ScriptedLlmServer

#: Seconds one page's blocks may take together (they take well under 10).
PAGE_TIMEOUT = 90.0
RUNNER = Path(__file__).with_name("run_blocks.py")
#: Answers for snippets that ask a person (``input()``): yes, every time.
STDIN = "y\n" * 50


def _runnable(page: Path) -> list[Block]:
    return [b for b in python_blocks(page) if b.skip_reason is None]


PAGES = [page for page in pages() if _runnable(page)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_python_blocks_of_the_page_run(
    page: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    runnable = _runnable(page)
    database: dict[str, str] = {}
    if any("DATABASE_URL" in b.code for b in runnable):
        database["DATABASE_URL"] = request.getfixturevalue("postgres_url")
    blocks_file = tmp_path / "blocks.json"
    blocks_file.write_text(
        json.dumps(
            [
                {"page": str(b.page.relative_to(ROOT)), "line": b.line, "code": b.code}
                for b in runnable
            ]
        ),
        encoding="utf-8",
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    with ScriptedLlmServer(fitting_responder) as server:
        env = dict(os.environ, LLAMA_SERVER_URL=server.url, **database)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.pop("LLAMA_API_KEY", None)
        done = subprocess.run(
            [sys.executable, str(RUNNER), str(blocks_file)],
            cwd=work,
            input=STDIN,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=PAGE_TIMEOUT,
            env=env,
        )
    assert done.returncode == 0, f"{done.stderr}\n--- stdout ---\n{done.stdout}"


def test_skipped_blocks_say_why() -> None:
    skipped = [b for page in pages() for b in python_blocks(page) if b.skip_reason is not None]
    assert all(b.skip_reason and b.skip_reason.strip() for b in skipped)
    # A handful at most: a snippet that cannot run should be rewritten until it can.
    assert len(skipped) <= 5, [b.where for b in skipped]
