"""Run a page's Python blocks in order in one namespace (a subprocess of the snippet test).

Usage: ``python run_blocks.py BLOCKS.json``, where the file holds a list of
``{"page": "docs/page.md", "line": 12, "code": "..."}``. Each block is
compiled under its page, padded to its line, so a traceback points at the
Markdown's own line numbers; the first failure ends the run with status 1.
"""

from __future__ import annotations

import json
import sys
import traceback
import types


def main(path: str) -> int:
    with open(path, encoding="utf-8") as file:
        blocks = json.load(file)
    # The blocks' own __main__, so that a class they define resolves its type
    # hints (and pickles) through sys.modules like a script's would.
    main_module = types.ModuleType("__main__")
    sys.modules["__main__"] = main_module
    namespace = main_module.__dict__
    for block in blocks:
        try:
            source = "\n" * (block["line"] - 1) + block["code"]
            exec(compile(source, block["page"], "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            print(f"the block at {block['page']}:{block['line']} failed", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
