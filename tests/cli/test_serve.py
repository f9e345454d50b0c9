"""``agent-smith serve``'s command line: what it needs and what it refuses."""

from __future__ import annotations

import pytest

from agent_smith.cli import local as cli_local
from agent_smith.cli.main import main
from agent_smith.cli.serve import build_parser
from agent_smith.llm.local_server import DEFAULT_CTX_SIZE, DEFAULT_MAX_TOKENS, DEFAULT_PARALLEL

pytestmark = pytest.mark.usefixtures("no_thread_leak")


def test_serve_defaults_to_port_8080_with_four_slots_and_a_reply_cap() -> None:
    args = build_parser().parse_args(["--local"])
    assert args.local == "qwen"
    assert (args.port, args.parallel, args.ctx_size, args.max_tokens) == (8080, 4, 8192, 1024)
    assert (DEFAULT_PARALLEL, DEFAULT_CTX_SIZE, DEFAULT_MAX_TOKENS) == (4, 8192, 1024)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "one of the arguments --serve-model --local is required"),
        (["--local", "--port", "70000"], "--port must be 0..65535"),
        (["--local", "--parallel", "0"], "--parallel must be at least 1"),
        (["--local", "--max-tokens", "-5"], "--max-tokens must not be negative"),
        (["--local", "--serve-model", "m.gguf"], "not allowed with argument"),
    ],
)
def test_serve_usage_errors_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", *argv])
    assert exited.value.code == 2
    assert says in capsys.readouterr().err


def test_serve_without_xllamacpp_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_local, "xllamacpp_available", lambda: False)
    assert main(["serve", "--local"]) == 1
    assert capsys.readouterr().err == (
        "agent-smith serve: error: --local and --serve-model need llama.cpp's server: "
        "pip install -e '.[local]' (in the agent_smith checkout)\n"
    )
