"""Run llama.cpp's server on a local GGUF model for the lifetime of a ``with`` block.

:class:`LocalLlamaServer` serves a model through the optional extra
``agent-smith[local]`` (the ``xllamacpp`` wheel: llama.cpp's C++ server, no
compiling) on a free 127.0.0.1 port, with jinja chat templates on (needed for
tool calls), and gives back an endpoint for :class:`~agent_smith.LlmClient`::

    with LocalLlamaServer("model.gguf") as server:
        llm = LlmClient(server.endpoint)

Why a child process rather than ``xllamacpp.Server`` in this process (both
measured): the ``Server`` constructor loads the model while holding the GIL,
so every other thread of the caller froze for the whole load and no start
timeout could be enforced; its destructor sometimes never returned when the
server was stopped soon after starting ("waiting for main loop exit"); and
llama.cpp writes its log straight to file descriptor 2, which a library may
not redirect in its host process. A child (``sys.executable``, importing only
``xllamacpp``) loads without blocking us, can be killed when it overruns a
bound, exits by itself when our end of its stdin closes (even if we crash),
and its log goes to the ``agent_smith.llm.local_server`` logger. Closing releases the
port and every thread: the child's exit is the proof.
"""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import itertools
import json
import logging
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import requests

from .._internal.closing import Closeable
from .._internal.extras import install_hint
from ..errors import AgentTimeoutError, ConfigError, TransportError
from .llama_log import error_lines, read_stderr, read_stdout

log = logging.getLogger(__name__)

INSTALL_HINT = install_hint("local")
_OPERATION = "start llama.cpp server"
_STDERR_KEPT = 40
_counter = itertools.count(1)
#: Slots (requests served at once) of a LocalLlamaServer unless told otherwise.
DEFAULT_PARALLEL = 4
#: Context window of each slot, in tokens.
DEFAULT_CTX_SIZE = 8192
#: Tokens a reply may have when its request sets no ``max_tokens`` (llama.cpp's ``--n-predict``).
DEFAULT_MAX_TOKENS = 1024

# The child runs this in a fresh interpreter (see local_child.py).
_CHILD_ARGV = ("-c", "from agent_smith.llm.local_child import main; main()")


