"""Sorting shell commands into read only, workspace writes and needs-approval."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_smith.toolkits import CommandKind, classify

READ = CommandKind.READ_ONLY
WRITE = CommandKind.WORKSPACE_WRITE
ASK = CommandKind.NEEDS_APPROVAL


@pytest.fixture
def real_root(root: Path, outside: Path) -> str:
    (root / "sub").mkdir()
    (root / "door").symlink_to(outside)
    return os.path.realpath(root)


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("ls -la", READ),
        ("cat notes.txt | grep -n todo | head -5", READ),
        ("git status && git diff HEAD~1", READ),
        ("grep 'end$' notes.txt", READ),
        ("FOO=1 wc -l notes.txt", READ),
        ("ls > /dev/null 2>&1", READ),
        ("find . -name '*.py'", READ),
        ("cd sub && ls", READ),
        ("echo hi > notes.txt", WRITE),
        ("mkdir -p build/out && touch build/out/x", WRITE),
        ("sed -i s/a/b/ notes.txt", WRITE),
        ("cp notes.txt sub/copy.txt", WRITE),
        ("git add notes.txt && git commit -m wip", WRITE),
    ],
)
def test_safe_commands_run_free(real_root: str, command: str, kind: CommandKind) -> None:
    assert classify(command, root=real_root).kind is kind


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("rm -rf build", "'rm' is not a program known to be safe"),
        ("python3 setup.py install", "'python3' is not a program known to be safe"),
        ("curl http://example.com", "'curl' is not a program known to be safe"),
        ("cat /etc/passwd", "outside the workspace"),
        ("cat door/secret.txt", "outside the workspace"),  # a link out
        ("ls ..", "outside the workspace"),
        ("cat ~/.ssh/id_rsa", "home folder"),
        ("echo x >> /tmp/x", "writes to '/tmp/x'"),
        ("cat < /etc/shadow", "outside the workspace"),
        ("cp notes.txt /tmp/", "outside the workspace"),
        ("ln -s /etc/passwd p", "outside the workspace"),
        ("ls --color=auto --dir=/etc", "outside the workspace"),
        ("cd / && ls", "outside the workspace"),
        ("echo $(cat /etc/passwd)", "command substitution"),
        ("echo `id`", "command substitution"),
        ("diff <(ls) x", "command substitution"),
        ("cat $HOME/.netrc", "expands a variable"),
        ('echo "unclosed', "cannot be parsed"),
        ("find . -delete", "find with -exec or -delete"),
        ("find . -exec rm {} ;", "find with -exec or -delete"),
        ("git push origin main", "git push"),
        ("git reset --hard", "git reset"),
        ("env rm -rf x", "env runs another program"),
        ("./script.sh", "by its path"),
        ("/bin/rm x", "by its path"),
        ("ls; rm notes.txt", "'rm'"),
        ("ls\nrm notes.txt", "'rm'"),
        ("ls & rm notes.txt", "'rm'"),
        ("sudo ls", "'sudo'"),
    ],
)
def test_destructive_outside_or_unclear_commands_need_approval(
    real_root: str, command: str, why: str
) -> None:
    verdict = classify(command, root=real_root)
    assert verdict.kind is ASK and verdict.needs_approval
    assert why in verdict.reason


def test_the_working_directory_counts(real_root: str) -> None:
    sub = os.path.join(real_root, "sub")
    assert classify("cat ../notes.txt", root=real_root, cwd=sub).kind is READ
    assert classify("cat ../../x", root=real_root, cwd=sub).kind is ASK
