"""The read-eval-print loop of ``agent-smith``: lines in, agent turns out.

Each line is one agent turn (sent as ``prepare`` makes it, if given: the
demo's :func:`~agent_smith.cli.file_mentions.mention_files`), run on its own
thread so that Ctrl-C reaches the main thread while it waits, never in the
middle of the agent's own locking.
The main thread alone writes: reply tokens to stdout, tool calls and tool
results as one-line status messages on stderr (so stdout holds only the
answers). The LLM client's retry warnings go to the log (shown with ``-v``),
not between the lines of a conversation. It also asks the ``y/N`` questions
of calls that need approval (:mod:`~agent_smith.cli.approval`) and of MCP
servers' URL requests (:mod:`~agent_smith.cli.url_elicitation`), which reach
it through the same queue as the turn's events.

Keys: ``/exit`` or Ctrl-D quits; Ctrl-C during a reply cancels that reply
(``agent.cancel()``) and returns to the prompt, a second one quits (:class:`Quit`);
Ctrl-C at the prompt discards the line. ``/help``, ``/clear``, ``/history`` and
``/tools`` are answered here (:mod:`~agent_smith.cli.commands`). ``/image PATH``
attaches an image (or a PDF, a text file, audio) to the next line sent;
``/image PATH question`` sends it with the question at once. On a terminal,
while the model works and nothing is being written, one status line on stderr
says for how long, with its tokens so far and tokens/s
(:mod:`~agent_smith.cli.activity`). A turn error that makes chatting
pointless (server unreachable, credentials refused, no tool support) ends the
loop with :class:`Fatal`; any other is reported in one line and the loop goes on.
"""

from __future__ import annotations

import json
import queue
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from ..agent.events import FinalAnswer, ToolCallRequested, ToolResultReady
from ..base.parts import Content, MediaPart, as_parts
from ..errors import AgentSmithError, CancelledError, ConfigError, LlmApiError, TransportError
from ..llm.events import ServerToolUsed, TokenDelta
from ..messages import UserMessage
from .activity import Activity
from .approval import TerminalApprovals, TerminalQuestion, is_denial
from .commands import (
    EXIT_COMMANDS,
    IMAGE_COMMAND,
    described_text,
    is_command,
    one_line,
    run_command,
)
from .file_mentions import attachment

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from ..metrics import MetricsCollector

#: How long the REPL waits for a turn's next event before checking the turn is alive.
PUMP_SECONDS = 1.0
#: Longest tool status line written to stderr.
STATUS_WIDTH = 160
#: Longest error line (these carry a URL and a cause worth keeping whole).
NOTICE_WIDTH = 400
#: Exit statuses of ``agent-smith`` (2 is argparse's for bad options).
EXIT_OK, EXIT_FATAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class Fatal(Exception):
    """A problem that ends the program with one error line (status 1)."""


