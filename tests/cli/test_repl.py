"""The demo REPL: which errors end it, and what it writes for each event of a turn."""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import (
    AgentStopped,
    ApprovalRequest,
    AssistantMessage,
    CancelledError,
    ImagePart,
    LlmApiError,
    ServerToolUsed,
    TextPart,
    TokenDelta,
    ToolCall,
    ToolMessage,
    TransportError,
    UserMessage,
)
from agent_smith.agent.events import FinalAnswer, TextHeld, ToolCallRequested, ToolResultReady
from agent_smith.cli.approval import TerminalApprovals
from agent_smith.cli.repl import EXIT_OK, Fatal, Repl, describe_fatal
from agent_smith.cli.url_elicitation import TerminalElicitation
from tests.support.media import PNG

ENDPOINT = "http://127.0.0.1:8080"

pytestmark = pytest.mark.usefixtures("no_thread_leak")


# --- error lines -------------------------------------------------------------


def test_unreachable_server_is_fatal_and_says_what_to_do() -> None:
    err = TransportError(
        "cannot reach LLM server http://127.0.0.1:1/v1/chat/completions: connection refused",
        operation="LLM request",
        endpoint_or_server="http://127.0.0.1:1/v1/chat/completions",
    )
    line = describe_fatal(err, "http://127.0.0.1:1")
    assert line is not None
    assert "cannot reach" in line and "--endpoint" in line
    assert "\n" not in line


@pytest.mark.parametrize("status", [401, 403])
def test_refused_credentials_are_fatal_and_name_the_key_options(status: int) -> None:
    err = LlmApiError("denied", http_status=status, body_excerpt='{"error": "bad key"}')
    line = describe_fatal(err, ENDPOINT)
    assert line is not None
    assert f"HTTP {status}" in line and "--api-key" in line and "LLAMA_API_KEY" in line


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, '{"error":{"code":500,"message":"tools param requires --jinja flag"}}'),
        (400, '{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}'),
        (400, '{"message":"\\"auto\\" tool choice requires --enable-auto-tool-choice"}'),
    ],
)
def test_a_server_without_tool_support_is_fatal_and_mentions_jinja(status: int, body: str) -> None:
    err = LlmApiError("LLM server answered", http_status=status, body_excerpt=body)
    line = describe_fatal(err, ENDPOINT)
    assert line is not None
    assert "does not accept tool calls" in line and "--jinja" in line
    assert "\n" not in line


def test_other_errors_are_reported_and_the_repl_goes_on() -> None:
    assert describe_fatal(LlmApiError("busy", http_status=503), ENDPOINT) is None
    assert describe_fatal(LlmApiError("too long", http_status=400), ENDPOINT) is None
    assert describe_fatal(AgentStopped("stop", condition="max_iterations"), ENDPOINT) is None


def test_a_404_says_to_check_the_endpoint() -> None:
    line = describe_fatal(LlmApiError("not found", http_status=404), ENDPOINT)
    assert line is not None and "--endpoint" in line


# --- the REPL, with a stand-in agent -----------------------------------------


class _FakeAgent:
    """Plays back a list of events (or raises) per turn; records cancel()."""

    def __init__(self, *turns: list[Any] | BaseException) -> None:
        self.turns = list(turns)
        self.prompts: list[Any] = []
        self.cancelled = 0

    def stream(self, text: Any) -> Iterator[Any]:
        self.prompts.append(text)
        turn = self.turns.pop(0)
        if isinstance(turn, BaseException):
            raise turn
        for event in turn:
            if callable(event):  # something the turn does in its own thread, e.g. log
                event()
            else:
                yield event

    def cancel(self) -> None:
        self.cancelled += 1


