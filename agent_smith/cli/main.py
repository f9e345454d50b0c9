"""``agent-smith``: a demo REPL that chats with an agent over an OpenAI-compatible server.

This module reads the command line and wires the agent up: the endpoint (or a
local llama.cpp server for ``--serve-model``/``--local``), the demo tools
(``calculator``, and the files, search and shell toolkits on the sandbox;
writes and risky commands ask ``y/N`` first — see
:mod:`~agent_smith.cli.approval`), the bundled example MCP server
(``echo``, ``now``) unless ``--no-default-mcp``, any ``--mcp`` stdio servers
(a server's request to visit a page is asked on the terminal:
:mod:`~agent_smith.cli.url_elicitation`) and ``--skill`` folders; a line
naming a file in the sandbox asks for it to be read
(:mod:`~agent_smith.cli.file_mentions`). Every resource it starts is owned by
one ExitStack, so each is closed on the way out, also after a failed setup step. The loop
that chats is :class:`~agent_smith.cli.repl.Repl`. The subcommands have
modules of their own: ``agent-smith batch`` (:mod:`~agent_smith.cli.batch`),
``agent-smith serve`` (:mod:`~agent_smith.cli.serve`), ``agent-smith web``
(:mod:`~agent_smith.cli.web`), ``agent-smith durable``
(:mod:`~agent_smith.cli.durable`), ``agent-smith metrics-exporter``
(:mod:`~agent_smith.cli.metrics_exporter`) and ``agent-smith eval``
(:mod:`~agent_smith.cli.eval`).

Fatal problems (server unreachable, credentials refused, a server that will
not take tools, a bad ``--mcp``/``--skill``) print one ``agent-smith: error:``
line and exit with status 1; usage errors exit with 2. This is the only place
in the package that installs a logging handler (``-v``: INFO, ``-vv``: DEBUG,
``-vvv``: wire-level TRACE, all to stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import io
import logging
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from .._version import __version__
from ..agent.agent import Agent
from ..errors import (
    ConfigError,
    McpError,
    McpProtocolError,
    SkillError,
    TransportError,
)
from ..llm.providers import make_model
from ..llm.request import SamplingParams
from ..logs import TRACE
from ..mcp.config import ServerConfig
from ..metrics import MetricsCollector
from ..runtime import Runtime
from ..skills import Skill, load_skill
from ..toolkits.workspace import Workspace
from .approval import TerminalApprovals
from .demo_agent import (
    add_tool_options,
    agent_from_options,
    demo_server,
    few_tools,
    is_small,
    remote_agents,
)
from .demo_tools import SMALL_MODEL_TOOLS
from .endpoint_check import check_endpoint
from .file_mentions import mention_files
from .local import add_model_options, start_local_server
from .providers import add_provider_option, fill_provider_defaults
from .repl import EXIT_FATAL, EXIT_INTERRUPTED, Fatal, Quit, Repl
from .url_elicitation import TerminalElicitation

DEFAULT_ENDPOINT = "http://127.0.0.1:8080"
#: Sampling for --local/--serve-model, as measured (docs/llama.md): greedy,
#: and a reply cap so a small model that rambles stops instead of generating until the
#: context is full (--max-tokens overrides it).
LOCAL_SAMPLING = SamplingParams(temperature=0, max_tokens=256)
#: The reply cap with --endpoint, whose model is likely bigger and more to the point.
ENDPOINT_MAX_TOKENS = 1024
_ALIAS_CHARS = re.compile(r"[^A-Za-z0-9]+")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agent-smith`` (defaults read from the environment)."""
    parser = argparse.ArgumentParser(
        prog="agent-smith",
        description=(
            "Chat with an LLM agent that has a calculator, a sandboxed file reader and "
            "MCP tools. Needs an OpenAI-compatible server with tool calling, e.g. "
            "llama-server --jinja -m MODEL.gguf (or use --local)."
        ),
        epilog=(
            "'agent-smith batch -h': run an agent over a file of inputs; 'agent-smith serve "
            "-h': serve a local model on a port; 'agent-smith web -h': the agent in a "
            "browser; 'agent-smith durable -h': list and steer durable turns; "
            "'agent-smith metrics-exporter -h': serve /metrics of many processes; "
            "'agent-smith eval -h': measure an agent on a dataset. In the REPL: "
            "/help lists the commands; /exit or Ctrl-D quits; Ctrl-C "
            "cancels the reply being written, or discards the line at the prompt."
        ),
    )
    add_provider_option(parser)
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "-e",
        "--endpoint",
        help=(
            f"server base URL (default: $LLAMA_SERVER_URL, else {DEFAULT_ENDPOINT}; "
            "other providers: their usual variable, else their public API)"
        ),
    )
    add_model_options(where)
    parser.add_argument(
        "-k", "--api-key", help="bearer token for the server (default: $LLAMA_API_KEY)"
    )
    parser.add_argument("-m", "--model", default="", help="model name sent to the server")
    parser.add_argument(
        "--no-stream", action="store_true", help="print each reply whole instead of streaming"
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help=(
            f"cap each reply at N tokens (default: {LOCAL_SAMPLING.max_tokens} with --local or "
            f"--serve-model, else {ENDPOINT_MAX_TOKENS}; 0: no cap)"
        ),
    )
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar='"CMD ARGS"',
        help="add a stdio MCP server started with this command line (repeatable)",
    )
    parser.add_argument(
        "--no-default-mcp",
        action="store_true",
        help="do not start the bundled example MCP server (echo, now)",
    )
    parser.add_argument(
        "--skill",
        action="append",
        default=[],
        metavar="DIR",
        help="activate the skill in this folder (skill.json or SKILL.md; repeatable)",
    )
    parser.add_argument(
        "--sandbox",
        default=".",
        metavar="DIR",
        help="directory the file, search and shell tools work in (default: the current directory)",
    )
    parser.add_argument(
        "--mode",
        choices=("read", "write", "yolo"),
        default="write",
        help="read: only tools that only read may run; write (default): ask as tools are "
        "marked; yolo: approve every call",
    )
    parser.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="approve every tool call that needs approval (else: asked y/N, denied without a TTY)",
    )
    add_tool_options(parser)
    add_verbose_option(parser)
    parser.add_argument("-V", "--version", action="version", version=f"agent-smith {__version__}")
    return parser


