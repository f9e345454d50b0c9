"""``agent-smith eval``: run an eval dataset against an agent spec, for people and for CI.

    agent-smith eval cases.jsonl --spec spec.json [--repeat 3] [--threshold 0.8]
                     [--html report.html] [--json report.json] [--compare base.json]

Every case runs ``--repeat`` times on local threads (or a Dask cluster, as
``agent-smith batch``), its runs recorded in ``--results`` (resumable). The
report's table goes to stdout, a progress bar to a terminal's stderr.
``--judge`` names an agent spec whose model grades the dataset's judges.
Exit status: 0 done (and at or over the threshold), 3 under ``--threshold``,
1 fatal (bad spec, dataset or file), 2 bad options, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..batch.spec import AgentSpec
from ..errors import AgentSmithError, CancelledError
from ..evals.dataset import Dataset
from ..evals.report import METRICS, EvalReport
from ..evals.run import run_eval
from .batch import (
    add_executor_options,
    check_executor_options,
    executor_backend,
    load_spec,
    names_resolve_here,
)
from .main import _configure_logging, add_verbose_option
from .repl import EXIT_FATAL, EXIT_INTERRUPTED, EXIT_OK, Fatal

#: Exit status when the eval ran but scored under ``--threshold``.
EXIT_UNDER_THRESHOLD = 3


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agent-smith eval``."""
    parser = argparse.ArgumentParser(
        prog="agent-smith eval",
        description="Run every case of DATASET (.jsonl, .yaml or .json) against the agent of "
        "SPEC, judge each run, and print the report.",
        epilog="Exit status: 0 done, 3 under --threshold, 1 fatal error, 2 bad options, "
        "130 interrupted (Ctrl-C).",
    )
    parser.add_argument("dataset", metavar="DATASET", help="eval dataset file")
    parser.add_argument("--spec", required=True, help="agent spec, a JSON file")
    parser.add_argument("--repeat", type=int, default=1, metavar="K", help="runs per case")
    parser.add_argument("--results", metavar="FILE", help="record runs here (resumable)")
    parser.add_argument("--json", metavar="FILE", help="write the JSON report")
    parser.add_argument("--html", metavar="FILE", help="write the HTML report")
    parser.add_argument("--compare", metavar="FILE", help="a JSON report to compare with")
    parser.add_argument("--judge", metavar="SPEC", help="agent spec of the judges' model")
    parser.add_argument(
        "--threshold", type=float, metavar="SHARE", help="fail (exit 3) under this, 0..1"
    )
    parser.add_argument(
        "--metric", choices=METRICS, default="pass_rate", help="what --threshold checks"
    )
    add_executor_options(parser, concurrency=4)
    add_verbose_option(parser)
    return parser


def main(argv: Sequence[str]) -> int:
    """Entry point of ``agent-smith eval``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_executor_options(parser, args)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.threshold is not None and not 0 <= args.threshold <= 1:
        parser.error("--threshold is a share between 0 and 1")
    _configure_logging(args.verbose)
    names_resolve_here()  # "module:name" in specs and datasets, as for batch
    try:
        report = _run(args)
    except Fatal as err:
        sys.stderr.write(f"agent-smith eval: error: {err}\n")
        return EXIT_FATAL
    except (KeyboardInterrupt, CancelledError):
        sys.stderr.write("\nagent-smith eval: interrupted; rerun with the same --results\n")
        return EXIT_INTERRUPTED
    sys.stdout.write(report.table() + "\n")
    try:
        _write(args, report)
    except AgentSmithError as err:
        sys.stderr.write(f"agent-smith eval: error: {err}\n")
        return EXIT_FATAL
    if args.threshold is not None and not report.passes(args.threshold, metric=args.metric):
        sys.stderr.write(
            f"agent-smith eval: {args.metric} {report.metric(args.metric):.3f} is under "
            f"the threshold {args.threshold}\n"
        )
        return EXIT_UNDER_THRESHOLD
    return EXIT_OK


def _run(args: argparse.Namespace) -> EvalReport:
    try:
        spec = load_spec(args)
        judge = AgentSpec.load(args.judge).make_llm() if args.judge else None
        dataset = Dataset.load(args.dataset)
    except AgentSmithError as err:
        raise Fatal(str(err)) from err
    for problem in dataset.invalid:
        sys.stderr.write(f"agent-smith eval: skipped: {problem}\n")
    with executor_backend(args) as backend:
        try:
            run = run_eval(
                dataset,
                spec,
                repeat=args.repeat,
                concurrency=args.concurrency,
                executor=backend.executor,
                results=args.results,
                judge=judge,
                progress=True,
            )
        except AgentSmithError as err:
            raise Fatal(str(err)) from err
        with run:
            return run.report()


def _write(args: argparse.Namespace, report: EvalReport) -> None:
    if args.json:
        report.save(args.json)
    if args.html:
        report.save(args.html)
    if args.compare:
        sys.stdout.write("\n" + EvalReport.load(args.compare).compare(report).table() + "\n")
