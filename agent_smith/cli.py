"""``agent-smith``: a demo REPL that chats with an agent over an OpenAI-compatible server.

The agent has the two demo tools (``calculator``, ``read_local_file``), the
bundled example MCP server (``echo``, ``now``) unless ``--no-default-mcp``,
any ``--mcp`` stdio servers and ``--skill`` folders. Reply tokens stream to
stdout; tool calls and results are short status lines on stderr, so stdout
holds only the answers.

Keys: ``/exit`` or Ctrl-D quits; Ctrl-C during a reply cancels that reply
(``agent.cancel()``) and returns to the prompt; Ctrl-C at the prompt discards
the line. A turn runs on its own thread so that Ctrl-C reaches the main thread
while it waits, never in the middle of the agent's own locking.

Fatal problems (server unreachable, credentials refused, a server that will
not take tools, a bad ``--mcp``/``--skill``) print one ``agent-smith: error:``
line and exit with status 1; usage errors exit with 2. This is the only place
in the package that installs a logging handler (``-v``: INFO, ``-vv``: DEBUG,
``-vvv``: wire-level TRACE, all to stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import logging
import os
import queue
import re
import shlex
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from . import __version__
from .agent import Agent
from .config import AgentConfig
from .demo_tools import demo_tools
from .errors import (
    AgentSmithError,
    AgentTimeoutError,
    CancelledError,
    ConfigError,
    LlmApiError,
    McpError,
    McpProtocolError,
    SkillError,
    TransportError,
)
from .events import FinalAnswer, ToolCallRequested, ToolResultReady
from .llm.client import LlmClient
from .llm.events import TokenDelta
from .local import INSTALL_HINT, LocalLlamaServer, xllamacpp_available
from .logs import TRACE
from .mcp.config import ServerConfig
from .models import DEFAULT_MODEL_NAME, ensure_default_model
from .runtime import Runtime

DEFAULT_ENDPOINT = "http://127.0.0.1:8080"
SYSTEM_PROMPT = (
    "You are a helpful assistant running in a terminal. Use the calculator tool for "
    "arithmetic and read_local_file to read files the user mentions. Answer briefly."
)
#: Where the bundled example MCP server lives in a source checkout.
EXAMPLE_MCP_SERVER = Path(__file__).resolve().parent.parent / "examples" / "mcp_server_example.py"
#: How long the REPL waits for a turn's next event before checking the turn is alive.
PUMP_SECONDS = 1.0
#: Longest tool status line written to stderr.
STATUS_WIDTH = 160
EXIT_OK, EXIT_FATAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
_ALIAS_CHARS = re.compile(r"[^A-Za-z0-9]+")


class Fatal(Exception):
    """A problem that ends the program with one error line (status 1)."""


class Quit(Exception):
    """The user pressed Ctrl-C again while a reply was being cancelled (status 130)."""


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
            "In the REPL: /exit or Ctrl-D quits; Ctrl-C cancels the reply being written, "
            "or discards the line at the prompt."
        ),
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "-e",
        "--endpoint",
        help=f"server base URL (default: $LLAMA_SERVER_URL, else {DEFAULT_ENDPOINT})",
    )
    where.add_argument(
        "--serve-model",
        metavar="PATH.gguf",
        help="run llama.cpp's server in-process on this GGUF model (needs agent-smith[local])",
    )
    where.add_argument(
        "--local",
        action="store_true",
        help="like --serve-model with a small default model fetched once (SmolLM2-135M)",
    )
    parser.add_argument(
        "-k", "--api-key", help="bearer token for the server (default: $LLAMA_API_KEY)"
    )
    parser.add_argument("-m", "--model", default="", help="model name sent to the server")
    parser.add_argument(
        "--no-stream", action="store_true", help="print each reply whole instead of streaming"
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
        help="directory read_local_file may read below (default: the current directory)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log to stderr: -v INFO, -vv DEBUG, -vvv wire-level TRACE",
    )
    parser.add_argument("-V", "--version", action="version", version=f"agent-smith {__version__}")
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line and fill the environment defaults."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not (args.serve_model or args.local):
        args.endpoint = args.endpoint or os.environ.get("LLAMA_SERVER_URL") or DEFAULT_ENDPOINT
    if args.api_key is None:
        args.api_key = os.environ.get("LLAMA_API_KEY") or None
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


def describe_fatal(err: AgentSmithError, endpoint: str) -> str | None:
    """One line for an error that makes chatting pointless, else None (report and go on)."""
    if isinstance(err, TransportError):
        return f"{err}; start llama-server there, pass --endpoint URL, or try --local"
    if isinstance(err, LlmApiError):
        if err.http_status in (401, 403):
            return (
                f"the server at {endpoint} refused the credentials (HTTP {err.http_status}); "
                "pass --api-key KEY or set LLAMA_API_KEY"
            )
        if _refuses_tools(f"{err} {err.body_excerpt}"):
            return (
                f"the server at {endpoint} does not accept tool calls (HTTP {err.http_status}: "
                f"{_one_line(err.body_excerpt or str(err), 120)}); llama-server needs --jinja "
                "and a model whose chat template supports tools"
            )
        if err.http_status == 404:
            return (
                f"no chat-completions API at {endpoint} (HTTP 404); "
                "check --endpoint (a base URL such as http://127.0.0.1:8080)"
            )
    return None


def _refuses_tools(text: str) -> bool:
    """Does an error body say the server or model cannot take the ``tools`` field?

    llama-server without --jinja: "tools param requires --jinja flag"; Ollama:
    "... does not support tools"; vLLM: "auto tool choice requires
    --enable-auto-tool-choice". A bare 400 is not enough.
    """
    lowered = text.lower()
    return "tool" in lowered and any(
        word in lowered for word in ("jinja", "support", "requires", "not allowed", "unsupported")
    )


def _error_text(content: str) -> str:
    """The message of an error tool result (``{"error": true, "message": ...}``), else as is."""
    try:
        payload = json.loads(content)
    except ValueError:
        return content
    message = payload.get("message") if isinstance(payload, dict) else None
    return message if isinstance(message, str) else content


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _configure_logging(verbosity: int) -> None:
    if verbosity <= 0:
        return
    level = {1: logging.INFO, 2: logging.DEBUG}.get(verbosity, TRACE)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("agent_smith")
    root.addHandler(handler)
    root.setLevel(level)


@dataclass
class _Done:
    """The turn thread finished; ``error`` is what ended it, if anything."""

    error: BaseException | None = None


class Repl:
    """Reads lines, runs each as an agent turn, prints tokens and tool status lines."""

    def __init__(
        self,
        agent: Agent,
        *,
        endpoint: str,
        stdin: TextIO,
        stdout: TextIO,
        stderr: TextIO,
        interactive: bool,
    ) -> None:
        self.agent = agent
        self.endpoint = endpoint
        self._in, self._out, self._err = stdin, stdout, stderr
        self._interactive = interactive
        self._turns = 0
        self._line_open = False  # stdout has text not yet ended by a newline
        self._streamed = False  # tokens of the current LLM reply were printed

    def run(self, banner: str = "") -> int:
        """Loop until /exit or end of input; return the exit status."""
        while True:
            try:
                if banner:
                    shown, banner = banner, ""  # once, even if Ctrl-C lands mid-write
                    self._err.write(shown + "\n")
                    self._err.flush()
                line = self._read_line()
                if line is None:
                    return EXIT_OK
                text = line.strip()
                if text in ("/exit", "/quit"):
                    return EXIT_OK
                if text == "/help":
                    self._err.write("/exit or Ctrl-D quits; Ctrl-C cancels the current reply.\n")
                elif text:
                    self.turn(text)
            except KeyboardInterrupt:
                # Outside a reply (at the prompt): discard the line, like any shell.
                self._end_line()
                self._err.write("\n")
                self._err.flush()

    def _read_line(self) -> str | None:
        if self._interactive:
            try:
                return input("> ")
            except EOFError:
                self._err.write("\n")
                return None
        line = self._in.readline()
        return line if line else None

    def turn(self, text: str) -> None:
        """Run one turn; ``Fatal`` when the server is unusable."""
        events: queue.Queue[object] = queue.Queue()
        self._turns += 1
        worker = threading.Thread(
            target=self._produce,
            args=(text, events),
            name=f"agent_smith-cli-turn-{self._turns}",
            daemon=True,  # only abandoned if the user insists on quitting mid-cancel
        )
        worker.start()
        self._streamed = False
        cancelling = False
        done: _Done | None = None
        while done is None:
            try:
                done = self._pump(events, worker)
            except KeyboardInterrupt:
                if cancelling:
                    raise Quit from None  # a second Ctrl-C while cancelling
                cancelling = True
                self._status("cancelling the reply (Ctrl-C again to quit)")
                self.agent.cancel()
        worker.join()
        self._end_line()
        if done.error is not None:
            self._report(done.error)

    def _pump(self, events: queue.Queue[object], worker: threading.Thread) -> _Done | None:
        """Show the next event; the turn's outcome once it is over, else None."""
        try:
            # The bound only matters if a Ctrl-C swallowed the final _Done:
            # then the worker is gone and nothing more will come.
            event = events.get(timeout=PUMP_SECONDS)
        except queue.Empty:
            return None if worker.is_alive() or not events.empty() else _Done()
        if isinstance(event, _Done):
            return event
        self._show(event)
        return None

    def _produce(self, text: str, events: queue.Queue[object]) -> None:
        error: BaseException | None = None
        try:
            for event in self.agent.stream(text):
                events.put(event)
        except BaseException as err:  # handed to the main thread, which reports it
            error = err
        events.put(_Done(error))

    def _show(self, event: object) -> None:
        if isinstance(event, TokenDelta):
            self._streamed = self._streamed or bool(event.text)
            self._write(event.text)
        elif isinstance(event, ToolCallRequested):
            self._streamed = False
            args = event.call.invalid_arguments or json.dumps(
                event.call.arguments, ensure_ascii=False
            )
            self._status(f"[tool] {event.call.name} {args}")
        elif isinstance(event, ToolResultReady):
            message = event.message
            if message.is_error:
                text = _error_text(message.content)
                text = text.removeprefix(f"tool {message.name!r} failed: ")  # said already
                self._status(f"[tool] {message.name} failed: {text}")
            else:
                self._status(f"[tool] {message.name} -> {message.content}")
        elif isinstance(event, FinalAnswer) and not self._streamed:
            # Nothing streamed (--no-stream, or a server that sent it whole).
            self._write(event.message.content or "")

    def _report(self, error: BaseException) -> None:
        if isinstance(error, CancelledError):
            self._status("(reply cancelled)")
            return
        if not isinstance(error, AgentSmithError):
            raise error
        fatal = describe_fatal(error, self.endpoint)
        if fatal is not None:
            raise Fatal(fatal) from error
        self._err.write(f"agent-smith: error: {_one_line(str(error), 400)}\n")
        self._err.flush()

    def _write(self, text: str) -> None:
        if not text:
            return
        self._out.write(text)
        self._out.flush()
        self._line_open = not text.endswith("\n")

    def _end_line(self) -> None:
        if self._line_open:
            self._out.write("\n")
            self._out.flush()
            self._line_open = False

    def _status(self, text: str) -> None:
        self._end_line()  # keep a status line off the end of a half-written reply
        self._err.write(_one_line(text, STATUS_WIDTH) + "\n")
        self._err.flush()


