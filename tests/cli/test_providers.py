"""``--provider``: each provider's server and key come from its usual environment."""

from __future__ import annotations

import pytest

from agent_smith.cli.main import parse_args

pytestmark = pytest.mark.usefixtures("no_thread_leak")

_VARIABLES = (
    "LLAMA_SERVER_URL",
    "LLAMA_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_BASE_URL",
    "OLLAMA_HOST",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "BEDROCK_ENDPOINT_URL",
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("provider", "environment", "endpoint", "key"),
    [
        ("openai", {"LLAMA_SERVER_URL": "http://h:1", "LLAMA_API_KEY": "k1"}, "http://h:1", "k1"),
        ("anthropic", {"ANTHROPIC_API_KEY": "sk-ant"}, "https://api.anthropic.com", "sk-ant"),
        (
            "gemini",
            {"GOOGLE_API_KEY": "AIza"},
            "https://generativelanguage.googleapis.com",
            "AIza",
        ),
        ("ollama", {"OLLAMA_HOST": "gpu-box"}, "http://gpu-box:11434", None),
        ("responses", {"OPENAI_API_KEY": "sk-o"}, "https://api.openai.com/v1", "sk-o"),
        (
            "bedrock",
            {"AWS_REGION": "eu-west-1"},
            "https://bedrock-runtime.eu-west-1.amazonaws.com",
            None,
        ),
    ],
)
def test_each_provider_reads_its_usual_variables(
    provider: str,
    environment: dict[str, str],
    endpoint: str,
    key: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    args = parse_args(["--provider", provider])
    assert (args.endpoint, args.api_key) == (endpoint, key)


def test_flags_win_over_the_providers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    args = parse_args(["--provider", "anthropic", "-e", "http://proxy:9", "-k", "given"])
    assert (args.endpoint, args.api_key) == ("http://proxy:9", "given")


def test_a_local_model_is_served_for_the_openai_provider_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as caught:
        parse_args(["--provider", "anthropic", "--local"])
    assert caught.value.code == 2
    assert "openai provider only" in capsys.readouterr().err