class LocalLlamaServer(Closeable):
    """llama.cpp's OpenAI-compatible server on ``model_path``, on 127.0.0.1.

    ``port`` None picks a free port. ``parallel`` is the number of slots,
    the requests served at once (default 4, so a batch or a web app with a
    few users is not queued behind one long reply); ``ctx_size`` is the
    context window of each slot in tokens (llama.cpp allocates
    ``ctx_size * parallel``). ``max_tokens`` caps every reply whose
    request sets no ``max_tokens`` of its own (default 1024; None: no cap,
    llama.cpp's own default, which lets a looping model generate until its
    window is full). ``threads`` None lets llama.cpp choose. ``api_key``
    makes the server require that bearer token. ``mmproj`` is the multimodal
    projector GGUF of a vision (or audio) model: with it the server takes
    images as OpenAI ``image_url`` parts (without it llama.cpp refuses them).
    ``options`` sets further ``xllamacpp.CommonParams`` fields by dotted name
    (``{"sampling.temp": 0.2, "n_gpu_layers": 0}``). ``start_timeout`` bounds
    loading plus the health check; ``stop_timeout`` bounds a graceful stop
    before the process is killed.

    Without ``xllamacpp`` installed, constructing one raises
    :class:`~agent_smith.ConfigError` saying how to install it.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        port: int | None = None,
        ctx_size: int = DEFAULT_CTX_SIZE,
        threads: int | None = None,
        parallel: int = DEFAULT_PARALLEL,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        api_key: str | None = None,
        mmproj: str | os.PathLike[str] | None = None,
        options: Mapping[str, Any] | None = None,
        start_timeout: float = 120.0,
        stop_timeout: float = 10.0,
    ) -> None:
        if not xllamacpp_available():
            raise ConfigError(f"running a local model needs llama.cpp's server: {INSTALL_HINT}")
        self._model = Path(model_path)
        if not self._model.is_file():
            raise ConfigError(f"no such model file: {self._model}")
        if port is not None and not 0 <= port <= 65535:
            raise ConfigError(f"port must be 0..65535, got {port}")
        if ctx_size <= 0 or parallel <= 0 or (threads is not None and threads <= 0):
            raise ConfigError("ctx_size, parallel and threads must be positive")
        if max_tokens is not None and max_tokens <= 0:
            raise ConfigError(f"max_tokens must be positive (or None: no cap), got {max_tokens}")
        if start_timeout <= 0 or stop_timeout <= 0:
            raise ConfigError("start_timeout and stop_timeout must be positive")
        options = dict(options or {})
        if mmproj is not None:
            if not Path(mmproj).is_file():
                raise ConfigError(f"no such multimodal projector file: {mmproj}")
            options["mmproj.path"] = os.fspath(mmproj)
        self._config: dict[str, Any] = {
            "model": str(self._model),
            "port": port or 0,
            "ctx_size": ctx_size,
            "threads": threads,
            "parallel": parallel,
            "max_tokens": max_tokens,
            "api_key": api_key,
            "options": options,
        }
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        self._number = next(_counter)
        self._process: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []
        self._handshake: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_KEPT)
        self._closing = threading.Event()
        self._endpoint: str | None = None

    @property
    def model_path(self) -> Path:
        return self._model

    @property
    def endpoint(self) -> str:
        """Base URL of the running server, e.g. ``http://127.0.0.1:41234``."""
        if self._endpoint is None:
            raise ConfigError("the local llama.cpp server is not running: call start() first")
        return self._endpoint

    @property
    def port(self) -> int:
        return int(self.endpoint.rsplit(":", 1)[1])

    def start(self) -> LocalLlamaServer:
        """Start the server and wait until ``/health`` answers OK; return self.

        Raises :class:`AgentTimeoutError` when not ready within
        ``start_timeout`` and :class:`TransportError` when llama.cpp refused
        to start (bad model file, port taken, ...), quoting its error line.
        """
        if self._process is not None:
            raise ConfigError("this LocalLlamaServer was already started")
        port = self._config["port"]
        if port:
            _check_port_free(port, self._model)
        deadline = time.monotonic() + self._start_timeout
        started = time.monotonic()
        log.info("starting llama.cpp server on %s", self._model)
        try:
            self._spawn()
            address = self._await_handshake(deadline)
            self._await_health(address, deadline)
        except BaseException:
            self.close()
            raise
        self._endpoint = address
        log.info(
            "llama.cpp server ready at %s in %.2f s (%s)",
            address,
            time.monotonic() - started,
            self._model.name,
        )
        return self

    def close(self) -> None:
        """Stop the server and wait for its process and our reader threads to end.

        Idempotent. Closing the child's stdin asks it to exit; past
        ``stop_timeout`` it is terminated, then killed.
        """
        self._closing.set()
        process, self._process = self._process, None
        self._endpoint = None
        if process is not None:
            _close_quietly(process.stdin)
            try:
                process.wait(self._stop_timeout)
            except subprocess.TimeoutExpired:
                log.warning("llama.cpp server did not stop in %g s; killing it", self._stop_timeout)
                process.terminate()
                try:
                    process.wait(5.0)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        if process is not None:
            _close_quietly(process.stdout)
            _close_quietly(process.stderr)
            log.info("llama.cpp server on %s stopped", self._model.name)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the server process to exit; True if it has.

        For a caller that serves until stopped (``agent-smith serve``): the
        server only exits by itself when it fails, and a Ctrl-C reaches the
        caller while it waits here. True at once when the server is not running.
        """
        process = self._process
        if process is None:
            return True
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def __enter__(self) -> LocalLlamaServer:
        return self.start()

    def __repr__(self) -> str:
        where = self._endpoint or "not running"
        return f"LocalLlamaServer({str(self._model)!r}, {where})"

    # -- internals ---------------------------------------------------------

    def _spawn(self) -> None:
        try:
            process = subprocess.Popen(
                [sys.executable, *_CHILD_ARGV],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                # Out of the terminal's process group: a Ctrl-C meant for the
                # caller (cancelling a reply in a REPL) must not kill the server.
                start_new_session=os.name == "posix",
            )
        except OSError as err:
            raise TransportError(
                f"cannot start the llama.cpp server process: {err}",
                operation=_OPERATION,
                endpoint_or_server=str(self._model),
            ) from err
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        self._threads = [
            threading.Thread(
                target=read_stdout,
                args=(process.stdout, self._handshake),
                name=f"agent_smith-llama-stdout-{self._number}",
                daemon=True,  # ends at the child's exit; joined in close()
            ),
            threading.Thread(
                target=read_stderr,
                args=(process.stderr, self._stderr_tail),
                name=f"agent_smith-llama-stderr-{self._number}",
                daemon=True,
            ),
        ]
        for thread in self._threads:
            thread.start()
        # The config goes over stdin, not argv, so an API key never shows in `ps`.
        # The pipe then stays open: its end-of-file is the child's signal to exit.
        try:
            process.stdin.write(json.dumps(self._config).encode() + b"\n")
            process.stdin.flush()
        except OSError as err:
            raise self._start_failed("the server process exited at once") from err

    def _await_handshake(self, deadline: float) -> str:
        try:
            reply = self._handshake.get(timeout=max(deadline - time.monotonic(), 0.0))
        except queue.Empty:
            raise self._too_slow() from None
        if reply is None:
            raise self._start_failed("the server process exited")
        if "error" in reply:
            raise self._start_failed(str(reply["error"]))
        return str(reply["address"])

    def _await_health(self, address: str, deadline: float) -> None:
        """Poll ``/health`` until 200: 503 means the model is still loading."""
        url = f"{address}/health"
        last = ""
        with requests.Session() as session:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._too_slow(last)
                try:
                    response = session.get(url, timeout=min(remaining, 5.0))
                except requests.RequestException as err:
                    last = f"{type(err).__name__}"
                else:
                    if response.status_code == 200:
                        return
                    last = f"HTTP {response.status_code} {response.text[:200]}"
                process = self._process
                if process is None or process.poll() is not None:
                    raise self._start_failed("the server process exited")
                # Waiting on the close event (not sleeping) lets close() cut this short.
                if self._closing.wait(min(0.1, max(remaining, 0.0))):
                    raise self._start_failed("closed while starting")

    def _start_failed(self, what: str) -> TransportError:
        self._settle()
        detail = error_lines(list(self._stderr_tail)) or what
        return TransportError(
            f"llama.cpp server on {self._model} failed to start: {detail}",
            operation=_OPERATION,
            endpoint_or_server=str(self._model),
        )

    def _settle(self) -> None:
        """Let a failing child finish writing its log, so the error can quote it."""
        process = self._process
        if process is None:
            return
        try:
            process.wait(2.0)
        except subprocess.TimeoutExpired:
            return  # still running: quote what arrived so far
        for thread in self._threads:
            if thread.name.startswith("agent_smith-llama-stderr"):
                thread.join(2.0)

    def _too_slow(self, last: str = "") -> AgentTimeoutError:
        suffix = f" (last health answer: {last})" if last else ""
        return AgentTimeoutError(
            f"llama.cpp server on {self._model} was not ready within "
            f"{self._start_timeout:g} s{suffix}",
            operation=_OPERATION,
            budget=self._start_timeout,
        )


def xllamacpp_available() -> bool:
    """Whether the optional ``xllamacpp`` wheel is installed (without importing it)."""
    return importlib.util.find_spec("xllamacpp") is not None


def _check_port_free(port: int, model: Path) -> None:
    """Refuse a taken port up front: some xllamacpp versions bind it regardless."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as err:
            raise TransportError(
                f"llama.cpp server on {model} failed to start: couldn't bind "
                f"127.0.0.1:{port} ({err.strerror or err})",
                operation=_OPERATION,
                endpoint_or_server=str(model),
            ) from err


def _close_quietly(stream: IO[bytes] | None) -> None:
    if stream is None:
        return
    # The child may already be gone; there is nothing left to flush then.
    with contextlib.suppress(OSError):
        stream.close()
