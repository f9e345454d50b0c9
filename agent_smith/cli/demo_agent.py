"""The demo's agent as ``agent-smith`` builds it, for the REPL, ``agent-smith web`` and probes.

One place says which tools, system prompt and configuration the demo's
agent has, so the REPL, the web UI and ``scripts/probe_first_answers.py``
measure and run the same agent. A small model (every model ``--local``
names is one: :attr:`~agent_smith.cli.models.LocalModel.small`) gets
``AgentConfig(small_model=True)`` and only the tools it uses well
(:data:`~agent_smith.cli.demo_tools.SMALL_MODEL_TOOLS`, plus MCP servers and
skills); ``--all-tools`` offers it every toolkit, as a bigger model (an
``--endpoint`` or ``--serve-model``) always gets. Each ``--a2a URL`` adds the
remote A2A agent there as one more tool (:class:`~agent_smith.a2a.A2AAgent`),
so this agent can be tried against another framework's.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from ..a2a.remote import A2AAgent
from ..agent.agent import Agent
from ..agent.approvals import Approver
from ..agent.config import AgentConfig
from ..errors import AgentSmithError
from ..llm.model import ChatModel
from ..mcp.config import ServerConfig
from ..runtime import Runtime
from ..sessions.session import Session
from ..tools.base import Tool
from .demo_tools import demo_tools
from .models import LOCAL_MODELS
from .repl import Fatal

#: What the demo's agent is told, by what it has: arithmetic, files (reading; writing).
_PROMPT_START = "You are a helpful assistant running in {where}. "
_CALCULATOR = "For any arithmetic, call the calculator tool. "
_READ = (
    "You cannot see the user's files: whenever a question mentions a file, call read_file "
    "with its path first. "
)
_WRITE = "Use write_file only when asked to write a file. "
_END = "Once a tool has answered, reply to the user in one or two plain sentences."
#: Where the bundled example MCP server lives in a source checkout.
EXAMPLE_MCP_SERVER = Path(__file__).resolve().parents[2] / "examples" / "mcp_server_example.py"


def add_tool_options(parser: argparse.ArgumentParser) -> None:
    """``--all-tools``: every toolkit for a small model too."""
    parser.add_argument(
        "--all-tools",
        action="store_true",
        help="offer a small local model every toolkit (files, search, shell), not only the "
        "calculator, read_file and list_files",
    )
    parser.add_argument(
        "--a2a",
        action="append",
        default=[],
        metavar="URL",
        help="give the agent the remote A2A agent at URL as a tool (its card at "
        "URL/.well-known/agent-card.json; repeatable)",
    )


def remote_agents(urls: Sequence[str], *, runtime: Runtime) -> list[Tool]:
    """The ``--a2a`` agents as tools, each card fetched and checked now (else a :class:`Fatal`)."""
    remotes: list[Tool] = []
    for url in urls:
        try:
            remote = A2AAgent(url, runtime=runtime)
            remote.schema  # noqa: B018  (fetches and checks the card)
        except AgentSmithError as err:
            raise Fatal(f"--a2a {url}: {err}") from err
        remotes.append(remote)
    return remotes


def is_small(args: argparse.Namespace) -> bool:
    """Is the model the options name a small one (``--local``'s models are)?"""
    local: str | None = getattr(args, "local", None)
    return local is not None and LOCAL_MODELS[local].small


def system_prompt(tool_names: Sequence[str], *, where: str = "a terminal") -> str:
    """The demo's system prompt, naming only the tools it has."""
    prompt = _PROMPT_START.format(where=where)
    if "calculator" in tool_names:
        prompt += _CALCULATOR
    if "read_file" in tool_names:
        prompt += _READ
    if "write_file" in tool_names:
        prompt += _WRITE
    return prompt + _END


def demo_agent(
    llm: ChatModel,
    *,
    sandbox: str | os.PathLike[str],
    small: bool,
    all_tools: bool = False,
    runtime: Runtime,
    approver: Approver | None = None,
    stream: bool = True,
    mode: Literal["read", "write", "yolo"] = "write",
    session: Session | None = None,
    where: str = "a terminal",
    remote: Sequence[Tool] = (),
) -> Agent:
    """The demo's agent on ``llm`` (see the module doc); the caller closes it.

    ``remote``: more tools, the ``--a2a`` agents (:func:`remote_agents`).
    """
    tools = [*demo_tools(sandbox, few=small and not all_tools), *remote]
    config = AgentConfig(stream=stream, mode=mode, small_model=small)
    return Agent(
        llm,
        system_prompt([t.name for t in tools], where=where),
        tools,
        config=config,
        runtime=runtime,
        approver=approver,
        session=session,
    )


def agent_from_options(
    args: argparse.Namespace,
    llm: ChatModel,
    *,
    runtime: Runtime,
    approver: Approver | None = None,
    session: Session | None = None,
    where: str = "a terminal",
    remote: Sequence[Tool] = (),
) -> Agent:
    """:func:`demo_agent` as the command line's options say (``--local``, ``--all-tools``, ...)."""
    return demo_agent(
        llm,
        sandbox=args.sandbox,
        small=is_small(args),
        all_tools=args.all_tools,
        runtime=runtime,
        approver=approver,
        stream=not getattr(args, "no_stream", False),
        mode=getattr(args, "mode", "write"),
        session=session,
        where=where,
        remote=remote,
    )


def demo_server(*, few: bool = False) -> ServerConfig | None:
    """The bundled example MCP server (``echo``, ``now``) as alias ``demo``, if installed.

    ``few`` (a small model without ``--all-tools``): its ``now`` only. Measured
    on the 0.5B: offered ``echo``, it "called" it to write a haiku, its
    answer as the argument.
    """
    if not EXAMPLE_MCP_SERVER.is_file():
        return None
    command = (sys.executable, str(EXAMPLE_MCP_SERVER))
    return ServerConfig(alias="demo", command=command, allow_tools=("now",) if few else ())


def few_tools(args: argparse.Namespace) -> bool:
    """Whether the options ask for a small model's few tools (``--local``, no ``--all-tools``)."""
    return is_small(args) and not getattr(args, "all_tools", False)
