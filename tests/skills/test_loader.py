"""load_skill: both folder formats and every way a manifest can be wrong.

Manifests here start no MCP server; the ones that do are in
tests/integration/test_skills_mcp.py.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_smith import SkillError
from agent_smith.skills import load_skill

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


def write_skill(
    folder: Path,
    manifest: dict[str, Any] | str | None = None,
    *,
    prompt: str | bytes = "Be brief.\n",
    context: str | None = None,
) -> Path:
    """A skill.json folder: ``manifest`` (dict or raw text) plus prompt/context files."""
    folder.mkdir(parents=True, exist_ok=True)
    if manifest is None:
        manifest = {"name": "demo", "system_prompt_file": "prompt.md"}
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (folder / "skill.json").write_text(text, encoding="utf-8")
    if isinstance(prompt, bytes):
        (folder / "prompt.md").write_bytes(prompt)
    else:
        (folder / "prompt.md").write_text(prompt, encoding="utf-8")
    if context is not None:
        (folder / "context.json").write_text(context, encoding="utf-8")
    return folder


def load_error(folder: Path) -> SkillError:
    with pytest.raises(SkillError) as info:
        load_skill(folder)
    return info.value


# -- formats that load -----------------------------------------------------------


def test_skill_md_example_loads_with_its_body_as_the_prompt() -> None:
    skill = load_skill(EXAMPLES / "release-notes")
    assert skill.name == "release-notes"
    assert skill.normalized_name == "release_notes"
    assert skill.description.startswith("Turns a list of changes")
    assert skill.system_prompt.startswith("# Writing release notes\n")
    assert skill.system_prompt.endswith("under a minute.")
    assert (skill.tools, skill.mcp_clients, skill.context_data) == ((), (), None)


def test_skill_json_loads_prompt_context_and_description(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path / "s",
        {
            "name": "Web Search",
            "description": "Searches.",
            "system_prompt_file": "prompt.md",
            "context_file": "data/context.json",
        },
    )
    (folder / "data").mkdir()
    (folder / "data" / "context.json").write_text('{"k": [1, "é"]}', encoding="utf-8")
    skill = load_skill(str(folder))
    assert (skill.name, skill.description) == ("Web Search", "Searches.")
    assert skill.system_prompt == "Be brief.\n"
    assert skill.context_data == {"k": [1, "é"]}
    assert skill.mcp_clients == ()
    skill.close()


def test_null_optional_fields_count_as_absent(tmp_path: Path) -> None:
    manifest = {
        "name": "n",
        "system_prompt_file": "prompt.md",
        "context_file": None,
        "description": None,
        "mcp_servers": None,
    }
    skill = load_skill(write_skill(tmp_path / "s", manifest))
    assert (skill.context_data, skill.description, skill.mcp_clients) == (None, "", ())


def test_skill_json_wins_over_skill_md(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "s")
    (folder / "SKILL.md").write_text("---\nname: other\ndescription: d\n---\nx", encoding="utf-8")
    assert load_skill(folder).name == "demo"


def test_unknown_manifest_keys_are_logged_and_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manifest = {"name": "n", "system_prompt_file": "prompt.md", "tools": []}
    with caplog.at_level(logging.WARNING, logger="agent_smith.skill"):
        load_skill(write_skill(tmp_path / "s", manifest))
    assert "ignoring unknown keys tools" in caplog.text


def test_prompt_path_may_use_subfolders_and_a_symlink_that_stays_inside(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "s", {"name": "n", "system_prompt_file": "link.md"})
    (folder / "prompts").mkdir()
    (folder / "prompts" / "real.md").write_text("inside", encoding="utf-8")
    (folder / "link.md").symlink_to(folder / "prompts" / "real.md")
    assert load_skill(folder).system_prompt == "inside"


# -- skill.json problems -----------------------------------------------------------

BAD_MANIFESTS: list[tuple[str, Any, str]] = [
    ("missing name", {"system_prompt_file": "prompt.md"}, "missing required field 'name'"),
    ("empty name", {"name": " ", "system_prompt_file": "prompt.md"}, "'name' must not be empty"),
    ("name type", {"name": 7, "system_prompt_file": "prompt.md"}, "'name' must be a string"),
    (
        "name rule",
        {"name": "c++", "system_prompt_file": "prompt.md"},
        "skill name 'c++' cannot be normalised",
    ),
    ("missing prompt", {"name": "n"}, "missing required field 'system_prompt_file'"),
    (
        "prompt type",
        {"name": "n", "system_prompt_file": ["prompt.md"]},
        "'system_prompt_file' must be a string, got a list",
    ),
    (
        "description type",
        {"name": "n", "system_prompt_file": "prompt.md", "description": True},
        "'description' must be a string, got a boolean",
    ),
    (
        "context type",
        {"name": "n", "system_prompt_file": "prompt.md", "context_file": 3},
        "'context_file' must be a string, got a number",
    ),
    (
        "servers type",
        {"name": "n", "system_prompt_file": "prompt.md", "mcp_servers": {"a": 1}},
        "'mcp_servers' must be a list, got an object",
    ),
    (
        "server type",
        {"name": "n", "system_prompt_file": "prompt.md", "mcp_servers": ["python"]},
        "mcp_servers[0] must be an object, got a string",
    ),
    (
        "server alias",
        {"name": "n", "system_prompt_file": "prompt.md", "mcp_servers": [{"command": ["x"]}]},
        "mcp_servers[0]: MCP server config: missing key 'alias'",
    ),
    (
        "server transport",
        {"name": "n", "system_prompt_file": "prompt.md", "mcp_servers": [{"alias": "a"}]},
        "mcp_servers[0]: MCP server 'a': give exactly one of 'command'",
    ),
    (
        "server key",
        {
            "name": "n",
            "system_prompt_file": "prompt.md",
            "mcp_servers": [{"alias": "a", "argv": ["x"]}],
        },
        "mcp_servers[0]: MCP server config 'a': unknown key 'argv'",
    ),
    (
        "server aliases",
        {
            "name": "n",
            "system_prompt_file": "prompt.md",
            "mcp_servers": [{"alias": "a", "command": ["x"]}, {"alias": "a", "command": ["y"]}],
        },
        "mcp_servers[1]: duplicate MCP server alias 'a'",
    ),
    ("not an object", ["name", "n"], "the manifest must be a JSON object"),
    (
        "prompt dotdot",
        {"name": "n", "system_prompt_file": "../outside.md"},
        "system_prompt_file '../outside.md' must not leave the skill folder",
    ),
    (
        "prompt dotdot inside",
        {"name": "n", "system_prompt_file": "sub/../../outside.md"},
        "must not leave the skill folder",
    ),
    (
        "prompt absolute",
        {"name": "n", "system_prompt_file": "/etc/hostname"},
        "system_prompt_file '/etc/hostname' must be a path relative to the skill folder",
    ),
    (
        "context absolute",
        {"name": "n", "system_prompt_file": "prompt.md", "context_file": "C:\\data.json"},
        "context_file 'C:\\\\data.json' must be a path relative to the skill folder",
    ),
    (
        "context missing",
        {"name": "n", "system_prompt_file": "prompt.md", "context_file": "nope.json"},
        "context_file: cannot read ",
    ),
    (
        "prompt missing",
        {"name": "n", "system_prompt_file": "nope.md"},
        "system_prompt_file: cannot read ",
    ),
]


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [(m, p) for _, m, p in BAD_MANIFESTS],
    ids=[case for case, _, _ in BAD_MANIFESTS],
)
def test_bad_manifest_is_a_skill_error_naming_the_file_and_problem(
    tmp_path: Path, manifest: Any, problem: str
) -> None:
    folder = write_skill(tmp_path / "bad", manifest)
    error = load_error(folder)
    assert str(error).startswith(f"{folder.resolve() / 'skill.json'}: ")
    assert problem in str(error)
    assert "\n" not in str(error)


def test_skill_error_carries_the_manifest_name_once_known(tmp_path: Path) -> None:
    assert load_error(write_skill(tmp_path / "folder", {"system_prompt_file": "p"})).skill_name == (
        "folder"
    )
    error = load_error(write_skill(tmp_path / "f2", {"name": "known", "system_prompt_file": "x"}))
    assert error.skill_name == "known"


def test_invalid_manifest_json_reports_line_and_column(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "s", '{\n  "name": "n",\n  "system_prompt_file": \n}')
    error = load_error(folder)
    assert str(error).startswith(f"{folder.resolve() / 'skill.json'}: invalid JSON at line 4 ")
    assert "column 1" in str(error)


def test_invalid_context_json_names_the_context_file_with_line_and_column(tmp_path: Path) -> None:
    manifest = {"name": "n", "system_prompt_file": "prompt.md", "context_file": "context.json"}
    folder = write_skill(tmp_path / "s", manifest, context='{"a": 1,\n "b": }')
    message = str(load_error(folder))
    assert message.startswith(f"{folder.resolve() / 'skill.json'}: context_file: invalid JSON in ")
    assert str(folder.resolve() / "context.json") in message
    assert "at line 2 column 7" in message


def test_prompt_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "s", prompt=b"caf\xe9")
    message = str(load_error(folder))
    assert "system_prompt_file:" in message
    assert "is not UTF-8 text (bad byte at offset 3)" in message


def test_prompt_that_is_a_folder_is_unreadable(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "s", {"name": "n", "system_prompt_file": "dir"})
    (folder / "dir").mkdir()
    assert "system_prompt_file: cannot read " in str(load_error(folder))


def test_symlinked_prompt_pointing_outside_the_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read", encoding="utf-8")
    folder = write_skill(tmp_path / "s", {"name": "n", "system_prompt_file": "prompt-link.md"})
    (folder / "prompt-link.md").symlink_to(secret)
    message = str(load_error(folder))
    assert "system_prompt_file 'prompt-link.md' resolves outside the skill folder" in message
    assert "do not read" not in message


def test_symlinked_subfolder_pointing_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "context.json").write_text("{}", encoding="utf-8")
    manifest = {"name": "n", "system_prompt_file": "prompt.md", "context_file": "ln/context.json"}
    folder = write_skill(tmp_path / "s", manifest)
    (folder / "ln").symlink_to(outside, target_is_directory=True)
    assert "context_file 'ln/context.json' resolves outside" in str(load_error(folder))


def test_bad_manifest_with_servers_starts_none_of_them(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    server = {
        "alias": "spy",
        "command": [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"],
    }
    manifest = {"name": "n", "system_prompt_file": "../escape.md", "mcp_servers": [server]}
    load_error(write_skill(tmp_path / "s", manifest))
    assert not marker.exists()


def test_folder_with_neither_manifest_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    error = load_error(tmp_path / "empty")
    assert "no skill.json or SKILL.md" in str(error)
    assert error.skill_name == "empty"


def test_missing_folder_is_refused(tmp_path: Path) -> None:
    assert "skill folder does not exist" in str(load_error(tmp_path / "nope"))


def test_unreadable_manifest_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s" / "skill.json").mkdir(parents=True)
    message = str(load_error(tmp_path / "s"))
    assert message.startswith(f"{(tmp_path / 's' / 'skill.json').resolve()}: cannot read")


# -- SKILL.md problems -------------------------------------------------------------

BAD_SKILL_MDS = [
    ("missing name", "---\ndescription: d\n---\nbody", "front matter is missing 'name'"),
    ("missing description", "---\nname: n\n---\nbody", "front matter is missing 'description'"),
    ("empty description", "---\nname: n\ndescription:\n---\n", "'description' must be non-empty"),
    ("nested name", "---\nname:\n  a: b\ndescription: d\n---\n", "'name' must be non-empty"),
    ("bad name", "---\nname: 9lives\ndescription: d\n---\n", "skill name '9lives' cannot be"),
    ("no front matter", "# Just markdown\n", "front matter line 1: expected '---'"),
    ("unclosed", "---\nname: n\n", "front matter line 3: front matter is not closed"),
    ("bad line", "---\nname: n\noops\n---\n", "front matter line 3: expected 'key: value'"),
]


@pytest.mark.parametrize(
    ("text", "problem"),
    [(t, p) for _, t, p in BAD_SKILL_MDS],
    ids=[case for case, _, _ in BAD_SKILL_MDS],
)
def test_bad_skill_md_is_a_skill_error_naming_the_file_and_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    folder = tmp_path / "md"
    folder.mkdir()
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    message = str(load_error(folder))
    assert message.startswith(f"{folder.resolve() / 'SKILL.md'}: ")
    assert problem in message


def test_skill_md_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "md").mkdir()
    (tmp_path / "md" / "SKILL.md").write_bytes(b"---\nname: n\xff\n---\n")
    assert "is not UTF-8 text" in str(load_error(tmp_path / "md"))


def test_skill_md_folder_files_besides_skill_md_are_neither_loaded_nor_run(tmp_path: Path) -> None:
    # SKILL.md bodies often mention scripts/ and references/; none are loaded.
    folder = tmp_path / "md"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "run.py").write_text("raise SystemExit(1)", encoding="utf-8")
    (folder / "SKILL.md").write_text(
        "---\nname: n\ndescription: d\n---\nRun scripts/run.py.", encoding="utf-8"
    )
    skill = load_skill(folder)
    assert skill.system_prompt == "Run scripts/run.py."
    assert skill.tools == ()
