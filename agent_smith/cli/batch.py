"""``agent-smith batch``: run one agent spec over a JSON Lines file of inputs.

    agent-smith batch spec.json inputs.jsonl -o out.jsonl [--scheduler tcp://host:8786 |
                                                            --local-cluster N]

Without ``--scheduler``/``--local-cluster`` the inputs run on local threads.
``--scheduler`` connects to a running Dask scheduler; ``--local-cluster N``
starts N Dask worker processes on this machine for the run (Dask is the
optional extra ``agent-smith[dask]``, imported only here). Results go to
``-o`` (``.jsonl``, or ``.sqlite``/``.db``), one per input as it finishes;
running the same command again skips the ids already there. Progress (done,
failed, rate, ETA) goes to stderr: a redrawn bar on a terminal, a plain line
every few seconds elsewhere.

Ctrl-C cancels the inputs in flight and exits with status 130, leaving the
results file complete and resumable. Exit status: 0 when every input
succeeded, 3 when some failed (their errors are in the results file), 1 for
a fatal problem (bad spec, inputs or results file, no scheduler), 2 for bad
options.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from .._internal.extras import install_hint
from ..batch.inputs import read_inputs
from ..batch.run import run_batch
from ..batch.spec import AgentSpec
from ..errors import ConfigError, ResultsError
from .main import _configure_logging, add_verbose_option
from .progress import Progress
from .repl import EXIT_FATAL, EXIT_INTERRUPTED, EXIT_OK, Fatal

#: Exit status when the batch finished but some inputs failed.
EXIT_SOME_FAILED = 3
#: How long to wait for a Dask scheduler to answer.
CONNECT_TIMEOUT = "20s"
DASK_HINT = install_hint("dask")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agent-smith batch``."""
    parser = argparse.ArgumentParser(
        prog="agent-smith batch",
        description=(
            "Run the agent described by SPEC (a JSON agent spec) over every input in INPUTS "
            '(JSON Lines: {"id": ..., "input": ...} per line), recording each result in '
            "OUTPUT as it finishes. Rerun the same command to resume."
        ),
        epilog=(
            "Exit status: 0 all inputs succeeded, 3 some failed, 1 fatal error, "
            "2 bad options, 130 interrupted (Ctrl-C)."
        ),
    )
    parser.add_argument("spec", metavar="SPEC", help="agent spec, a JSON file")
    parser.add_argument("inputs", metavar="INPUTS", help="inputs, a JSON Lines file")
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="results file: .jsonl, or .sqlite/.sqlite3/.db for SQLite (resumed if it exists)",
    )
    add_executor_options(parser, concurrency=8)
    parser.add_argument(
        "--retries",
        type=int,
        default=2,
        metavar="N",
        help="extra attempts for a failed input (default: 2)",
    )
    parser.add_argument(
        "--item-timeout", type=float, metavar="SECONDS", help="time limit for each attempt"
    )
    parser.add_argument(
        "--rerun-failed",
        action="store_true",
        help="run the inputs whose recorded result is a failure again",
    )
    add_verbose_option(parser)
    return parser


