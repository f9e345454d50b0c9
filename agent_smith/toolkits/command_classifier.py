"""Sorting shell commands: read only, writes inside the workspace, or needs approval.

amber's ``shell_classify``: a command that only reads, or that writes only
inside the workspace with a known, benign program, runs free; anything
destructive, anything that touches a path outside the workspace, and
anything this module cannot read with confidence needs a person's approval.
Unknown means "ask": the classifier errs towards approval, never towards
running.

The command is split like a POSIX shell would (``shlex``) into simple
commands at ``;``, ``&&``, ``||``, ``|``, ``&`` and newlines, each judged on
its own; the command's kind is the worst of them. Refused outright into
"needs approval": text that does not parse, command substitution
(`` `...` ``, ``$(...)``, ``<(...)``), variable expansion (``$HOME``: where
it leads is unknown), ``~``, and programs not on the lists below. Every
argument that is not an option (and an option's ``=value``) and every
redirection target is taken as a path, resolved against the working
directory (links followed, as the shell would), and must stay inside the
root; ``/dev/null`` is allowed. (A pattern that looks like an outside path,
``grep /etc/x``, asks too: a false alarm costs a question, not a breach.)

This is a guard for a cooperative model, not a sandbox: a program on the
read-only list can still be told to do surprising things (``find -exec`` and
``sed -i`` are caught; not every option of every program is). What must not
happen without a person belongs behind approval, and the shell tool's other
limits (timeout, process group, confined working directory) hold either way.
"""

from __future__ import annotations

import enum
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

#: Programs that only read (their output goes to stdout).
READ_ONLY_PROGRAMS = frozenset(
    """cat head tail wc ls pwd echo printf grep egrep fgrep rg tree stat file du df which
    whoami date uname id sort uniq cut tr diff cmp comm basename dirname realpath readlink
    nl column seq true false test [ md5sum sha1sum sha256sum od strings jq sed find
    printenv env type""".split()  # noqa: SIM905 (a word list reads better)
)
#: Programs that write, and are benign when every path they get is inside the workspace.
WRITING_PROGRAMS = frozenset("mkdir touch cp mv tee ln patch".split())  # noqa: SIM905
#: git subcommands by kind (the others need approval: push, fetch, reset, clean, ...).
GIT_READ_ONLY = frozenset(
    "status log diff show rev-parse ls-files blame grep describe shortlog".split()  # noqa: SIM905
)
GIT_WRITING = frozenset(
    "add commit checkout switch restore stash mv init branch tag".split()  # noqa: SIM905
)