def _repl(
    agent: _FakeAgent,
    lines: str,
    *,
    approvals: TerminalApprovals | None = None,
    prepare: Callable[[str], str] | None = None,
    err: io.StringIO | None = None,
    live_status: bool | None = None,
) -> tuple[Repl, io.StringIO, io.StringIO]:
    """A REPL reading ``lines``; ``live_status=True`` draws its working line on ``err``."""
    out = io.StringIO()
    err = io.StringIO() if err is None else err
    repl = Repl(
        agent,  # type: ignore[arg-type]
        endpoint=ENDPOINT,
        stdin=io.StringIO(lines),
        stdout=out,
        stderr=err,
        interactive=False,
        approvals=approvals,
        prepare=prepare,
        live_status=live_status,
    )
    return repl, out, err


def _tool_turn() -> list[Any]:
    call = ToolCall("call_0", "calculator", {"expression": "2+3"})
    answer = AssistantMessage("It is 5.")
    return [
        ToolCallRequested(call),
        ToolResultReady(ToolMessage("call_0", "calculator", "5")),
        TokenDelta("It is"),
        TokenDelta(" 5."),
        FinalAnswer(answer),
    ]


def test_repl_streams_tokens_to_stdout_and_tool_lines_to_stderr() -> None:
    agent = _FakeAgent(_tool_turn())
    repl, out, err = _repl(agent, "what is 2+3?\n/exit\nnot read\n")
    assert repl.run() == EXIT_OK
    assert agent.prompts == ["what is 2+3?"]
    assert out.getvalue() == "It is 5.\n"
    assert err.getvalue().splitlines() == [
        '[tool] calculator {"expression": "2+3"}',
        "[tool] calculator -> 5",
    ]


def test_repl_shows_a_tool_the_provider_ran_as_a_server_tool_line() -> None:
    used = ServerToolUsed("web_search", "srvtoolu_1", {"query": "café"}, ({"url": "x"},))
    # A stream shows what the provider ran at the reply's end, after its text.
    agent = _FakeAgent([TokenDelta("Found."), used, FinalAnswer(AssistantMessage("Found."))])
    repl, out, err = _repl(agent, "search\n")
    assert repl.run() == EXIT_OK
    assert err.getvalue().splitlines() == ['[server tool] web_search {"query": "café"}']
    assert out.getvalue() == "Found.\n"


def test_repl_prints_the_final_answer_when_nothing_streamed() -> None:
    agent = _FakeAgent([FinalAnswer(AssistantMessage("Whole answer."))])
    repl, out, _ = _repl(agent, "hi\n")
    assert repl.run() == EXIT_OK  # end of input quits like Ctrl-D
    assert out.getvalue() == "Whole answer.\n"


@pytest.mark.parametrize(
    ("tool", "content", "shown"),
    [
        ("read_local_file", "refused\nsecond line", "refused second line"),
        (
            "calculator",
            '{"error": true, "message": "tool \'calculator\' failed: division by zero"}',
            "division by zero",
        ),
    ],
    ids=["kept-on-one-line", "only-the-message-of-an-error-payload"],
)
def test_repl_shows_a_failed_tool_in_one_line_with_only_its_message(
    tool: str, content: str, shown: str
) -> None:
    failed = ToolMessage("c", tool, content, is_error=True)
    agent = _FakeAgent([ToolCallRequested(ToolCall("c", tool, {})), ToolResultReady(failed)])
    repl, _, err = _repl(agent, "go\n")
    repl.run()
    assert err.getvalue().splitlines()[-1] == f"[tool] {tool} failed: {shown}"


def test_repl_ends_a_half_written_reply_before_a_status_line() -> None:
    call = ToolCall("c", "calculator", {"expression": "1"})
    agent = _FakeAgent([TokenDelta("Let me check."), ToolCallRequested(call)])
    repl, out, _ = _repl(agent, "go\n")
    repl.run()
    assert out.getvalue() == "Let me check.\n"


