"""The demo CLI's setup: argument parsing, MCP aliases, and the local-server modes."""

from __future__ import annotations

from typing import Any

import pytest

from agent_smith.cli import local as cli_local
from agent_smith.cli.main import DEFAULT_ENDPOINT, main, mcp_alias, parse_args
from tests.support.local_llama import require_xllamacpp

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


def test_local_takes_an_optional_model_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["--local"]).local == "qwen"
    assert parse_args(["--local", "smollm2"]).local == "smollm2"
    assert parse_args(["--local", "-v"]).local == "qwen"
    assert parse_args([]).local is None
    with pytest.raises(SystemExit):
        parse_args(["--local", "gpt-5"])
    err = capsys.readouterr().err
    assert "--local: invalid choice: 'gpt-5'" in err and "qwen" in err and "smollm2" in err


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
        "--yes",
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


# --- the local llama.cpp server ----------------------------------------------


@pytest.mark.parametrize("flag", [["--local"], ["--serve-model", "model.gguf"]])
def test_local_modes_without_xllamacpp_say_how_to_install_it(
    flag: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_local, "xllamacpp_available", lambda: False)
    fetched: list[object] = []
    monkeypatch.setattr(cli_local, "ensure_default_model", lambda **kw: fetched.append(kw))
    assert main([*flag, "--no-default-mcp"]) == 1
    assert capsys.readouterr().err == (
        "agent-smith: error: --local and --serve-model need llama.cpp's server: "
        "pip install -e '.[local]' (in the agent_smith checkout)\n"
    )
    assert fetched == []  # nothing downloaded for a server that cannot run


def test_serve_model_names_a_missing_model_file(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    require_xllamacpp()  # the check is LocalLlamaServer's, made once xllamacpp is found
    missing = tmp_path / "missing.gguf"
    assert main(["--serve-model", str(missing), "--no-default-mcp"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"agent-smith: error: no such model file: {missing}"
    assert "Traceback" not in "".join(err)


def test_the_bundled_example_mcp_server_is_found_from_an_editable_install() -> None:
    from agent_smith.cli.demo_agent import EXAMPLE_MCP_SERVER

    assert EXAMPLE_MCP_SERVER.is_file(), EXAMPLE_MCP_SERVER


# --- the reply cap -----------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "cap"),
    [
        (["--local"], 256),  # LOCAL_SAMPLING's, as measured
        (["--serve-model", "m.gguf"], 256),
        (["-e", ENDPOINT], 1024),
        (["--local", "--max-tokens", "64"], 64),
        (["-e", ENDPOINT, "--max-tokens", "0"], None),  # 0: no cap
    ],
)
def test_every_reply_is_capped_by_default_and_max_tokens_overrides(
    argv: list[str], cap: int | None
) -> None:
    from agent_smith.cli.main import _sampling

    sampling = _sampling(parse_args(argv))
    assert sampling.max_tokens == cap
    assert sampling.temperature == (None if "-e" in argv else 0)


def test_a_negative_max_tokens_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(["--max-tokens", "-1"])
    assert exited.value.code == 2
    assert "--max-tokens must not be negative" in capsys.readouterr().err


def test_mode_defaults_to_write_and_takes_read_and_yolo(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args([]).mode == "write"
    assert parse_args(["--mode", "read"]).mode == "read"
    assert parse_args(["--mode", "yolo"]).mode == "yolo"
    with pytest.raises(SystemExit):
        parse_args(["--mode", "admin"])
    assert "invalid choice" in capsys.readouterr().err
