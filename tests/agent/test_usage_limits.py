"""Usage limits and cost: one meter for a run and its sub-agent tree, checked before each step."""

from __future__ import annotations

from typing import Any

import pytest

from agent_smith import Agent, AgentConfig, ModelPrice, SubAgentSpec, UsageLimits
from agent_smith.agent.usage_limits import UsageMeter
from agent_smith.errors import ConfigError, UsageLimitExceeded
from agent_smith.llm.client import LlmClient
from agent_smith.messages import TokenUsage
from agent_smith.tools.function import tool
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

PRICES = {"test": ModelPrice(input=2.0, output=10.0)}  # per million tokens


@tool
def noop(n: int = 0) -> str:
    """Do nothing."""
    return f"ok {n}"


def limited(**caps: Any) -> AgentConfig:
    return AgentConfig(usage_limits=UsageLimits(prices=PRICES, **caps))


def test_cost_is_priced_per_million_tokens_and_summed_into_the_turn(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Calls(("noop", {})), Text("done", usage=(1000, 500)))
    agent = Agent(llm, tools=[noop], config=limited())
    answer = agent.send("go")
    # (10 * 2 + 5 * 10) / 1e6 for the call round, (1000 * 2 + 500 * 10) / 1e6 for the answer
    assert answer.usage is not None
    assert answer.usage.cost == pytest.approx(70e-6 + 7000e-6)
    assert agent.usage == answer.usage
    assert answer.usage.prompt == 1010


def test_without_a_price_table_usage_has_no_cost(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("hi"))
    answer = Agent(llm).send("go")
    assert answer.usage is not None and answer.usage.cost is None


def test_max_requests_refuses_the_next_request_and_says_what_was_spent(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Calls(("noop", {"n": 1})), Calls(("noop", {"n": 2})), Text("never"))
    agent = Agent(llm, tools=[noop], config=limited(max_requests=2))
    with pytest.raises(UsageLimitExceeded) as caught:
        agent.send("go")
    err = caught.value
    assert (err.limit, err.allowed, err.spent, err.condition) == (
        "max_requests",
        2,
        2,
        "usage_limit",
    )
    assert "max_requests=2" in str(err) and "2 requests" in str(err)
    assert len(llm_server.requests) == 2
    # the history stays whole: both rounds' calls have their results
    assert [type(m).__name__ for m in agent.history][-2:] == ["AssistantMessage", "ToolMessage"]


def test_max_tool_calls_refuses_a_round_before_it_runs(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    ran: list[int] = []

    @tool
    def count(n: int) -> str:
        """Count."""
        ran.append(n)
        return "ok"

    llm_server.script(Calls(("count", {"n": 1})), Calls(("count", {"n": 2}), ("count", {"n": 3})))
    agent = Agent(llm, tools=[count], config=limited(max_tool_calls=2))
    with pytest.raises(UsageLimitExceeded) as caught:
        agent.send("go")
    assert caught.value.limit == "max_tool_calls"
    assert ran == [1]  # the second round (two calls, 3 in all) never ran
    results = [m for m in agent.history if type(m).__name__ == "ToolMessage"]
    assert len(results) == 3 and "cancel" in results[-1].content.lower()


@pytest.mark.parametrize(
    ("cap", "value"),
    [
        ("max_input_tokens", 15),
        ("max_output_tokens", 8),
        ("max_total_tokens", 20),
        ("max_cost", 100e-6),
    ],
)
def test_token_and_cost_caps_stop_the_first_request_after_they_were_passed(
    llm: LlmClient, llm_server: ScriptedLlmServer, cap: str, value: float
) -> None:
    # each reply: 10 prompt + 5 completion tokens = 15 total, cost 70e-6
    llm_server.script(*[Calls(("noop", {"n": n})) for n in range(5)])
    agent = Agent(llm, tools=[noop], config=limited(**{cap: value}))
    with pytest.raises(UsageLimitExceeded) as caught:
        agent.send("go")
    assert caught.value.limit == cap
    assert caught.value.spent > value
    assert len(llm_server.requests) == 2


def test_the_sub_agent_tree_shares_one_meter(llm: LlmClient, llm_server: ScriptedLlmServer) -> None:
    # root calls the child; the child makes two requests; root's next request is the 4th
    llm_server.script(
        Calls(("helper", {"task": "t"})),
        Calls(("noop", {})),
        Text("child done"),
        Text("root done"),
    )
    spec = SubAgentSpec("helper", "Helps.", tool_factories=[lambda: noop])
    agent = Agent(llm, config=limited(max_requests=3))
    agent.add_subagent(spec)
    with pytest.raises(UsageLimitExceeded) as caught:
        agent.send("go")
    assert caught.value.spent == 3
    assert len(llm_server.requests) == 3


def test_the_child_usage_is_priced_and_counted_once(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Calls(("helper", {"task": "t"})), Text("child done"), Text("root done"))
    agent = Agent(llm, config=limited())
    agent.add_subagent(SubAgentSpec("helper", "Helps."))
    answer = agent.send("go")
    assert answer.usage == TokenUsage(30, 15, 45, cost=pytest.approx(3 * 70e-6))


def test_max_cost_needs_a_price_for_the_model(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("hi"))
    config = AgentConfig(usage_limits=UsageLimits(max_cost=1.0, prices={}))
    with pytest.raises(ConfigError, match="price"):
        Agent(llm, config=config).send("go")


def test_limits_and_prices_refuse_nonsense() -> None:
    with pytest.raises(ConfigError):
        UsageLimits(max_requests=0)
    with pytest.raises(ConfigError):
        UsageLimits(max_cost=-1.0)
    with pytest.raises(ConfigError):
        ModelPrice(input=-1.0, output=1.0)
    with pytest.raises(ConfigError):
        UsageLimits(prices={"m": (1.0, 2.0)})  # type: ignore[dict-item]


def test_the_meter_prices_by_the_first_name_the_table_knows() -> None:
    meter = UsageMeter(UsageLimits(prices={"served-name": ModelPrice(1.0, 1.0)}))
    priced = meter.spend(TokenUsage(1_000_000, 0, 1_000_000), "asked-name", "served-name")
    assert priced is not None and priced.cost == 1.0
    assert meter.spent.usage.cost == 1.0


def test_cached_input_tokens_are_priced_at_the_cached_price() -> None:
    price = ModelPrice(input=2.0, output=10.0, cached_input=0.5)
    usage = TokenUsage(1_000_000, 100_000, 1_100_000, cache_read=400_000)
    assert price.cost(usage) == pytest.approx(0.6 * 2.0 + 0.4 * 0.5 + 0.1 * 10.0)
    assert ModelPrice(input=2.0, output=0.0).cost(usage) == pytest.approx(2.0)
