from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith import Agent, AgentSpec, CancelledError, ConfigError, ServerConfig
from agent_smith.batch.cache import AgentCache, CacheStats
from tests.support.background import CANCEL_BOUND, WAIT, Background
from tests.support.llm_server import Hold, ScriptedLlmServer, Text

EXAMPLE_SERVER = Path(__file__).resolve().parents[2] / "examples" / "mcp_server_example.py"


@pytest.fixture
def cache(no_thread_leak: None) -> Iterator[AgentCache]:
    with AgentCache() as c:
        yield c


def test_one_agent_serves_runs_one_after_another_with_a_fresh_history(
    cache: AgentCache, llm_server: ScriptedLlmServer
) -> None:
    spec = AgentSpec(llm_server.url)
    agents: list[Agent] = []
    for text in ("first", "second"):
        with cache.lease(spec, slots=4) as agent:
            assert agent.history == []
            agent.send(text)
            agents.append(agent)
    assert agents[0] is agents[1]
    assert cache.stats(spec) == CacheStats(agents=1, llm_clients=1, mcp_connections=0)
    assert [m["content"] for m in llm_server.requests[1]["messages"]] == ["second"]


def test_runs_at_the_same_time_get_their_own_agents_but_share_the_connections(
    cache: AgentCache,
) -> None:
    server = ServerConfig(alias="demo", command=(sys.executable, str(EXAMPLE_SERVER)))
    spec = AgentSpec("http://127.0.0.1:1", mcp_servers=(server,))
    both = threading.Barrier(2, timeout=WAIT)
    held: list[Agent] = []

    def hold_one() -> None:
        with cache.lease(spec, slots=2) as agent:
            held.append(agent)
            both.wait()  # both leases are out at once

    runs = [Background(hold_one) for _ in range(2)]
    for run in runs:
        assert run.join(WAIT)
        assert run.error is None, run.error
    assert held[0] is not held[1]
    assert all("mcp_demo__echo" in agent.tools for agent in held)
    assert cache.stats(spec) == CacheStats(agents=2, llm_clients=1, mcp_connections=1)


def test_a_spec_that_does_not_build_is_not_cached(
    cache: AgentCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = AgentSpec("http://127.0.0.1:1", api_key_env="BATCH_CACHE_KEY")
    monkeypatch.delenv("BATCH_CACHE_KEY", raising=False)
    with pytest.raises(ConfigError, match="BATCH_CACHE_KEY"), cache.lease(spec, slots=1):
        pass
    assert cache.stats(spec) == CacheStats()
    monkeypatch.setenv("BATCH_CACHE_KEY", "k")
    with cache.lease(spec, slots=1):
        pass
    assert cache.stats(spec).agents == 1


def test_stopping_a_run_cancels_its_running_turn_only(cache: AgentCache) -> None:
    gate = threading.Event()
    hold = Hold(gate, Text("too late"))
    with ScriptedLlmServer() as server:
        server.script(hold)
        spec = AgentSpec(server.url)

        def run() -> str:
            with cache.lease(spec, slots=1, run="run-1") as agent:
                return agent.send("wait").content

        turn = Background(run)
        assert hold.reached.wait(WAIT)
        assert cache.stop("run-2") == 0
        assert cache.stop("run-1") == 1
        assert turn.join(CANCEL_BOUND), "the turn did not stop"
        gate.set()
    assert isinstance(turn.error, CancelledError)


def test_a_stopped_run_gets_no_agent_and_a_turn_just_starting_cancels_itself(
    cache: AgentCache, llm_server: ScriptedLlmServer
) -> None:
    spec = AgentSpec(llm_server.url)
    with cache.lease(spec, slots=1, run="r") as agent:
        assert cache.stop("r") == 1  # lent, but its turn has not begun: nothing to cancel yet
        with pytest.raises(CancelledError):
            agent.send("too late")  # ... so the turn cancels itself at its first message
    with pytest.raises(CancelledError, match="stopped"), cache.lease(spec, slots=1, run="r"):
        pass
    assert llm_server.requests == []
    with cache.lease(spec, slots=1, run="other") as agent:
        assert agent.send("fine").content  # the same agent serves other runs


def test_a_closed_cache_lends_nothing(llm_server: ScriptedLlmServer) -> None:
    cache = AgentCache()
    spec = AgentSpec(llm_server.url)
    with cache.lease(spec, slots=1) as agent:
        agent.send("hi")
    cache.close()
    with pytest.raises(CancelledError, match="closed"), cache.lease(spec, slots=1):
        pass
