"""The benchmarks' LLM: the scripted server of tests/support/llm_server.py, answering at once.

A benchmark that measures its own process runs the server in another one, so
the server does not take the measured GIL: the script has a hidden serve mode
that calls :func:`serve`, and the measuring side runs that mode with
:func:`start` and ends it with :func:`stop`. Where the server's CPU does not
matter it runs in-process: :func:`instant_server`.

Every benchmark script puts the repository root on ``sys.path`` before it
imports this module (``tests.support`` is imported from there).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.llm_server import Responder, ScriptedLlmServer

ROOT = Path(__file__).resolve().parents[1]


def instant_server(responder: Responder | None = None) -> ScriptedLlmServer:
    """A scripted server (``echo_tools_responder`` without ``responder``) with Nagle off.

    http.server writes headers and body separately; with Nagle on, the
    client's delayed ACK adds ~40 ms to every reply. An instant server must
    not do that (llama-server sets TCP_NODELAY too).
    """
    from tests.support import llm_server

    llm_server._Handler.disable_nagle_algorithm = True
    return llm_server.ScriptedLlmServer(responder or llm_server.echo_tools_responder)


def serve(responder: Responder) -> None:
    """Server process: print the URL, answer every request until stdin closes."""
    with instant_server(responder) as server:
        print(server.url, flush=True)
        sys.stdin.read()


def start(*args: str) -> tuple[subprocess.Popen[str], str]:
    """Run ``python *args`` (a script's serve mode); the process and the URL it printed."""
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url:
        raise SystemExit("the benchmark server did not start")
    return proc, url


def stop(proc: subprocess.Popen[str]) -> None:
    """End a server process :func:`start` began: close its stdin, reap it."""
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(10)
