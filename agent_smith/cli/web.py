"""``agent-smith web``: the demo agent in a browser, served by :class:`~agent_smith.web.app.WebApp`.

    agent-smith web [--local [MODEL] | --serve-model PATH.gguf | -e URL]
                    [--provider NAME] [--port N] [--a2a URL] [--a2a-serve]

Serves the dev UI at ``http://127.0.0.1:<port>/`` plus the Vercel AI SDK and
AG-UI endpoints (``/api/chat``, ``/api/agui``) with waitress (the optional
extra ``agent-smith[web]``), for the same demo agent as the REPL: the
calculator and the files, search and shell toolkits, whose writes and
risky commands wait for Approve/Deny in the browser; each ``--a2a URL`` adds
the remote A2A agent there as a tool, and ``--a2a-serve`` serves the agent
over A2A too. Conversations are kept in a SQLite file
(``--sessions``, default ``web.db`` in the user's data directory,
``$XDG_DATA_HOME/agent_smith``, else ``~/.local/share/agent_smith``, created
on first use; the startup line says which file), or in PostgreSQL when
``--sessions`` is a ``postgresql://`` URL.
It listens on 127.0.0.1 only: there is no authentication.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..agent.agent import Agent
from ..errors import ConfigError, SessionError
from ..llm.providers import make_model
from ..llm.request import SamplingParams
from ..runtime import Runtime
from ..sessions.session import Session
from ..sessions.store import SessionStore
from ..toolkits.workspace import Workspace
from .demo_agent import add_tool_options, agent_from_options, remote_agents
from .endpoint_check import check_endpoint
from .local import add_model_options, start_local_server
from .main import (
    DEFAULT_ENDPOINT,
    LOCAL_SAMPLING,
    _configure_logging,
    _note,
    add_verbose_option,
)
from .providers import add_provider_option, fill_provider_defaults
from .repl import EXIT_FATAL, EXIT_INTERRUPTED, EXIT_OK, Fatal


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agent-smith web``."""
    parser = argparse.ArgumentParser(
        prog="agent-smith web",
        description=(
            "Serve the demo agent's dev UI (and the Vercel AI SDK and AG-UI endpoints) "
            "on 127.0.0.1. Needs the web extra (pip install -e '.[web]')."
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
    parser.add_argument("-k", "--api-key", help="bearer token (default: $LLAMA_API_KEY)")
    parser.add_argument("-m", "--model", default="", help="model name sent to the server")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument(
        "--threads",
        type=int,
        default=32,
        help="worker threads: each open stream holds one (default 32)",
    )
    parser.add_argument(
        "--sessions",
        metavar="FILE|URL",
        help=(
            "SQLite file or postgresql:// URL keeping the conversations (default: web.db "
            "in $XDG_DATA_HOME/agent_smith, else ~/.local/share/agent_smith)"
        ),
    )
    parser.add_argument(
        "--metrics-dir",
        metavar="DIR",
        help=(
            "publish this process's metrics into DIR and serve at /metrics the sum of every "
            "process publishing there (see agent-smith metrics-exporter)"
        ),
    )
    parser.add_argument(
        "--sandbox",
        default=".",
        metavar="DIR",
        help="directory the file tools may use (default: the current directory)",
    )
    parser.add_argument(
        "--a2a-serve",
        action="store_true",
        help="serve the agent over A2A too (card at /.well-known/agent-card.json, "
        "JSON-RPC at /a2a)",
    )
    parser.add_argument(
        "--evals",
        metavar="DIR",
        help="folder of JSON eval reports (agent-smith eval --json) for the dev UI's Evals view",
    )
    add_tool_options(parser)
    add_verbose_option(parser)
    return parser


def data_dir() -> Path:
    """The user's data directory of agent_smith: ``$XDG_DATA_HOME/agent_smith``, else
    ``~/.local/share/agent_smith`` (the XDG base directory default)."""
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "agent_smith"


def _sessions_file(chosen: str | None) -> str:
    """``--sessions`` as given (a path or a URL), else ``web.db`` in :func:`data_dir`
    (created here)."""
    if chosen:
        return chosen
    folder = data_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise Fatal(
            f"cannot create {folder} for the conversations ({err}); pass --sessions FILE"
        ) from err
    return str(folder / "web.db")


def main(argv: Sequence[str]) -> int:
    """Entry point of ``agent-smith web``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    fill_provider_defaults(parser, args)
    _configure_logging(args.verbose)
    try:
        with contextlib.ExitStack() as stack:
            return _serve(args, stack)
    except Fatal as err:
        sys.stderr.write(f"agent-smith: error: {err}\n")
        return EXIT_FATAL
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return EXIT_INTERRUPTED


def _serve(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    from ..metrics import MetricsCollector
    from ..metrics.shared import SnapshotPublisher
    from ..web.app import WebApp
    from ..web.serve import WebServer

    sessions = _sessions_file(args.sessions)
    endpoint = args.endpoint or start_local_server(args, stack, note=_note).endpoint
    try:
        runtime = stack.enter_context(Runtime())
        llm = make_model(
            args.provider,
            endpoint,
            args.model,
            api_key=args.api_key,
            runtime=runtime,
            default_sampling=SamplingParams() if args.endpoint else LOCAL_SAMPLING,
        )
        Workspace(args.sandbox)  # a sandbox that is no folder fails here, not per conversation
        if args.endpoint and args.provider == "openai":
            check_endpoint(runtime.session, endpoint, api_key=args.api_key)
        remote = remote_agents(args.a2a, runtime=runtime)  # shared: each call its own task

        def agent(session: Session) -> Agent:
            return agent_from_options(
                args, llm, runtime=runtime, session=session, where="a web page", remote=remote
            )

        metrics = MetricsCollector().install()  # the dev UI's timelines and charts, /metrics
        stack.callback(metrics.uninstall)
        if args.metrics_dir:
            stack.enter_context(SnapshotPublisher(metrics, args.metrics_dir))
        store = stack.enter_context(SessionStore(sessions))  # an unreachable database fails here
        app = WebApp(
            agent,
            sessions=store.open,
            metrics=metrics,
            a2a=args.a2a_serve,
            metrics_dir=args.metrics_dir,
            eval_reports=args.evals,
        )
        server = stack.enter_context(WebServer(app, port=args.port, threads=args.threads))
    except (ConfigError, SessionError, ValueError, OSError) as err:  # OSError: the port is taken
        raise Fatal(str(err)) from err
    sys.stderr.write(
        f"agent-smith web: open {server.url}/ (model at {endpoint}; conversations in "
        f"{store.where}); Ctrl-C stops\n"
    )
    server.serve_forever()
    return EXIT_OK
