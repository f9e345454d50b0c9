"""The search toolkit on a real tree: grep with context and caps, and the BM25 index."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_smith import (
    FilesPolicy,
    FilesToolkit,
    SearchPolicy,
    SearchToolkit,
    ShellPolicy,
    ShellToolkit,
    ToolError,
    WorkspaceChanges,
)
from agent_smith.base.cancellation import CancellationSource
from agent_smith.errors import CancelledError
from agent_smith.toolkits.lexical_index import words
from agent_smith.tools.base import ToolContext


def _tree(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


@pytest.fixture
def search(root: Path) -> SearchToolkit:
    _tree(
        root,
        {
            "src/retry.py": (
                "def backoff(attempt):\n    # exponential backoff\n    return 2**attempt\n"
            ),
            "src/http.py": "import retry\n\ndef send(request):\n    return retryPolicy(request)\n",
            "src/auth/tokens.py": "class TokenStore:\n    def refresh_token(self):\n        pass\n",
            "README.md": "How retries work: see src/retry.py\n",
            "node_modules/dep/index.js": "function backoff() {}\n",
        },
    )
    (root / "blob.bin").write_bytes(b"backoff\0\0binary")
    return SearchToolkit(SearchPolicy(root=root))


def test_grep_shows_path_line_and_text(search: SearchToolkit) -> None:
    assert search.grep("backoff") == (
        "2 match(es) in 1 file(s)\nsrc/retry.py:1:def backoff(attempt):\n"
        "src/retry.py:2:    # exponential backoff"
    )


def test_grep_shows_context_lines_and_separates_groups(root: Path) -> None:
    _tree(root, {"a.txt": "".join(f"line {i}\n" for i in range(1, 11))})
    out = SearchToolkit(SearchPolicy(root=root)).grep(r"line (2|9)$", context=1)
    assert out.splitlines()[1:] == [
        "a.txt-1-line 1",
        "a.txt:2:line 2",
        "a.txt-3-line 3",
        "--",
        "a.txt-8-line 8",
        "a.txt:9:line 9",
        "a.txt-10-line 10",
    ]


def test_grep_filters_by_glob_folder_and_case(search: SearchToolkit) -> None:
    assert "README.md:1:" in search.grep("RETRIES", ignore_case=True)
    assert search.grep("retry", glob="*.md").startswith("1 match(es) in 1 file(s)\nREADME.md")
    assert search.grep("Token", path="src/auth").count("src/auth/tokens.py") == 1
    assert search.grep("refresh", path="src/auth/tokens.py").endswith("def refresh_token(self):")


def test_grep_skips_binary_files_and_skipped_folders(search: SearchToolkit) -> None:
    out = search.grep("backoff")
    assert "blob.bin" not in out and "node_modules" not in out


def test_grep_stops_at_the_match_cap(root: Path) -> None:
    _tree(root, {f"f{i}.txt": "hit\nhit\n" for i in range(5)})
    out = SearchToolkit(SearchPolicy(root=root, max_matches=3)).grep("hit")
    assert out.startswith("3 match(es) in 2 file(s)")
    assert out.endswith("…[stopped at 3 matches; narrow the pattern, path or glob]")


def test_grep_cuts_long_lines(root: Path) -> None:
    _tree(root, {"long.txt": "x" * 10_000 + "needle\n"})
    search = SearchToolkit(SearchPolicy(root=root, max_line_chars=100))
    assert search.grep("needle") == "no match for 'needle'"  # past the cut: never scanned
    assert search.grep("x+").endswith(":1:" + "x" * 100)


def test_grep_explains_a_bad_pattern(search: SearchToolkit) -> None:
    with pytest.raises(ToolError, match="bad regular expression"):
        search.grep("(unclosed")
    with pytest.raises(ToolError, match="context must be 0-10"):
        search.grep("x", context=11)


def test_grep_stops_when_the_call_is_cancelled(search: SearchToolkit, context: ToolContext) -> None:
    source = CancellationSource()
    source.cancel()
    cancelled = ToolContext(source.token, 1.0, "c", context.logger, context.runtime)
    with pytest.raises(CancelledError):
        search.grep("backoff", ctx=cancelled)


def test_grep_does_not_follow_links_out(search: SearchToolkit, root: Path, outside: Path) -> None:
    (root / "door").symlink_to(outside)
    (root / "secret.txt").symlink_to(outside / "secret.txt")
    assert search.grep("secret") == "no match for 'secret'"
    with pytest.raises(ToolError, match="outside the workspace"):
        search.grep("secret", path="door")


def test_words_split_code_identifiers() -> None:
    assert words("retryPolicy HTTPServer refresh_token") == [
        "retrypolicy",
        "retry",
        "policy",
        "httpserver",
        "http",
        "server",
        "refresh_token",
        "refresh",
        "token",
    ]


def test_search_code_ranks_the_file_that_handles_it_first(search: SearchToolkit) -> None:
    out = search.search_code("where is exponential backoff handled")
    first = out.splitlines()[0]
    assert first.startswith("src/retry.py (score ")
    assert "  2: # exponential backoff" in out
    assert "node_modules" not in out and "blob.bin" not in out


def test_search_code_matches_split_identifiers_and_paths(search: SearchToolkit) -> None:
    assert search.search_code("refresh token").startswith("src/auth/tokens.py")
    assert search.search_code("retry policy", glob="http.py").startswith("src/http.py")


def test_the_index_is_built_once_and_refreshed_by_modification_time(
    search: SearchToolkit, root: Path
) -> None:
    index = search.index
    assert index.refresh() == 5  # the first refresh reads every file (blob.bin is skipped)
    assert len(index) == 4
    assert index.refresh() == 0  # nothing changed: nothing read
    (root / "src" / "new.py").write_text("def zebra(): pass\n")
    (root / "README.md").unlink()
    tokens = root / "src" / "auth" / "tokens.py"
    tokens.write_text("class Vault:\n    pass\n")
    os.utime(tokens, ns=(1, 1))  # a different modification time, whatever the clock
    assert index.refresh() == 3
    assert search.search_code("zebra").startswith("src/new.py")
    assert search.search_code("vault").startswith("src/auth/tokens.py")
    assert search.search_code("TokenStore") == "no file matches 'TokenStore'"
    assert "README" not in search.search_code("retries work")


def test_search_code_explains_an_empty_query(search: SearchToolkit) -> None:
    with pytest.raises(ToolError, match="empty"):
        search.search_code("  ")
    assert search.search_code("xylophone") == "no file matches 'xylophone'"


def test_the_search_tools_only_read(search: SearchToolkit) -> None:
    assert [(t.name, t.options.read_only) for t in search.tools()] == [
        ("grep", True),
        ("search_code", True),
    ]


def test_a_query_checks_the_tree_only_when_the_last_check_is_older_than_max_age(
    root: Path,
) -> None:
    _tree(root, {"a.txt": "alpha\n"})
    fresh = SearchToolkit(SearchPolicy(root=root, index_max_age=0))
    cached = SearchToolkit(SearchPolicy(root=root, index_max_age=3600))
    assert fresh.search_code("alpha").startswith("a.txt")
    assert cached.search_code("alpha").startswith("a.txt")
    _tree(root, {"b.txt": "beta\n"})
    assert fresh.search_code("beta").startswith("b.txt")
    assert cached.search_code("beta") == "no file matches 'beta'"  # checked under an hour ago
    cached.index.refresh()
    assert cached.search_code("beta").startswith("b.txt")


def test_the_agents_own_writes_show_on_the_next_search_and_other_changes_wait(
    root: Path,
) -> None:
    _tree(root, {"a.txt": "alpha\n", "gone.txt": "omega\n"})
    changes = WorkspaceChanges()
    search = SearchToolkit(SearchPolicy(root=root, index_max_age=3600), changes=changes)
    files = FilesToolkit(FilesPolicy(root=root), changes=changes)
    shell = ShellToolkit(ShellPolicy(root=root, timeout=30), changes=changes)
    assert search.search_code("alpha").startswith("a.txt")
    _tree(root, {"outside.txt": "beta\n"})  # a change behind the agent's back
    files.write("src/new.py", "def zebra(): pass\n")
    assert search.search_code("zebra").startswith("src/new.py")
    stamp = (root / "a.txt").stat()
    files.edit("a.txt", "alpha", "gamma")  # same size; and the same time, as within one tick
    os.utime(root / "a.txt", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert search.search_code("gamma").startswith("a.txt")
    assert search.search_code("alpha") == "no file matches 'alpha'"
    assert "exit code 0" in shell.run("rm gone.txt && echo delta > d.txt")
    assert search.search_code("omega") == "no file matches 'omega'"
    assert search.search_code("delta").startswith("d.txt")
    assert "outside.txt" in search.search_code("beta")  # seen with the agent's changes...
    _tree(root, {"later.txt": "kappa\n"})
    assert search.search_code("kappa") == "no file matches 'kappa'"  # ...else after max_age