class Quit(Exception):
    """The user pressed Ctrl-C again while a reply was being cancelled (status 130)."""


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
                f"{one_line(err.body_excerpt or str(err), 120)}); llama-server needs --jinja "
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
        approvals: TerminalApprovals | None = None,
        prepare: Callable[[str], Content] | None = None,
        live_status: bool | None = None,
        metrics: MetricsCollector | None = None,
    ) -> None:
        self.agent = agent
        self.metrics = metrics  # what /stats reads
        self._prepare = prepare  # what the model is sent for a typed line (default: the line)
        self._attached: list[MediaPart] = []  # /image files waiting for the next line
        self.approvals = approvals
        self.endpoint = endpoint
        self._in, self._out, self._err = stdin, stdout, stderr
        self._interactive = interactive
        self._turns = 0
        self._line_open = False  # stdout has text not yet ended by a newline
        self._streamed = False  # tokens of the current LLM reply were printed
        # The redrawn status line needs a terminal (default: when interactive).
        self._live_status = interactive if live_status is None else live_status
        self._activity: Activity | None = None  # of the turn running
        self._status_drawn = False
        self._drawn_at = 0.0  # when the working line was last drawn (monotonic)

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
                if text.lower() in EXIT_COMMANDS:
                    return EXIT_OK
                if text.split(maxsplit=1)[:1] == [IMAGE_COMMAND]:
                    self._attach(text.removeprefix(IMAGE_COMMAND).strip())
                elif is_command(text):
                    run_command(
                        text, self.agent, self._err, width=STATUS_WIDTH, metrics=self.metrics
                    )
                elif text:
                    self.turn(text)
            except KeyboardInterrupt:
                # Outside a reply (at the prompt): discard the line, like any shell.
                self._end_line()
                self._err.write("\n")
                self._err.flush()

    def _attach(self, argument: str) -> None:
        """``/image PATH [question]``: attach the file; with a question, send both now."""
        try:
            words = shlex.split(argument)
        except ValueError as err:
            self._status(f"{IMAGE_COMMAND}: {err}")
            return
        if not words:
            self._status(f"usage: {IMAGE_COMMAND} PATH [question] (quote a path with spaces)")
            return
        try:
            part = attachment(words[0])
        except ConfigError as err:
            self._status(f"{IMAGE_COMMAND}: {err}")
            return
        self._attached.append(part)
        question = " ".join(words[1:])
        if question:
            self.turn(question)
        else:
            self._status(f"attached {part.describe()}: it goes with your next message")

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
        attached, self._attached = tuple(self._attached), []
        worker = threading.Thread(
            target=self._produce,
            args=(text, attached, events),
            name=f"agent_smith-cli-turn-{self._turns}",
            daemon=True,  # only abandoned if the user insists on quitting mid-cancel
        )
        if self.approvals is not None:
            self.approvals.bind(events.put)
        try:
            worker.start()
            self._streamed = False
            self._activity = Activity()
            done = self._await(events, worker)
            worker.join()
        finally:
            self._activity = None
            self._clear_status()
            if self.approvals is not None:
                self.approvals.bind(None)
        self._end_line()
        if done.error is not None:
            self._report(done.error)

    def _await(self, events: queue.Queue[object], worker: threading.Thread) -> _Done:
        """Show the turn's events until it is over; the first Ctrl-C cancels it."""
        cancelling = False
        while True:
            try:
                done = self._pump(events, worker)
                if done is not None:
                    return done
            except KeyboardInterrupt:
                if cancelling:
                    raise Quit from None  # a second Ctrl-C while cancelling
                cancelling = True
                self._status("cancelling the reply (Ctrl-C again to quit)")
                self.agent.cancel()

    def _pump(self, events: queue.Queue[object], worker: threading.Thread) -> _Done | None:
        """Show the next event; the turn's outcome once it is over, else None."""
        try:
            # The bound only matters if a Ctrl-C swallowed the final _Done:
            # then the worker is gone and nothing more will come.
            event = events.get(timeout=PUMP_SECONDS)
        except queue.Empty:
            if worker.is_alive() or not events.empty():
                self._draw_status()
                return None
            return _Done()
        if isinstance(event, _Done):
            return event
        if self._activity is not None:
            self._activity.see(event)
        self._show(event)
        if time.monotonic() - self._drawn_at >= PUMP_SECONDS:
            self._draw_status()  # events that show nothing (reasoning) come thick and fast
        return None

    def _produce(
        self, text: str, attached: tuple[MediaPart, ...], events: queue.Queue[object]
    ) -> None:
        error: BaseException | None = None
        try:
            message = self._prepare(text) if self._prepare is not None else text
            if attached:
                message = (*as_parts([message] if isinstance(message, str) else message), *attached)
            request = message if isinstance(message, str) else UserMessage(message)
            for event in self.agent.stream(request):
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
        elif isinstance(event, ServerToolUsed):  # ran on the provider's side, not here
            args = json.dumps(event.arguments, ensure_ascii=False)
            self._status(f"[server tool] {event.name} {args}")
        elif isinstance(event, TerminalQuestion):
            self._clear_status()
            self._end_line()
            event.ask(status=self._status, read=input)
        elif isinstance(event, ToolResultReady):
            message = event.message
            if message.is_error and is_denial(message.text):
                self._status(f"[tool] {message.name} {_error_text(message.text)}")
            elif message.is_error:
                text = _error_text(message.text)
                text = text.removeprefix(f"tool {message.name!r} failed: ")  # said already
                self._status(f"[tool] {message.name} failed: {text}")
            else:
                self._status(f"[tool] {message.name} -> {described_text(message)}")
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
        self._err.write(f"agent-smith: error: {one_line(str(error), NOTICE_WIDTH)}\n")
        self._err.flush()

    def _draw_status(self) -> None:
        """Redraw the working line, unless a reply's line is open on the same terminal."""
        if self._live_status and self._activity is not None and not self._line_open:
            self._err.write(f"\r\x1b[K{self._activity.line()}")
            self._err.flush()
            self._status_drawn = True
            self._drawn_at = time.monotonic()

    def _clear_status(self) -> None:
        if self._status_drawn:
            self._err.write("\r\x1b[K")
            self._err.flush()
            self._status_drawn = False

    def _write(self, text: str) -> None:
        if not text:
            return
        self._clear_status()
        self._out.write(text)
        self._out.flush()
        self._line_open = not text.endswith("\n")

    def _end_line(self) -> None:
        if self._line_open:
            self._out.write("\n")
            self._out.flush()
            self._line_open = False

    def _status(self, text: str) -> None:
        self._clear_status()
        self._end_line()  # keep a status line off the end of a half-written reply
        self._err.write(one_line(text, STATUS_WIDTH) + "\n")
        self._err.flush()