def _start_local_server(args: argparse.Namespace, stack: contextlib.ExitStack) -> str:
    """Start llama.cpp for --serve-model / --local; return its endpoint."""
    if not xllamacpp_available():  # before --local fetches a model it could not serve
        raise Fatal(f"--local and --serve-model need llama.cpp's server: {INSTALL_HINT}")
    try:
        if args.local:
            _note(
                f"using {DEFAULT_MODEL_NAME}: it chats, but rarely calls tools "
                "(use --serve-model with a bigger model for that)"
            )
            model = ensure_default_model(progress=_note)
        else:
            model = Path(args.serve_model)
        _note(f"starting llama.cpp on {model.name} ...")
        server = stack.enter_context(LocalLlamaServer(model))
    except (ConfigError, TransportError, AgentTimeoutError) as err:
        raise Fatal(str(err)) from err
    return server.endpoint


def _connect_mcp(agent: Agent, args: argparse.Namespace) -> list[str]:
    """Start the default example server and every --mcp server; return their aliases."""
    aliases: list[str] = []
    taken: set[str] = set()
    if not args.no_default_mcp:
        if not EXAMPLE_MCP_SERVER.is_file():
            _note("the bundled MCP example server is not in this install; use --mcp to add one")
        elif importlib.util.find_spec("mcp") is None:
            _note("the bundled MCP example server needs the 'mcp' package (pip install mcp)")
        else:
            config = ServerConfig(alias="demo", command=(sys.executable, str(EXAMPLE_MCP_SERVER)))
            taken.add("demo")
            try:
                agent.connect_mcp(config)
                aliases.append("demo")
            except (TransportError, McpError, McpProtocolError) as err:
                _note(f"the bundled MCP example server did not start ({err}); going on without")
    for command in args.mcp:
        alias = mcp_alias(command, taken)
        try:
            agent.connect_mcp(ServerConfig(alias=alias, command=command))
        except (TransportError, McpError, McpProtocolError, ConfigError) as err:
            raise Fatal(f"--mcp {shlex.join(command)!r}: {err}") from err
        aliases.append(alias)
    return aliases