_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", "\n"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_READ_REDIRECTS = frozenset({"<"})
_SUBSTITUTION = re.compile(r"`|\$\(|<\(|>\(")
_EXPANSION = re.compile(r"\$[A-Za-z_{0-9@*#?!$-]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
# Options that make otherwise read-only programs write or run other programs.
_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fls"})


class CommandKind(enum.Enum):
    """What running a command may do; ordered from harmless to needs-a-person."""

    READ_ONLY = 0
    WORKSPACE_WRITE = 1
    NEEDS_APPROVAL = 2


@dataclass(frozen=True)
class Classification:
    """A command's kind and the reason for it (shown to whoever approves)."""

    kind: CommandKind
    reason: str

    @property
    def needs_approval(self) -> bool:
        return self.kind is CommandKind.NEEDS_APPROVAL


def classify(command: str, *, root: str, cwd: str | None = None) -> Classification:
    """Classify ``command`` run in ``cwd`` (default: ``root``), both canonical paths."""
    if _SUBSTITUTION.search(command):
        return _ask("it uses command substitution")
    if _EXPANSION.search(command):
        return _ask("it expands a variable, so where it leads is unknown")
    try:
        words = _split(command)
    except ValueError as err:
        return _ask(f"it cannot be parsed ({err})")
    worst = Classification(CommandKind.READ_ONLY, "it only reads")
    here = cwd or root
    for simple in _simple_commands(words):
        verdict, here = _judge(simple, root=root, cwd=here)
        if verdict.kind.value > worst.kind.value:
            worst = verdict
        if worst.needs_approval:
            break
    return worst


def _ask(reason: str) -> Classification:
    return Classification(CommandKind.NEEDS_APPROVAL, reason)


def _split(command: str) -> list[str]:
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def _simple_commands(words: list[str]) -> Iterator[list[str]]:
    current: list[str] = []
    for word in words:
        if word in _SEPARATORS:
            if current:
                yield current
            current = []
        else:
            current.append(word)
    if current:
        yield current


def _judge(words: list[str], *, root: str, cwd: str) -> tuple[Classification, str]:
    """One simple command's classification, and the working directory after it."""
    args: list[str] = []
    writes_to: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _WRITE_REDIRECTS or word in _READ_REDIRECTS or word in (">&", "<&"):
            target = words[i + 1] if i + 1 < len(words) else ""
            if word in _WRITE_REDIRECTS:
                writes_to.append(target)
            elif word in _READ_REDIRECTS:
                args.append(target)
            i += 2
            continue
        args.append(word)
        i += 1
    while args and _ASSIGNMENT.match(args[0]):
        args.pop(0)
    writes_to = [target for target in writes_to if target not in _DEVICES]
    for target in writes_to:
        if not _inside(target, root=root, cwd=cwd):
            return _ask(f"it writes to {target!r}, outside the workspace"), cwd
    if not args:
        kind = CommandKind.WORKSPACE_WRITE if writes_to else CommandKind.READ_ONLY
        return Classification(kind, "a redirection"), cwd
    for word in args[1:]:
        if word.startswith("-"):
            if "=" not in word:
                continue
            word = word.split("=", 1)[1]
        if word.startswith("~"):
            return _ask(f"{word!r} is in a home folder, outside the workspace"), cwd
        if word and word not in _DEVICES and not _inside(word, root=root, cwd=cwd):
            return _ask(f"{word!r} is outside the workspace"), cwd
    program, rest = args[0], args[1:]
    if program == "cd":
        target = rest[0] if rest else root
        if not _inside(target, root=root, cwd=cwd):
            return _ask(f"it changes to {target!r}, outside the workspace"), cwd
        return Classification(CommandKind.READ_ONLY, "cd"), _resolve(target, cwd)
    verdict = _program(program, rest)
    if writes_to and verdict.kind is CommandKind.READ_ONLY:
        verdict = Classification(CommandKind.WORKSPACE_WRITE, "it writes inside the workspace")
    return verdict, cwd


def _program(program: str, rest: list[str]) -> Classification:
    if "/" in program:
        return _ask(f"it runs {program!r} by its path")
    if program not in READ_ONLY_PROGRAMS | WRITING_PROGRAMS | {"git"}:
        return _ask(f"{program!r} is not a program known to be safe")
    if program == "git":
        sub = next((w for w in rest if not w.startswith("-")), "")
        if sub in GIT_READ_ONLY:
            return Classification(CommandKind.READ_ONLY, f"git {sub} only reads")
        if sub in GIT_WRITING:
            return Classification(CommandKind.WORKSPACE_WRITE, f"git {sub} writes the workspace")
        return _ask(f"git {sub or '(no subcommand)'} may change more than the workspace")
    if program == "find" and _FIND_ACTIONS.intersection(rest):
        return _ask("find with -exec or -delete runs or deletes")
    if program == "sed" and any(w.startswith(("-i", "--in-place")) for w in rest):
        return Classification(CommandKind.WORKSPACE_WRITE, "sed -i edits files in place")
    if program == "sort" and any(w.startswith(("-o", "--output")) for w in rest):
        return Classification(CommandKind.WORKSPACE_WRITE, "sort -o writes a file")
    if program == "env" and any(not _ASSIGNMENT.match(w) and not w.startswith("-") for w in rest):
        return _ask("env runs another program")
    if program in WRITING_PROGRAMS:
        return Classification(CommandKind.WORKSPACE_WRITE, f"{program} writes the workspace")
    return Classification(CommandKind.READ_ONLY, f"{program} only reads")


def _resolve(path: str, cwd: str) -> str:
    return os.path.realpath(os.path.join(cwd, path))


def _inside(path: str, *, root: str, cwd: str) -> bool:
    real = _resolve(path, cwd)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)
