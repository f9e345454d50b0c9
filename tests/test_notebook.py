"""``agent_smith.notebook.show``: one output updated as the turn runs, ending as its card.

Here IPython's ``display`` is replaced by a recorder; in a real Jupyter
kernel it is tested by executing the example notebook
(tests/integration/test_examples.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_smith import Agent, ConfigError, LlmApiError, TestModel, TurnCard, tool
from agent_smith.llm.testing import call
from agent_smith.notebook import show
from agent_smith.runtime import Runtime


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}."


class Output:
    """What IPython's ``display(obj, display_id=True)`` returns: a handle to update."""

    def __init__(self, shown: object) -> None:
        self.shown: list[object] = [shown]

    def update(self, obj: object) -> None:
        self.shown.append(obj)


@pytest.fixture
def outputs(monkeypatch: pytest.MonkeyPatch) -> list[Output]:
    """Outputs made by ``display`` in a (pretended) running IPython kernel."""
    ipython = pytest.importorskip("IPython")
    display_module = pytest.importorskip("IPython.display")
    made: list[Output] = []

    def display(obj: object, *, display_id: bool) -> Output:
        assert display_id is True
        made.append(Output(obj))
        return made[-1]

    monkeypatch.setattr(ipython, "get_ipython", lambda: object())
    monkeypatch.setattr(display_module, "display", display)
    return made


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    with Runtime(max_workers=2) as rt:
        yield rt


def test_show_updates_one_output_as_the_turn_runs_and_ends_as_the_card(
    outputs: list[Output], runtime: Runtime
) -> None:
    model = TestModel([call("get_weather", city="Paris"), "It is sunny."])
    with Agent(model, tools=[get_weather], runtime=runtime) as agent:
        card = show(agent.stream("Weather in Paris?"))
    (output,) = outputs
    shown = output.shown
    assert all(isinstance(s, TurnCard) for s in shown)
    cards = [s for s in shown if isinstance(s, TurnCard)]
    assert cards[0] == TurnCard(working=True)  # before the first event
    assert [len(c.calls) for c in cards[1:3]] == [1, 1]
    assert cards[1].calls[0].result is None and cards[2].calls[0].result is not None
    words, (answered, final) = cards[3:-2], cards[-2:]
    assert [c.answer for c in words] == ["It ", "It is ", "It is sunny."]
    assert answered.answer == final.answer == "It is sunny."  # the FinalAnswer, then the card
    assert all(c.working for c in cards[:-1]) and cards[-1] == card
    assert card.answer == "It is sunny." and not card.working and card.usage == agent.usage


def test_an_error_ends_the_live_output_as_the_card_so_far_then_is_raised(
    outputs: list[Output], runtime: Runtime
) -> None:
    model = TestModel(
        [call("get_weather", city="Paris"), LlmApiError("server gone", http_status=503)]
    )
    with Agent(model, tools=[get_weather], runtime=runtime) as agent, pytest.raises(LlmApiError):
        show(agent.stream("Weather in Paris?"))
    last = outputs[0].shown[-1]
    assert isinstance(last, TurnCard) and not last.working
    assert [c.call.name for c in last.calls] == ["get_weather"]


def test_show_outside_an_ipython_kernel_says_what_to_use_and_runs_nothing(
    runtime: Runtime,
) -> None:
    model = TestModel(["never asked"])
    with Agent(model, runtime=runtime) as agent:
        with pytest.raises(ConfigError, match=r"TurnCard\.from_events"):
            show(agent.stream("Hi"))
        assert model.requests == [] and agent.history == []