def _activate_skills(agent: Agent, folders: Sequence[str]) -> None:
    from .skills import load_skill

    for folder in folders:
        try:
            agent.activate(load_skill(folder))
        except (SkillError, ConfigError, TransportError, McpError, McpProtocolError) as err:
            raise Fatal(f"--skill {folder}: {err}") from err


def _note(text: str) -> None:
    sys.stderr.write(f"agent-smith: note: {text}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agent-smith`` and ``python -m agent_smith``; returns the exit status."""
    args = parse_args(argv)
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
    endpoint = args.endpoint or _start_local_server(args, stack)
    try:
        tools = demo_tools(args.sandbox)
        runtime = stack.enter_context(Runtime())
        llm = LlmClient(endpoint, args.model, api_key=args.api_key, runtime=runtime)
    except (ConfigError, ValueError) as err:  # ValueError: an endpoint that is no URL
        raise Fatal(str(err)) from err
    agent = stack.enter_context(
        Agent(
            llm,
            SYSTEM_PROMPT,
            tools,
            config=AgentConfig(stream=not args.no_stream),
            runtime=runtime,
        )
    )
    aliases = _connect_mcp(agent, args)
    _activate_skills(agent, args.skill)
    interactive = sys.stdin.isatty()
    if interactive:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing and history for input())
    mcp = f"; MCP: {', '.join(aliases)}" if aliases else ""
    sandbox = Path(args.sandbox).resolve()
    banner = (
        f"agent-smith {__version__} at {endpoint}; tools: calculator, read_local_file "
        f"(sandbox {sandbox}){mcp}. /exit or Ctrl-D quits."
    )
    repl = Repl(
        agent,
        endpoint=endpoint,
        stdin=sys.stdin,
        stdout=sys.stdout,
        stderr=sys.stderr,
        interactive=interactive,
    )
    return repl.run(banner)
