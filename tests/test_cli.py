"""The demo CLI's pieces: argument parsing, error lines, and the REPL's output."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from agent_smith import (
    AgentStopped,
    AssistantMessage,
    CancelledError,
    LlmApiError,
    TokenDelta,
    ToolCall,
    ToolMessage,
    TransportError,
    cli,
)
from agent_smith.cli import (
    DEFAULT_ENDPOINT,
    EXIT_OK,
    Fatal,
    Repl,
    describe_fatal,
    main,
    mcp_alias,
    parse_args,
)
from agent_smith.events import FinalAnswer, ToolCallRequested, ToolResultReady

ENDPOINT = "http://127.0.0.1:8080"

pytestmark = pytest.mark.usefixtures("no_thread_leak")


# --- arguments ---------------------------------------------------------------


def test_endpoint_and_key_default_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLAMA_SERVER_URL", "http://127.0.0.1:9999")
    monkeypatch.setenv("LLAMA_API_KEY", "sk-env")
    args = parse_args([])
    assert args.endpoint == "http://127.0.0.1:9999"
    assert args.api_key == "sk-env"


def test_endpoint_falls_back_to_the_local_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLAMA_SERVER_URL", raising=False)
    monkeypatch.delenv("LLAMA_API_KEY", raising=False)
    args = parse_args([])
    assert args.endpoint == DEFAULT_ENDPOINT == "http://127.0.0.1:8080"
    assert args.api_key is None
    assert args.model == ""
    assert not args.no_stream
    assert not args.no_default_mcp
    assert args.mcp == []
    assert args.skill == []
    assert args.sandbox == "."


def test_flags_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLAMA_SERVER_URL", "http://127.0.0.1:9999")
    monkeypatch.setenv("LLAMA_API_KEY", "sk-env")
    args = parse_args(
        ["-e", "http://127.0.0.1:1234", "-k", "sk-flag", "-m", "qwen", "--no-stream", "-vv"]
    )
    assert (args.endpoint, args.api_key, args.model) == ("http://127.0.0.1:1234", "sk-flag", "qwen")
    assert args.no_stream
    assert args.verbose == 2


def test_mcp_and_skill_repeat_and_mcp_is_shell_split() -> None:
    args = parse_args(
        [
            "--mcp",
            "python server.py --name 'my server'",
            "--mcp",
            "npx -y @modelcontextprotocol/server-everything",
            "--skill",
            "a",
            "--skill",
            "b",
            "--no-default-mcp",
        ]
    )
    assert args.mcp == [
        ("python", "server.py", "--name", "my server"),
        ("npx", "-y", "@modelcontextprotocol/server-everything"),
    ]
    assert args.skill == ["a", "b"]
    assert args.no_default_mcp


@pytest.mark.parametrize(
    "argv",
    [
        ["--mcp", "python 'unclosed"],
        ["--mcp", "   "],
        ["--local", "-e", ENDPOINT],
        ["--local", "--serve-model", "m.gguf"],
        ["--no-such-flag"],
    ],
)
def test_bad_arguments_exit_with_status_2_and_one_message(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        parse_args(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "agent-smith: error:" in err
    assert "Traceback" not in err


def test_local_mode_leaves_the_endpoint_to_the_local_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LLAMA_SERVER_URL", "http://127.0.0.1:9999")
    assert parse_args(["--local"]).endpoint is None
    assert parse_args(["--serve-model", "m.gguf"]).endpoint is None


def test_help_names_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        parse_args(["--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    for option in (
        "--endpoint",
        "--api-key",
        "--model",
        "--no-stream",
        "--mcp",
        "--no-default-mcp",
        "--skill",
        "--sandbox",
        "--serve-model",
        "--local",
        "--verbose",
    ):
        assert option in out


@pytest.mark.parametrize(
    ("command", "alias"),
    [
        (("python", "examples/my_server.py"), "my_server"),
        (("npx", "-y", "@modelcontextprotocol/server-everything"), "server_everything"),
        (("uvx", "mcp-server-time", "--local-timezone"), "mcp_server_time"),
        (("./srv",), "srv"),
        (("---",), "mcp"),
    ],
)
def test_mcp_alias_comes_from_the_server_name(command: tuple[str, ...], alias: str) -> None:
    assert mcp_alias(command, set()) == alias


def test_mcp_alias_is_unique() -> None:
    taken = {"demo"}
    assert mcp_alias(("python", "demo.py"), taken) == "demo2"
    assert mcp_alias(("python", "demo.py"), taken) == "demo3"


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
        self.prompts: list[str] = []
        self.cancelled = 0

    def stream(self, text: str) -> Iterator[Any]:
        self.prompts.append(text)
        turn = self.turns.pop(0)
        if isinstance(turn, BaseException):
            raise turn
        yield from turn

    def cancel(self) -> None:
        self.cancelled += 1


def _repl(agent: _FakeAgent, lines: str) -> tuple[Repl, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    repl = Repl(
        agent,  # type: ignore[arg-type]
        endpoint=ENDPOINT,
        stdin=io.StringIO(lines),
        stdout=out,
        stderr=err,
        interactive=False,
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


def test_repl_prints_the_final_answer_when_nothing_streamed() -> None:
    agent = _FakeAgent([FinalAnswer(AssistantMessage("Whole answer."))])
    repl, out, _ = _repl(agent, "hi\n")
    assert repl.run() == EXIT_OK  # end of input quits like Ctrl-D
    assert out.getvalue() == "Whole answer.\n"


def test_repl_marks_failed_tools_and_keeps_status_lines_on_one_line() -> None:
    call = ToolCall("c", "read_local_file", {"path": "../x"})
    failed = ToolMessage("c", "read_local_file", "refused\nsecond line", is_error=True)
    agent = _FakeAgent([ToolCallRequested(call), ToolResultReady(failed)])
    repl, _, err = _repl(agent, "read ../x\n")
    repl.run()
    assert err.getvalue().splitlines()[-1] == "[tool] read_local_file failed: refused second line"


def test_repl_shows_only_the_message_of_an_error_payload() -> None:
    call = ToolCall("c", "calculator", {"expression": "1/0"})
    content = '{"error": true, "message": "tool \'calculator\' failed: division by zero"}'
    failed = ToolMessage("c", "calculator", content, is_error=True)
    agent = _FakeAgent([ToolCallRequested(call), ToolResultReady(failed)])
    repl, _, err = _repl(agent, "1/0?\n")
    repl.run()
    assert err.getvalue().splitlines()[-1] == "[tool] calculator failed: division by zero"


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
    assert "/exit" in err.getvalue()


# --- the local llama.cpp server ----------------------------------------------


@pytest.mark.parametrize("flag", [["--local"], ["--serve-model", "model.gguf"]])
def test_local_modes_without_xllamacpp_say_how_to_install_it(
    flag: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "xllamacpp_available", lambda: False)
    fetched: list[object] = []
    monkeypatch.setattr(cli, "ensure_default_model", lambda **kw: fetched.append(kw))
    assert main([*flag, "--no-default-mcp"]) == 1
    assert capsys.readouterr().err == (
        "agent-smith: error: --local and --serve-model need llama.cpp's server: "
        "pip install 'agent-smith[local]'\n"
    )
    assert fetched == []  # nothing downloaded for a server that cannot run


def test_serve_model_names_a_missing_model_file(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "xllamacpp_available", lambda: True)
    missing = tmp_path / "missing.gguf"
    assert main(["--serve-model", str(missing), "--no-default-mcp"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"agent-smith: error: no such model file: {missing}"
    assert "Traceback" not in "".join(err)
