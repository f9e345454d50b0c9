"""FallbackModel: which failures fall through, never mid-stream, and who answered."""

from __future__ import annotations

import pytest

from agent_smith import (
    Agent,
    AgentSmithError,
    CancelledError,
    ChatModel,
    ConfigError,
    Finished,
    LlmApiError,
    LlmClient,
    LlmRequest,
    ModelCapabilities,
    ParseError,
    Runtime,
    TestModel,
    TokenDelta,
    TransportError,
    UserMessage,
)
from agent_smith.llm.fallback import FallbackModel, falls_through
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer, Text, sse_frames

REQUEST = LlmRequest((UserMessage("hi"),))


def named(name: str, *replies: object, native: bool = True) -> TestModel:
    caps = ModelCapabilities(provider="test", model=name, native_output=native)
    return TestModel(replies, capabilities=caps)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("error", "falls"),
    [
        (TransportError("down", operation="x", endpoint_or_server="e"), True),
        (LlmApiError("busy", http_status=503), True),
        (LlmApiError("slow down", http_status=429), True),
        (LlmApiError("prompt is too long: 250000 tokens > 200000", http_status=400), True),
        (
            LlmApiError(
                "bad",
                http_status=400,
                body_excerpt='{"error":{"type":"exceed_context_size_error"}}',
            ),
            True,
        ),
        (LlmApiError("unauthorized", http_status=401), False),
        (ParseError("garbled"), False),
        (CancelledError("stop", operation="x"), False),
    ],
)
def test_which_failures_fall_through_by_default(error: AgentSmithError, falls: bool) -> None:
    assert falls_through(error) is falls


def test_the_backup_answers_when_the_primary_is_down_and_the_reply_names_it() -> None:
    seen: list[tuple[ChatModel, AgentSmithError]] = []
    primary = named("primary", LlmApiError("overloaded", http_status=529))
    backup = named("backup", "from the backup")
    model = FallbackModel([primary, backup], on_fallback=lambda m, e: seen.append((m, e)))
    reply = model.complete(REQUEST)
    assert reply.message.content == "from the backup"
    assert reply.model == "backup"
    assert [m for m, _ in seen] == [primary]


def test_a_failure_that_does_not_fall_through_is_raised_at_once() -> None:
    backup = named("backup", "unused")
    model = FallbackModel([named("primary", LlmApiError("no", http_status=401)), backup])
    with pytest.raises(LlmApiError, match="no"):
        model.complete(REQUEST)
    assert backup.requests == []


def test_the_last_models_failure_is_raised() -> None:
    model = FallbackModel(
        [
            named("a", LlmApiError("a down", http_status=500)),
            named("b", LlmApiError("b down", http_status=502)),
        ]
    )
    with pytest.raises(LlmApiError, match="b down"):
        model.complete(REQUEST)


def test_which_failures_fall_through_is_configurable() -> None:
    model = FallbackModel(
        [named("a", LlmApiError("no", http_status=401)), named("b", "ok")],
        should_fall=lambda error: isinstance(error, LlmApiError),
    )
    assert model.complete(REQUEST).message.content == "ok"


def test_a_stream_falls_through_before_its_first_event_only(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    primary = LlmClient(llm_server.url, "primary", runtime=runtime, max_retries=0)
    backup = named("backup", "from the backup", "never")
    model = FallbackModel([primary, backup])
    llm_server.script(Raw(503, '{"error": {"message": "loading"}}'))
    events = list(model.stream(REQUEST))
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "from the backup"
    frames = list(sse_frames(Text("partial answer"), {}))
    llm_server.script(Chunks(*frames[:3]))  # cut after the first words: no [DONE]
    seen: list[object] = []
    with pytest.raises(TransportError):
        for event in model.stream(REQUEST):
            seen.append(event)
    assert seen and backup.remaining == 1  # the backup was not asked after bytes arrived


def test_an_agent_runs_on_a_fallback_chain_and_its_finished_event_names_the_answerer(
    runtime: Runtime,
) -> None:
    down = named("primary", TransportError("refused", operation="x", endpoint_or_server="e"))
    model = FallbackModel([down, named("backup", "hello")])
    with Agent(model, runtime=runtime) as agent:
        events = list(agent.stream("hi"))
    finished = [e for e in events if isinstance(e, Finished)]
    assert finished[0].response.message.content == "hello"
    assert finished[0].response.model == "backup"


def test_capabilities_are_the_chains_common_ground() -> None:
    model = FallbackModel([named("a"), named("b", native=False)])
    assert model.capabilities.model == "a" and model.capabilities.native_output is False
    with pytest.raises(ConfigError):
        FallbackModel([])


def test_the_window_is_the_smallest_any_model_knows_asked_of_their_servers(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.props = {"default_generation_settings": {"n_ctx": 2048}}
    served = LlmClient(llm_server.url, "served", runtime=runtime)
    sized = TestModel([], capabilities=ModelCapabilities(provider="test", context_size=8192))
    model = FallbackModel([sized, served])
    assert model.context_window(ask=False) == 8192  # the server was not asked yet
    assert llm_server.props_asked == 0
    assert model.context_window() == 2048  # asked of the llama-server once, then remembered
    assert model.capabilities.context_size == 2048
    assert model.context_window() == 2048 and llm_server.props_asked == 1
    assert FallbackModel([named("a"), named("b")]).context_window() is None
