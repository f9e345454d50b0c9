"""The shell toolkit: run a command in the workspace, bounded, and ask first when it matters.

``run_command`` runs ``/bin/sh -c <command>`` through
:func:`~agent_smith.toolkits.process_group.run_in_group`: its own process
group, stdin from ``/dev/null``, a working directory inside the root, only
the environment the policy gives, a timeout that kills the whole group
(grandchildren too) and an output cap.

Whether a call needs approval is decided per call from its classified
command (:mod:`~agent_smith.toolkits.command_classifier`): read-only
commands and benign writes inside the workspace run free; destructive ones,
ones that reach outside the workspace and ones the classifier cannot read go
through the agent's one approval flow (approver, ``ApprovalRequested`` event
or a paused turn) and never run unapproved. The tool carries that decision
as its ``requires_approval`` predicate, which the agent asks before the
round's calls run. ``approve_writes`` makes in-workspace writes ask too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, ToolError
from ..tools.base import Tool, ToolContext
from ._tool import toolkit_tool
from .command_classifier import Classification, CommandKind, classify
from .process_group import run_in_group
from .workspace import Workspace, WorkspaceChanges

#: The environment a command gets when the policy names none.
DEFAULT_ENV: Mapping[str, str] = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
_MAX_COMMAND_CHARS = 10_000


@dataclass(frozen=True)
class ShellPolicy:
    """Where and how long commands run, what they see, and what asks first.

    ``timeout`` (seconds) is the longest a command may run (a call may ask
    for less); ``kill_grace`` how long the group has between SIGTERM and
    SIGKILL; ``max_output_bytes`` the output kept (head and tail). ``env`` is
    the whole environment of the command (nothing is inherited: pass what
    it needs, ``PATH`` included). ``approve_writes``: writes inside the
    workspace ask too.
    """

    root: str | os.PathLike[str]
    timeout: float = 60.0
    kill_grace: float = 2.0
    max_output_bytes: int = 32 * 1024
    env: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_ENV))
    shell: str = "/bin/sh"
    approve_writes: bool = False

    def __post_init__(self) -> None:
        if not self.timeout > 0 or self.kill_grace < 0 or self.max_output_bytes <= 0:
            raise ConfigError("ShellPolicy: timeout and max_output_bytes must be positive")


class ShellToolkit:
    """``run_command``: a shell command in the workspace, per :class:`ShellPolicy`.

    ``changes``: told after each command that ran, since it may have written
    or deleted anything (the search toolkit of the same agent listens).
    """

    def __init__(self, policy: ShellPolicy, *, changes: WorkspaceChanges | None = None) -> None:
        self.policy = policy
        self.workspace = Workspace(policy.root, changes=changes)

    def tools(self) -> list[Tool]:
        """The toolkit's one tool, asking for approval per call as its command needs."""
        return [
            toolkit_tool(
                self.run,
                name="run_command",
                read_only=False,
                requires_approval=self.needs_approval,
            )
        ]

    def classify(self, command: str, cwd: str = ".") -> Classification:
        """What ``command`` run in ``cwd`` may do (see the classifier)."""
        try:
            here = self.workspace.resolve(cwd, tool="run_command")
        except ToolError as err:
            return Classification(CommandKind.NEEDS_APPROVAL, str(err))
        return classify(command, root=self.workspace.root, cwd=here)

    def needs_approval(self, arguments: Mapping[str, Any]) -> bool:
        """The approval predicate: does this call (its arguments) need a person's yes?"""
        command, cwd = arguments.get("command"), arguments.get("cwd", ".")
        if not isinstance(command, str) or not isinstance(cwd, str):
            return True
        verdict = self.classify(command, cwd)
        if verdict.kind is CommandKind.WORKSPACE_WRITE:
            return self.policy.approve_writes
        return verdict.needs_approval

    def run(
        self,
        command: str,
        cwd: str = ".",
        timeout: float | None = None,
        ctx: ToolContext | None = None,
    ) -> str:
        """Run a shell command in the workspace and return its output and exit code.

        Args:
            command: The command line, run by /bin/sh.
            cwd: The folder to run it in, relative to the workspace.
            timeout: Seconds to allow, at most the configured limit.
        """
        tool = "run_command"
        if not command.strip() or len(command) > _MAX_COMMAND_CHARS or "\0" in command:
            raise ToolError(
                f"the command must be 1-{_MAX_COMMAND_CHARS} characters", tool_name=tool
            )
        here = self.workspace.resolve(cwd, tool=tool)
        if not os.path.isdir(here):
            raise ToolError(f"{cwd!r} is not a folder", tool_name=tool)
        limit = self.policy.timeout if timeout is None else min(timeout, self.policy.timeout)
        if not limit > 0:
            raise ToolError("timeout must be positive", tool_name=tool)
        try:
            done = run_in_group(
                [self.policy.shell, "-c", command],
                cwd=here,
                env=self.policy.env,
                timeout=limit,
                max_output_bytes=self.policy.max_output_bytes,
                kill_grace=self.policy.kill_grace,
                cancel=ctx.cancel if ctx is not None else None,
            )
        except OSError as err:
            raise ToolError(f"cannot start the command: {err.strerror}", tool_name=tool) from err
        self.workspace.changes.changed(None)  # stopped or not, it may have changed files
        if done.cancelled:
            raise ToolError(f"cancelled; the command was stopped\n{done.output}", tool_name=tool)
        if done.timed_out:
            raise ToolError(
                f"timed out after {limit:g} s; the command and its children were killed\n"
                f"{done.output}",
                tool_name=tool,
            )
        return f"{done.output}\n[exit code {done.exit_code}]"