def test_repl_reports_a_turn_error_in_one_line_and_continues() -> None:
    stopped = AgentStopped("agent 'agent' stopped after 16 iterations", condition="max_iterations")
    agent = _FakeAgent(stopped, [TokenDelta("ok"), FinalAnswer(AssistantMessage("ok"))])
    repl, out, err = _repl(agent, "first\nsecond\n")
    assert repl.run() == EXIT_OK
    assert err.getvalue() == "agent-smith: error: agent 'agent' stopped after 16 iterations\n"
    assert out.getvalue() == "ok\n"


def test_repl_says_when_a_reply_was_cancelled() -> None:
    agent = _FakeAgent(CancelledError("agent turn was cancelled", operation="agent turn"), [])
    repl, _, err = _repl(agent, "one\ntwo\n")
    assert repl.run() == EXIT_OK
    assert err.getvalue() == "(reply cancelled)\n"
    assert agent.prompts == ["one", "two"]


def test_repl_raises_fatal_for_an_unusable_server() -> None:
    agent = _FakeAgent(LlmApiError("nope", http_status=401))
    repl, _, _ = _repl(agent, "hi\nnever read\n")
    with pytest.raises(Fatal, match="HTTP 401"):
        repl.run()


def test_repl_skips_blank_lines_and_knows_quit_and_help() -> None:
    agent = _FakeAgent()
    repl, out, err = _repl(agent, "\n   \n/help\n/quit\n")
    assert repl.run() == EXIT_OK
    assert agent.prompts == []
    assert out.getvalue() == ""
    listed = [line.split()[0] for line in err.getvalue().splitlines()]
    assert listed == ["/help", "/clear", "/history", "/tools", "/stats", "/image", "/exit"]


def test_repl_answers_an_unknown_command_itself_but_sends_a_path_to_the_model() -> None:
    agent = _FakeAgent([TokenDelta("ok")])
    repl, _, err = _repl(agent, "/frobnicate\n/etc/hosts: what is in it?\n")
    assert repl.run() == EXIT_OK
    assert err.getvalue() == "unknown command /frobnicate; /help lists the commands\n"
    assert agent.prompts == ["/etc/hosts: what is in it?"]


class _Watched(io.StringIO):
    """A stderr that tells when the working line was drawn."""

    def __init__(self) -> None:
        super().__init__()
        self.drawn = threading.Event()

    def write(self, text: str) -> int:
        if "reading the prompt…" in text:
            self.drawn.set()
        return super().write(text)


def test_repl_shows_the_model_working_while_nothing_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_smith.cli import repl as repl_module

    monkeypatch.setattr(repl_module, "PUMP_SECONDS", 0.01)
    err = _Watched()
    # The model thinks (nothing shown) until the working line was drawn, then writes.
    agent = _FakeAgent([lambda: err.drawn.wait(10.0), TokenDelta("Done.")])
    repl, out, _ = _repl(agent, "think\n", err=err, live_status=True)
    assert repl.run() == EXIT_OK
    assert err.drawn.is_set()
    assert out.getvalue() == "Done.\n"
    # Drawn in place and wiped before the reply, so the terminal keeps only the answer.
    assert err.getvalue().startswith("\r\x1b[Kreading the prompt… ")
    assert err.getvalue().endswith("(Ctrl-C cancels)\r\x1b[K")


_RETRY = "cannot reach LLM server %s: Connection refused; retry %d/%d in %.2f s"
_URL = "http://127.0.0.1:1/v1/chat/completions"


def _retrying_turn() -> list[Any]:
    """A turn whose LLM client logs a retry (as LlmClient does) before the reply streams."""
    client_log = logging.getLogger("agent_smith.llm.client")
    return [
        lambda: client_log.warning(_RETRY, _URL, 1, 3, 0.5),
        lambda: client_log.info("not a warning: not shown"),
        TokenDelta("Hi."),
    ]


def test_repl_leaves_the_llm_clients_retries_to_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = _FakeAgent(_retrying_turn())
    repl, out, err = _repl(agent, "hi\n")
    with caplog.at_level(logging.WARNING, logger="agent_smith.llm"):
        assert repl.run() == EXIT_OK
    assert err.getvalue() == ""  # nothing between the lines of the conversation
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot reach LLM server {_URL}: Connection refused; retry 1/3 in 0.50 s"
    ]
    assert out.getvalue() == "Hi.\n"