def add_verbose_option(parser: argparse.ArgumentParser) -> None:
    """``-v``/``--verbose`` (counted), which the logging set-up reads."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log to stderr: -v INFO, -vv DEBUG, -vvv wire-level TRACE",
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line and fill the environment defaults."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.max_tokens is not None and args.max_tokens < 0:
        parser.error("--max-tokens must not be negative")
    fill_provider_defaults(parser, args)
    commands = []
    for line in args.mcp:
        try:
            argv_ = shlex.split(line)
        except ValueError as err:
            parser.error(f"--mcp {line!r}: {err}")
        if not argv_:
            parser.error("--mcp needs a command line")
        commands.append(tuple(argv_))
    args.mcp = commands
    return args


def mcp_alias(command: Sequence[str], taken: set[str]) -> str:
    """A short, unique alias for a stdio server, from its script or program name.

    ``python my_server.py`` -> ``my_server``; ``npx -y @scope/server-x`` -> ``server_x``.
    """
    operands = [part for part in command if not part.startswith("-")] or list(command)
    stem = Path(operands[-1].rstrip("/")).name.split(".")[0]
    base = _ALIAS_CHARS.sub("_", stem).strip("_").lower()[:24] or "mcp"
    alias, n = base, 2
    while alias in taken:
        alias, n = f"{base}{n}", n + 1
    taken.add(alias)
    return alias


def _configure_logging(verbosity: int) -> None:
    if verbosity <= 0:
        return
    level = {1: logging.INFO, 2: logging.DEBUG}.get(verbosity, TRACE)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("agent_smith")
    root.addHandler(handler)
    root.setLevel(level)


def _sampling(args: argparse.Namespace) -> SamplingParams:
    """The demo's sampling: greedy on a local model; every reply capped unless --max-tokens 0."""
    sampling = SamplingParams() if args.endpoint else LOCAL_SAMPLING
    cap = args.max_tokens
    if cap is None:
        cap = sampling.max_tokens if sampling.max_tokens is not None else ENDPOINT_MAX_TOKENS
    return dataclasses.replace(sampling, max_tokens=cap or None)


def _connect_mcp(
    agent: Agent, args: argparse.Namespace, elicitation: TerminalElicitation
) -> list[str]:
    """Start the default example server and every --mcp server; return their aliases."""
    aliases: list[str] = []
    taken: set[str] = set()
    if not args.no_default_mcp:
        config = demo_server(few=few_tools(args))
        if config is None:
            _note("the bundled MCP example server is not in this install; use --mcp to add one")
        elif importlib.util.find_spec("mcp") is None:
            _note("the bundled MCP example server needs the 'mcp' package (pip install mcp)")
        else:
            taken.add("demo")
            try:
                agent.connect_mcp(config, elicitation_handler=elicitation.handler("demo"))
                aliases.append("demo")
            except (TransportError, McpError, McpProtocolError) as err:
                _note(f"the bundled MCP example server did not start ({err}); going on without")
    for command in args.mcp:
        alias = mcp_alias(command, taken)
        try:
            config = ServerConfig(alias=alias, command=command)
            agent.connect_mcp(config, elicitation_handler=elicitation.handler(alias))
        except (TransportError, McpError, McpProtocolError, ConfigError) as err:
            raise Fatal(f"--mcp {shlex.join(command)!r}: {err}") from err
        aliases.append(alias)
    return aliases


def _load_skills(
    folders: Sequence[str], *, runtime: Runtime, stack: contextlib.ExitStack
) -> list[tuple[str, Skill]]:
    """Load every --skill folder, each owned by ``stack`` (which stops its MCP servers)."""
    skills = []
    for folder in folders:
        try:
            skill = stack.enter_context(load_skill(folder, runtime=runtime))
        except (SkillError, ConfigError, TransportError, McpError, McpProtocolError) as err:
            raise Fatal(f"--skill {folder}: {err}") from err
        skills.append((folder, skill))
    return skills


