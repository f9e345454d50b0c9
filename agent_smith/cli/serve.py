"""``agent-smith serve``: the embedded model as a server on a port, until Ctrl-C.

``agent-smith serve --local`` fetches the default local model once (as
``agent-smith --local`` does), serves it with llama.cpp on
``127.0.0.1:8080`` — the OpenAI-compatible API under ``/v1`` and everything
else llama.cpp's server offers (``/health``, ``/props``, its web page) — and
stays up until Ctrl-C (or SIGTERM). Every example under ``examples/`` talks
to that address by default, so one more command runs any of them.

The server has several slots (requests served at once, each with its own
context) and caps each reply whose request sets no ``max_tokens``; both are
options here and documented in docs/cli.md. A request that sets no
``temperature`` is answered greedily (temperature 0, as ``agent-smith
--local`` asks): a small model that samples loops now and then, and the same
question should get the same answer. The one line on stdout names the
address once the server answers; notes and errors go to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from collections.abc import Iterator, Sequence
from types import FrameType

from ..llm.local_server import DEFAULT_CTX_SIZE, DEFAULT_MAX_TOKENS, DEFAULT_PARALLEL
from .local import add_model_options, start_local_server
from .main import DEFAULT_ENDPOINT, _configure_logging, _note, add_verbose_option
from .repl import EXIT_FATAL, EXIT_OK, Fatal

#: The temperature of a request that sets none: greedy, like the REPL's local sampling.
GREEDY = 0.0
#: The port examples/ and ``agent-smith`` expect a server on.
DEFAULT_PORT = int(DEFAULT_ENDPOINT.rsplit(":", 1)[1])
#: How often the wait for Ctrl-C checks that the server is still alive.
_CHECK_SECONDS = 1.0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agent-smith serve``."""
    parser = argparse.ArgumentParser(
        prog="agent-smith serve",
        description=(
            "Serve a local model with llama.cpp's server (OpenAI-compatible API under /v1) "
            "on 127.0.0.1 until Ctrl-C; needs the local extra (pip install -e '.[local]')."
        ),
        epilog=(
            "Then, in another terminal: python examples/quickstart.py (or agent-smith, or "
            "any OpenAI-compatible client at the address printed)."
        ),
    )
    what = parser.add_mutually_exclusive_group(required=True)
    add_model_options(what)
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port on 127.0.0.1 (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--parallel",
        type=int,
        default=DEFAULT_PARALLEL,
        metavar="N",
        help=f"requests served at once, each in a slot of its own (default: {DEFAULT_PARALLEL})",
    )
    parser.add_argument(
        "--ctx-size",
        type=int,
        default=DEFAULT_CTX_SIZE,
        metavar="TOKENS",
        help=f"context window of each slot (default: {DEFAULT_CTX_SIZE})",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        metavar="N",
        help=(
            "cap on a reply whose request sets no max_tokens "
            f"(default: {DEFAULT_MAX_TOKENS}; 0: no cap)"
        ),
    )
    parser.add_argument("--threads", type=int, metavar="N", help="CPU threads (default: all)")
    parser.add_argument(
        "-k", "--api-key", help="require this bearer token from clients (default: none)"
    )
    add_verbose_option(parser)
    return parser


def main(argv: Sequence[str]) -> int:
    """Entry point of ``agent-smith serve``; returns the exit status (0 after Ctrl-C)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error("--port must be 0..65535")
    for name in ("parallel", "ctx_size", "threads"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.max_tokens < 0:
        parser.error("--max-tokens must not be negative")
    _configure_logging(args.verbose)
    try:
        with _stopped_by_sigterm(), contextlib.ExitStack() as stack:
            return _serve(args, stack)
    except Fatal as err:
        sys.stderr.write(f"agent-smith serve: error: {err}\n")
        return EXIT_FATAL
    except KeyboardInterrupt:  # Ctrl-C: the way a server is meant to stop
        sys.stderr.write("\nagent-smith serve: stopped\n")
        return EXIT_OK


def _serve(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    server = start_local_server(
        args,
        stack,
        note=_note,
        port=args.port or None,
        parallel=args.parallel,
        ctx_size=args.ctx_size,
        max_tokens=args.max_tokens or None,
        threads=args.threads,
        api_key=args.api_key,
        options={"sampling.temp": GREEDY},
    )
    url = server.endpoint
    cap = f"replies capped at {args.max_tokens} tokens" if args.max_tokens else "replies uncapped"
    sys.stdout.write(
        f"serving {server.model_path.name} at {url} (OpenAI-compatible API at {url}/v1; "
        f"{args.parallel} slots of {args.ctx_size} tokens; {cap}). Ctrl-C stops.\n"
    )
    if url != DEFAULT_ENDPOINT:
        sys.stdout.write(f"For the examples and agent-smith: export LLAMA_SERVER_URL={url}\n")
    sys.stdout.flush()
    while not server.wait(_CHECK_SECONDS):
        pass
    raise Fatal(f"the llama.cpp server on {server.model_path.name} stopped by itself")


@contextlib.contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """Treat SIGTERM (``kill``, a service manager) like Ctrl-C, so the server is closed."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
