"""A WebApp served by a real gunicorn (a master and its worker processes), or by
waitress in a process of its own, on loopback.

The app of :func:`gunicorn` and :func:`waitress` is :mod:`tests.support.resume`'s,
on the stores the caller names; each response says which worker served it
(``X-Worker-Pid``). :func:`serving` runs any server command (an example
project's gunicorn) until it answers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def gunicorn(
    *,
    llm_url: str,
    sessions: str,
    events: str = "",
    durable: str = "",
    worker_class: str = "sync",
    workers: int = 2,
    threads: int = 8,
    log: Path | None = None,
) -> Iterator[str]:
    """Serve the test app with gunicorn; yields its URL once every worker answers.

    The app resumes streams from the event log ``events``, or with ``durable``
    runs durable chat turns on that database."""
    port = free_port()
    argv = [
        "gunicorn",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        worker_class,
        "--threads",
        str(threads if worker_class == "gthread" else 1),  # more makes a sync worker gthread
        "--timeout",
        "120",
        "--graceful-timeout",
        "5",
        "--no-control-socket",  # gunicorn>=27 would share one in ~/.gunicorn between tests
        "tests.support.resume:app",
    ]
    with _serving(argv, port, workers, llm_url, sessions, events, log, durable) as url:
        yield url


@contextmanager
def waitress(
    *, llm_url: str, sessions: str, events: str, threads: int = 8, log: Path | None = None
) -> Iterator[str]:
    """Serve the test app with waitress (one process, ``threads`` threads); yields its URL."""
    port = free_port()
    argv = [
        "waitress",
        "--listen",
        f"127.0.0.1:{port}",
        "--threads",
        str(threads),
        "tests.support.resume:app",
    ]
    with _serving(argv, port, 1, llm_url, sessions, events, log) as url:
        yield url


@contextmanager
def _serving(
    argv: list[str],
    port: int,
    workers: int,
    llm_url: str,
    sessions: str,
    events: str,
    log: Path | None,
    durable: str = "",
) -> Iterator[str]:
    """Serve the test app with ``python -m argv`` on ``port`` until every worker answers."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AGENT_SMITH_TEST_LLM": llm_url,
        "AGENT_SMITH_TEST_SESSIONS": sessions,
        "AGENT_SMITH_TEST_EVENTS": events,
        "AGENT_SMITH_TEST_DURABLE": durable,
    }
    ready = lambda url: wait_for_workers(url, workers)  # noqa: E731
    with serving(argv, port=port, env=env, ready=ready, log=log) as url:
        yield url


@contextmanager
def serving(
    argv: list[str],
    *,
    port: int,
    env: dict[str, str],
    ready: Callable[[str], object],
    cwd: Path = ROOT,
    log: Path | None = None,
) -> Iterator[str]:
    """Run ``python -m argv`` (listening on ``port``) until ``ready(url)`` returns; yield
    the URL; stop it with SIGTERM (SIGKILL after 30 s)."""
    out = open(log, "wb") if log is not None else subprocess.DEVNULL  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "-m", *argv], cwd=cwd, env=env, stdout=out, stderr=out
    )
    url = f"http://127.0.0.1:{port}"
    try:
        ready(url)
        yield url
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
        if log is not None:
            out.close()  # type: ignore[union-attr]


def wait_for_workers(url: str, workers: int, *, timeout: float = 60.0) -> set[str]:
    """Ask until ``workers`` different worker processes have answered; their pids."""
    deadline = time.monotonic() + timeout
    seen: set[str] = set()
    while len(seen) < workers:
        if time.monotonic() > deadline:
            raise TimeoutError(f"server at {url}: only {len(seen)} workers answered")
        try:
            answer = requests.get(
                f"{url}/api/conversations", headers={"X-User": "probe"}, timeout=10
            )
            seen.add(answer.headers["X-Worker-Pid"])
        except (requests.ConnectionError, requests.Timeout):
            time.sleep(0.1)  # still binding its socket, or opening its stores on a busy machine
    return seen
