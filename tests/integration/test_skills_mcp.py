"""load_skill with real MCP servers: stdio subprocesses started from skill.json.

Checks that a loaded skill's servers are connected and that neither a failed
load nor ``skill.close()`` leaves a process or thread behind.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import SkillError, load_skill
from agent_smith.mcp.events import LifecycleEvent, LifecycleKind, McpEvent

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "skills" / "time-keeper"
SDK_SERVER = ROOT / "tests" / "integration" / "servers" / "sdk_server.py"

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="child-process checks read /proc (Linux)"
)


def children() -> set[int]:
    """Pids of this process's children, zombies included (not yet reaped)."""
    me = os.getpid()
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # the process ended while we looked
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.add(int(entry.name))
    return found


@pytest.fixture
def no_child_left(no_thread_leak: None) -> Iterator[None]:
    before = children()
    yield
    left = children() - before
    assert not left, f"child processes left running: {sorted(left)}"


def write_skill(folder: Path, servers: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True)
    manifest = {"name": "srv", "system_prompt_file": "prompt.md", "mcp_servers": servers}
    (folder / "skill.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "prompt.md").write_text("Use the servers.", encoding="utf-8")
    return folder


GOOD = {"alias": "good", "command": ["${PYTHON}", str(SDK_SERVER)], "request_timeout": 20}


@pytest.mark.usefixtures("no_child_left")
def test_example_skill_json_connects_its_server_and_close_leaves_nothing() -> None:
    events: list[McpEvent] = []
    skill = load_skill(EXAMPLE, hook=events.append)
    try:
        assert skill.name == "time-keeper"
        assert skill.context_data["time_zone"] == "UTC"
        assert "call the `now` tool" in skill.system_prompt
        (client,) = skill.mcp_clients
        assert client.alias == "example"
        assert {t.name for t in client.tools} >= {"echo", "now"}
        assert client.call_tool("echo", {"text": "tick"}).content == "tick"
        assert children(), "the example server should be a child process while connected"
    finally:
        skill.close()
    assert any(isinstance(e, LifecycleEvent) and e.kind is LifecycleKind.CONNECTED for e in events)
    skill.close()  # a second close is harmless


@pytest.mark.usefixtures("no_child_left")
def test_skill_dir_placeholder_and_relative_cwd_are_anchored_at_the_skill_folder(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "skill"
    shutil.copytree(SDK_SERVER.parent, folder / "servers", ignore=shutil.ignore_patterns("__*"))
    server = {
        "alias": "local",
        "command": ["${PYTHON}", "${SKILL_DIR}/servers/sdk_server.py"],
        "cwd": "servers",
        "env": {"SKILL_HOME": "${SKILL_DIR}"},
    }
    manifest = {"name": "srv", "system_prompt_file": "prompt.md", "mcp_servers": [server]}
    folder.mkdir(exist_ok=True)
    (folder / "skill.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "prompt.md").write_text("p", encoding="utf-8")
    with load_skill(folder) as skill:
        (client,) = skill.mcp_clients
        assert client.config.command == (sys.executable, f"{folder}/servers/sdk_server.py")
        assert client.config.cwd == str(folder / "servers")
        assert client.config.env == {"SKILL_HOME": str(folder)}
        assert client.call_tool("add", {"a": 2, "b": 3}).content == "5"


FAILING = [
    ("exits at once", [sys.executable, "-c", "raise SystemExit(3)"]),
    ("never answers", [sys.executable, "-c", "import time; time.sleep(600)"]),
    ("answers garbage", [sys.executable, "-c", "print('hello'); import time; time.sleep(600)"]),
    ("missing program", ["/nonexistent/agent-smith-mcp-server"]),
]


@pytest.mark.usefixtures("no_child_left")
@pytest.mark.parametrize("command", [c for _, c in FAILING], ids=[n for n, _ in FAILING])
def test_server_that_fails_to_start_is_a_skill_error_and_leaves_no_process(
    tmp_path: Path, command: list[str]
) -> None:
    folder = write_skill(
        tmp_path / "s", [{"alias": "broken", "command": command, "request_timeout": 2}]
    )
    with pytest.raises(SkillError) as info:
        load_skill(folder)
    message = str(info.value)
    assert message.startswith(f"{folder.resolve() / 'skill.json'}: MCP server 'broken' failed")
    assert info.value.skill_name == "srv"
    assert info.value.__cause__ is not None


@pytest.mark.usefixtures("no_child_left")
def test_failing_second_server_closes_the_first_one_already_connected(tmp_path: Path) -> None:
    events: list[McpEvent] = []
    broken = {"alias": "broken", "command": [sys.executable, "-c", "raise SystemExit(1)"]}
    folder = write_skill(tmp_path / "s", [GOOD, broken])
    with pytest.raises(SkillError, match="MCP server 'broken' failed to start"):
        load_skill(folder, hook=events.append)
    kinds = [(e.server, e.kind) for e in events if isinstance(e, LifecycleEvent)]
    assert ("good", LifecycleKind.CONNECTED) in kinds
