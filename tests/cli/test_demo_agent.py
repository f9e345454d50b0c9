"""The demo's agent: a small local model gets three tools and the small-model class."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_smith import LlmClient, Runtime
from agent_smith.cli.demo_agent import demo_agent, demo_server, few_tools, is_small, system_prompt
from agent_smith.cli.main import parse_args


@pytest.mark.parametrize(
    ("argv", "small"),
    [
        (["--local"], True),
        (["--local", "qwen1.5b"], True),
        (["--serve-model", "m.gguf"], False),
        (["-e", "http://127.0.0.1:8080"], False),
    ],
)
def test_every_local_model_is_small_and_any_other_is_not(argv: list[str], small: bool) -> None:
    assert is_small(parse_args(argv)) is small


def test_a_small_model_gets_three_tools_a_prompt_naming_them_and_the_small_class(
    tmp_path: Path,
) -> None:
    with Runtime() as runtime:
        llm = LlmClient("http://127.0.0.1:9", runtime=runtime)
        with demo_agent(llm, sandbox=tmp_path, small=True, runtime=runtime) as agent:
            assert agent.tools == ["calculator", "read_file", "list_files"]
            assert agent.config.small_model
            assert "write_file" not in agent.effective_system_prompt()
            assert "read_file" in agent.effective_system_prompt()
        with demo_agent(llm, sandbox=tmp_path, small=True, all_tools=True, runtime=runtime) as a:
            assert "run_command" in a.tools
            assert a.config.small_model  # still small: its requests are shaped the same
        with demo_agent(llm, sandbox=tmp_path, small=False, runtime=runtime) as big:
            assert len(big.tools) == 9 and not big.config.small_model
            assert "write_file" in big.effective_system_prompt()


def test_the_prompt_says_where_the_agent_runs() -> None:
    assert system_prompt([], where="a web page").startswith(
        "You are a helpful assistant running in a web page. "
    )


@pytest.mark.parametrize(
    ("argv", "few"),
    [
        (["--local"], True),
        (["--local", "--all-tools"], False),
        (["-e", "http://127.0.0.1:8080"], False),
    ],
)
def test_a_small_model_without_all_tools_gets_the_demo_servers_clock_only(
    argv: list[str], few: bool
) -> None:
    assert few_tools(parse_args(argv)) is few
    config = demo_server(few=few_tools(parse_args(argv)))
    assert config is not None
    assert config.allows("now")
    assert config.allows("echo") is not few
