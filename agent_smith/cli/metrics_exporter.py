"""``agent-smith metrics-exporter``: serve ``/metrics`` from a shared metrics directory.

    agent-smith metrics-exporter --dir DIR [--host HOST] [--port N]

A process of its own that sums the snapshots agent processes publish into
``DIR`` (:class:`~agent_smith.metrics.shared.SnapshotPublisher`, or
``agent-smith web --metrics-dir DIR``) and serves them as Prometheus text
(:mod:`~agent_smith.web.metrics_exporter`), so scrapes cost the agents'
processes nothing. Needs the web extra (waitress). Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import ConfigError
from .repl import EXIT_FATAL, EXIT_INTERRUPTED, EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``agent-smith metrics-exporter``."""
    parser = argparse.ArgumentParser(
        prog="agent-smith metrics-exporter",
        description="Serve /metrics: the sum of the snapshots published in a directory.",
    )
    parser.add_argument("--dir", required=True, help="the shared metrics directory")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=9464, help="port to listen on (9464)")
    return parser


def main(argv: Sequence[str]) -> int:
    """Entry point of ``agent-smith metrics-exporter``; returns the exit status."""
    args = build_parser().parse_args(argv)
    from ..web.metrics_exporter import MetricsExporterApp
    from ..web.serve import WebServer

    try:
        server = WebServer(MetricsExporterApp(args.dir), host=args.host, port=args.port, threads=4)
    except (ConfigError, OSError) as err:  # OSError: the port is taken
        sys.stderr.write(f"agent-smith: error: {err}\n")
        return EXIT_FATAL
    with server:
        sys.stderr.write(f"agent-smith metrics-exporter: {server.url}/metrics; Ctrl-C stops\n")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            sys.stderr.write("\n")
            return EXIT_INTERRUPTED
    return EXIT_OK