def _activate_skills(agent: Agent, skills: Sequence[tuple[str, Skill]]) -> None:
    for folder, skill in skills:
        try:
            agent.activate(skill)
        except SkillError as err:  # e.g. a context over skill_context_max_bytes
            raise Fatal(f"--skill {folder}: {err}") from err


def _banner(
    endpoint: str,
    sandbox: Path,
    aliases: Sequence[str],
    skills: Sequence[tuple[str, Skill]],
    remote: Sequence[str] = (),
    *,
    small: bool,
) -> str:
    """The REPL's first line: where the model is, the tools, MCP servers, skills, A2A agents."""
    if small:
        tools = f"{', '.join(SMALL_MODEL_TOOLS)} (a small model; --all-tools offers every toolkit)"
    else:
        tools = "calculator, files, search, shell (writes and risky commands ask first)"
    mcp = f"; MCP: {', '.join(aliases)}" if aliases else ""
    for _, skill in skills:
        servers = ", ".join(client.alias for client in skill.mcp_clients)
        mcp += f"; skill {skill.name}" + (f" (MCP: {servers})" if servers else "")
    if remote:
        mcp += f"; A2A: {', '.join(remote)}"
    return (
        f"agent-smith {__version__} at {endpoint}; tools: {tools}; sandbox {sandbox}{mcp}. "
        "/help lists the commands; /exit or Ctrl-D quits."
    )


def _note(text: str) -> None:
    sys.stderr.write(f"agent-smith: note: {text}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agent-smith`` and ``python -m agent_smith``; returns the exit status."""
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] == ["batch"]:  # subcommands: batch runs (cli/batch.py), ...
        from .batch import main as batch_main

        return batch_main(words[1:])
    if words[:1] == ["serve"]:  # ... serving a local model (cli/serve.py) ...
        from .serve import main as serve_main

        return serve_main(words[1:])
    if words[:1] == ["web"]:  # ... the agent in a browser (cli/web.py) ...
        from .web import main as web_main

        return web_main(words[1:])
    if words[:1] == ["durable"]:  # ... durable turns (cli/durable.py) ...
        from .durable import main as durable_main

        return durable_main(words[1:])
    if words[:1] == ["metrics-exporter"]:  # ... the metrics exporter ...
        from .metrics_exporter import main as exporter_main

        return exporter_main(words[1:])
    if words[:1] == ["eval"]:  # ... and evals (cli/eval.py)
        from .eval import main as eval_main

        return eval_main(words[1:])
    args = parse_args(words)
    _configure_logging(args.verbose)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # a model's odd character must not crash us
            stream.reconfigure(errors="replace")
    try:
        with contextlib.ExitStack() as stack:
            return _run(args, stack)
    except Fatal as err:
        sys.stderr.write(f"agent-smith: error: {err}\n")
        return EXIT_FATAL
    except (KeyboardInterrupt, Quit):
        sys.stderr.write("\n")
        return EXIT_INTERRUPTED


def _run(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    endpoint = args.endpoint or start_local_server(args, stack, note=_note).endpoint
    try:
        workspace = Workspace(args.sandbox)
        runtime = stack.enter_context(Runtime())
        llm = make_model(
            args.provider,
            endpoint,
            args.model,
            api_key=args.api_key,
            runtime=runtime,
            default_sampling=_sampling(args),
        )
    except (ConfigError, ValueError) as err:  # ValueError: an endpoint that is no URL
        raise Fatal(str(err)) from err
    # Loaded before the agent so that the stack closes the agent first, then
    # the skills' MCP servers it was using; also on any failure below.
    skills = _load_skills(args.skill, runtime=runtime, stack=stack)
    metrics = MetricsCollector().install()  # what /stats reads
    stack.callback(metrics.uninstall)
    interactive = sys.stdin.isatty()
    approvals = TerminalApprovals(assume_yes=args.yes, interactive=interactive)
    small = is_small(args)
    remote = remote_agents(args.a2a, runtime=runtime)
    try:
        agent = agent_from_options(args, llm, runtime=runtime, approver=approvals, remote=remote)
    except ConfigError as err:
        raise Fatal(str(err)) from err
    stack.enter_context(agent)
    aliases = _connect_mcp(agent, args, TerminalElicitation(approvals))
    _activate_skills(agent, skills)
    if args.endpoint and args.provider == "openai":  # a local server was just seen healthy
        check_endpoint(runtime.session, endpoint, api_key=args.api_key)
    if interactive:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing and history for input())
    banner = _banner(
        endpoint,
        Path(args.sandbox).resolve(),
        aliases,
        skills,
        [tool.name for tool in remote],
        small=small and not args.all_tools,
    )
    repl = Repl(
        agent,
        endpoint=endpoint,
        stdin=sys.stdin,
        stdout=sys.stdout,
        stderr=sys.stderr,
        interactive=interactive,
        approvals=approvals,
        prepare=lambda line: mention_files(line, workspace),
        metrics=metrics,
    )
    return repl.run(banner)