# --- approvals -----------------------------------------------------------------


def _approval_turn(approvals: TerminalApprovals, decisions: list[Any]) -> list[Any]:
    """A turn whose agent asks the bound approver (in the turn's thread), then reports."""
    call = ToolCall("call_0", "write_local_file", {"path": "a.txt", "content": "hi"})
    request = ApprovalRequest(call, "Write a file.")
    denial = '{"error":true,"denied":true,"message":"denied: the user said no"}'
    return [
        ToolCallRequested(call),
        lambda: decisions.append(approvals(request)),  # blocks until the main thread answers
        ToolResultReady(ToolMessage("call_0", "write_local_file", denial, is_error=True)),
        FinalAnswer(AssistantMessage("Not written.")),
    ]


@pytest.mark.parametrize(("reply", "approved"), [("y", True), ("n", False)])
def test_repl_asks_y_n_on_the_main_thread_and_shows_a_denial(
    monkeypatch: pytest.MonkeyPatch, reply: str, approved: bool
) -> None:
    asked: list[tuple[str, str]] = []

    def fake_input(prompt: str) -> str:
        asked.append((threading.current_thread().name, prompt))
        return reply

    monkeypatch.setattr("builtins.input", fake_input)
    approvals = TerminalApprovals(assume_yes=False, interactive=True)
    decisions: list[Any] = []
    agent = _FakeAgent(_approval_turn(approvals, decisions))
    repl, out, err = _repl(agent, "write it\n", approvals=approvals)

    assert repl.run() == EXIT_OK

    assert asked == [
        (
            threading.current_thread().name,
            '[approve] write_local_file {"path": "a.txt", "content": "hi"}? [y/N] ',
        )
    ]
    assert [d.approved for d in decisions] == [approved]
    assert err.getvalue().splitlines()[-1] == "[tool] write_local_file denied: the user said no"
    assert out.getvalue() == "Not written.\n"


def test_repl_asks_about_an_mcp_servers_page_on_the_main_thread_and_opens_it_on_yes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[tuple[str, str]] = []
    replies = iter(["y", "y"])

    def fake_input(prompt: str) -> str:
        asked.append((threading.current_thread().name, prompt))
        return next(replies)

    monkeypatch.setattr("builtins.input", fake_input)
    opened: list[str] = []
    approvals = TerminalApprovals(assume_yes=False, interactive=True)
    handler = TerminalElicitation(approvals, opener=lambda url: opened.append(url) or True)
    url = "https://example.com/sign-in?session=42"
    params = {"mode": "url", "message": "Sign in.", "url": url, "elicitationId": "e1"}
    answers: list[Any] = []
    call = ToolCall("call_0", "mcp_demo__visit", {})
    agent = _FakeAgent(
        [
            ToolCallRequested(call),
            # The MCP client's thread asks the handler and blocks until the main thread answers.
            lambda: answers.append(handler.handler("demo")(params)),
            ToolResultReady(ToolMessage("call_0", "mcp_demo__visit", "signed in")),
            FinalAnswer(AssistantMessage("You are signed in.")),
        ]
    )
    repl, out, err = _repl(agent, "sign me in\n", approvals=approvals)

    assert repl.run() == EXIT_OK

    main = threading.current_thread().name
    assert asked == [
        (main, f"  {url}\nOpen it in your browser? [y/N] "),
        (main, "Done on that page? [y/N] "),
    ]
    assert opened == [url]
    assert answers == [{"action": "accept"}]
    assert err.getvalue().splitlines()[1:4] == [
        "[mcp demo] asks you to visit a page: Sign in.",
        "[mcp demo] accepted",
        "[tool] mcp_demo__visit -> signed in",
    ]
    assert out.getvalue() == "You are signed in.\n"