def add_executor_options(parser: argparse.ArgumentParser, *, concurrency: int) -> None:
    """``--scheduler``/``--local-cluster`` (Dask), ``-e``, ``-c``: batch's, and eval's too."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler", metavar="ADDRESS", help="run on the Dask cluster of this scheduler"
    )
    where.add_argument(
        "--local-cluster",
        type=int,
        metavar="N",
        help="run on N local Dask worker processes started for this run",
    )
    parser.add_argument("-e", "--endpoint", help="LLM base URL, overriding the spec's base_url")
    parser.add_argument(
        "-c",
        "--concurrency",
        type=int,
        default=concurrency,
        metavar="N",
        help=f"inputs in flight at once (default: {concurrency})",
    )


def check_executor_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (exit 2) a ``--concurrency`` or ``--local-cluster`` under 1."""
    for name in ("concurrency", "local_cluster"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")


def names_resolve_here() -> None:
    """Let "module:function" names resolve against the current directory, as ``python -m``.

    Local Dask workers inherit this path.
    """
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def load_spec(args: argparse.Namespace) -> AgentSpec:
    """The agent spec of ``args.spec``, at ``--endpoint`` when given (ConfigError if bad)."""
    spec = AgentSpec.load(args.spec)
    if args.endpoint:
        spec = dataclasses.replace(spec, base_url=args.endpoint)
    return spec


def main(argv: Sequence[str]) -> int:
    """Entry point of ``agent-smith batch``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_executor_options(parser, args)
    if args.retries < 0:
        parser.error("--retries must not be negative")
    if args.item_timeout is not None and not args.item_timeout > 0:
        parser.error("--item-timeout must be positive")
    _configure_logging(args.verbose)
    names_resolve_here()
    try:
        return _run(args)
    except Fatal as err:
        sys.stderr.write(f"agent-smith batch: error: {err}\n")
        return EXIT_FATAL
    except KeyboardInterrupt:  # before the run started, or a second Ctrl-C while stopping
        sys.stderr.write("\nagent-smith batch: interrupted\n")
        return EXIT_INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    try:
        spec = load_spec(args)
        inputs = read_inputs(args.inputs)
    except ConfigError as err:
        raise Fatal(str(err)) from err
    started = time.monotonic()
    with executor_backend(args) as backend:
        try:
            run = run_batch(
                spec,
                inputs,
                executor=backend.executor,
                concurrency=args.concurrency,
                results=args.output,
                retries=args.retries,
                item_timeout=args.item_timeout,
                rerun_failed=args.rerun_failed,
            )
        except (ConfigError, ResultsError) as err:
            raise Fatal(str(err)) from err
        progress = Progress(run.pending, stream=sys.stderr, tty=sys.stderr.isatty())
        try:
            with run:
                skipped = f", {run.skipped} already in {args.output}" if run.skipped else ""
                _say(f"{len(inputs)} inputs{skipped}; running {run.pending} on {backend.where}")
                for result in run:
                    progress.add(result)
                progress.finish()
        except KeyboardInterrupt:
            backend.cancel(run.id)  # the run cancelled its futures; now the turns
            sys.stderr.write("\n")
            _say(
                f"interrupted: {run.skipped + run.done} of {len(inputs)} inputs are done "
                f"(results in {args.output}); run the same command again to resume"
            )
            return EXIT_INTERRUPTED
        except ResultsError as err:  # e.g. the disk filled up while writing
            raise Fatal(str(err)) from err
    seconds = time.monotonic() - started
    _say(
        f"{progress.done} result(s), {progress.failed} failed, in {seconds:.1f} s; "
        f"results in {args.output}"
    )
    return EXIT_SOME_FAILED if progress.failed else EXIT_OK


@dataclass(frozen=True)
class _Backend:
    """Where the inputs run: the executor (None: local threads), its name, its cancel."""

    executor: Executor | None
    where: str
    cancel: Callable[[str], None]


@contextlib.contextmanager
def executor_backend(args: argparse.Namespace) -> Iterator[_Backend]:
    """The executor ``--scheduler``/``--local-cluster``/``--concurrency`` ask for (also evals')."""
    if args.scheduler is None and args.local_cluster is None:
        # Local threads: closing the run already cancels the turns running there.
        yield _Backend(None, f"{args.concurrency} local threads", lambda run: None)
        return
    try:
        from .dask_cluster import dask_backend
    except ImportError as err:
        raise Fatal(f"--scheduler and --local-cluster need Dask: {DASK_HINT}") from err
    workers = args.local_cluster
    threads = math.ceil(args.concurrency / workers) if workers else 1
    with contextlib.ExitStack() as stack:
        try:
            dask = stack.enter_context(
                dask_backend(
                    scheduler=args.scheduler,
                    local_workers=workers,
                    threads=threads,
                    timeout=CONNECT_TIMEOUT,
                )
            )
        except (OSError, TimeoutError) as err:
            if args.scheduler is None:
                raise Fatal(f"cannot start the local Dask cluster: {err}") from err
            raise Fatal(f"cannot reach the Dask scheduler at {args.scheduler}: {err}") from err
        yield _Backend(dask.executor, dask.where, dask.cancel)


def _say(text: str) -> None:
    sys.stderr.write(f"agent-smith batch: {text}\n")
    sys.stderr.flush()