def test_repl_sends_each_line_as_prepare_makes_it() -> None:
    agent = _FakeAgent([FinalAnswer(AssistantMessage("a"))], [FinalAnswer(AssistantMessage("b"))])
    repl, _, _ = _repl(agent, "one\ntwo\n", prepare=str.upper)
    assert repl.run() == EXIT_OK
    assert agent.prompts == ["ONE", "TWO"]


def test_repl_attaches_an_image_to_the_next_line_sent(tmp_path: Path) -> None:
    (tmp_path / "red.png").write_bytes(PNG)
    agent = _FakeAgent([FinalAnswer(AssistantMessage("A red square."))])
    repl, _, err = _repl(agent, f"/image {tmp_path / 'red.png'}\nWhat is it?\n")
    assert repl.run() == EXIT_OK
    assert err.getvalue().startswith("attached image (image/png, ")
    image = ImagePart("image/png", PNG, name="red.png")
    assert agent.prompts == [UserMessage((TextPart("What is it?"), image))]


def test_repl_sends_an_image_with_the_question_after_its_path_at_once(tmp_path: Path) -> None:
    (tmp_path / "my photo.png").write_bytes(PNG)
    agent = _FakeAgent([FinalAnswer(AssistantMessage("a"))], [FinalAnswer(AssistantMessage("b"))])
    repl, _, _ = _repl(agent, f"/image '{tmp_path / 'my photo.png'}' What is it?\nAnd now?\n")
    assert repl.run() == EXIT_OK
    photo = ImagePart("image/png", PNG, name="my photo.png")
    assert agent.prompts == [UserMessage((TextPart("What is it?"), photo)), "And now?"]  # once


def test_repl_names_the_image_a_tool_returned_in_its_status_line() -> None:
    image = ImagePart("image/png", PNG)
    result = ToolMessage("call_0", "chart", (TextPart("the chart"), image))
    agent = _FakeAgent([ToolResultReady(result), FinalAnswer(AssistantMessage("Here."))])
    repl, _, err = _repl(agent, "Draw it\n")
    assert repl.run() == EXIT_OK
    assert f"[tool] chart -> the chart [image (image/png, {len(PNG)} bytes)]" in err.getvalue()


def test_repl_says_why_a_file_cannot_be_attached_and_sends_nothing(tmp_path: Path) -> None:
    agent = _FakeAgent()
    repl, _, err = _repl(agent, f"/image {tmp_path / 'absent.png'}\n/image\n")
    assert repl.run() == EXIT_OK
    first, second = err.getvalue().splitlines()
    assert first.startswith("/image: cannot read") and "absent.png" in first
    assert second.startswith("usage: /image PATH [question]")
    assert agent.prompts == []


class _Lines(io.StringIO):
    """A stderr that signals each time a given text is written."""

    def __init__(self) -> None:
        super().__init__()
        self._written = threading.Condition()

    def write(self, text: str) -> int:
        with self._written:
            count = super().write(text)
            self._written.notify_all()
        return count

    def wait_for(self, text: str) -> None:
        with self._written:
            assert self._written.wait_for(lambda: text in self.getvalue(), timeout=10.0), text


def test_the_working_line_moves_with_every_held_token_and_says_a_call_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_smith.cli import repl as repl_module

    monkeypatch.setattr(repl_module, "PUMP_SECONDS", 0.01)
    err = _Lines()
    agent = _FakeAgent(
        [
            TextHeld(12),
            lambda: err.wait_for("writing a tool call… 0 s, 1 tokens"),
            TextHeld(9),
            lambda: err.wait_for("writing a tool call… 0 s, 2 tokens"),
            TokenDelta("391"),
        ]
    )
    repl, out, _ = _repl(agent, "What is 17 times 23?\n", err=err, live_status=True)
    assert repl.run() == EXIT_OK
    assert out.getvalue() == "391\n"  # the call's text never, the answer on a line of its own
