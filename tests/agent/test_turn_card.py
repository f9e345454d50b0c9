"""A turn's card: built from the turn's events, rendered as escaped HTML and Markdown."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from agent_smith import (
    Agent,
    AgentConfig,
    AssistantMessage,
    CardCall,
    Finished,
    ModelPrice,
    TestModel,
    TokenDelta,
    TokenUsage,
    ToolCall,
    ToolCallRequested,
    ToolMessage,
    TurnCard,
    UsageLimits,
    tool,
)
from agent_smith.agent.turn_card import RESULT_SHOWN, CardBuilder
from agent_smith.llm.request import LlmResponse
from agent_smith.llm.testing import call
from agent_smith.runtime import Runtime

SCRIPT = "<script>alert('x')</script>"


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny and 21 °C in {city}."


@tool
def fail(city: str) -> str:
    """Always fails."""
    raise ValueError(f"no station in {city}")


class _Tags(HTMLParser):
    """The tags and the text of an HTML fragment, as a browser would read them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _read(fragment: str) -> _Tags:
    parser = _Tags()
    parser.feed(fragment)
    parser.close()
    return parser


def test_the_card_of_a_turn_holds_each_call_with_its_result_and_the_answer(
    runtime: Runtime,
) -> None:
    model = TestModel([call("get_weather", city="Paris"), "It is sunny in Paris."])
    with Agent(model, tools=[get_weather], runtime=runtime) as agent:
        card = TurnCard.from_events(agent.stream("Weather in Paris?"))
    assert card.answer == "It is sunny in Paris."
    ((only,),) = [card.calls]
    assert (only.call.name, only.call.arguments) == ("get_weather", {"city": "Paris"})
    assert only.result is not None and only.result.content == "Sunny and 21 °C in Paris."
    assert card.usage is not None and card.usage == agent.usage
    assert card.stop is None and card.working is False
    shown = "".join(_read(card._repr_html_()).text)
    assert 'get_weather {"city": "Paris"}' in shown
    assert "Sunny and 21 °C in Paris." in shown
    assert "It is sunny in Paris." in shown
    assert f"{card.usage.total:,} tokens" in shown


def test_a_tool_result_with_markup_renders_as_text_in_html_and_markdown(runtime: Runtime) -> None:
    model = TestModel([call("get_weather", city=SCRIPT), f"Here: {SCRIPT}"])
    with Agent(model, tools=[get_weather], runtime=runtime) as agent:
        card = TurnCard.from_events(agent.stream("Weather?"))
    page = card._repr_html_()
    read = _read(page)
    assert "script" not in read.tags
    assert set(read.tags) <= {"div", "code", "pre", "strong"}
    assert SCRIPT in "".join(read.text)  # shown as the characters it is
    markdown = card._repr_markdown_()
    outside_code = re.sub(r"(?ms)^(`{3,}).*?^\1$|`[^`]*`", "", markdown)
    assert "<script" not in outside_code
    assert f"```text\nSunny and 21 °C in {SCRIPT}.\n```" in markdown


def test_a_failed_tool_call_is_marked_as_an_error(runtime: Runtime) -> None:
    model = TestModel([call("fail", city="Paris"), "No weather today."])
    with Agent(model, tools=[fail], runtime=runtime) as agent:
        card = TurnCard.from_events(agent.stream("Weather?"))
    (failed,) = card.calls
    assert failed.result is not None and failed.result.is_error
    assert 'calling `fail` `{"city": "Paris"}` **error**' in card._repr_markdown_()
    assert ">error</strong>" in card._repr_html_()


def test_a_typed_stop_ends_the_card_with_its_reason_instead_of_raising(runtime: Runtime) -> None:
    model = TestModel([call("get_weather", city="Paris")] * 3)
    with Agent(
        model, tools=[get_weather], config=AgentConfig(max_iterations=2), runtime=runtime
    ) as agent:
        card = TurnCard.from_events(agent.stream("Weather?"))
    assert card.stop is not None and "max_iterations" in card.stop
    assert card.calls and all(c.result is not None for c in card.calls) and card.answer == ""
    assert card.usage is not None and card.usage.total > 0  # the replies' own counts
    assert f"stopped: {card.stop}" in "".join(_read(card._repr_html_()).text)


def test_the_cost_shows_when_the_model_has_a_price(runtime: Runtime) -> None:
    prices = {"test": ModelPrice(input=2.0, output=10.0)}
    config = AgentConfig(usage_limits=UsageLimits(prices=prices))
    with Agent(TestModel(["Hello."]), config=config, runtime=runtime) as agent:
        card = TurnCard.from_events(agent.stream("Hi"))
    assert card.usage is not None and card.usage.cost is not None
    assert f"cost {card.usage.cost:.6g}" in card._repr_markdown_()
    with Agent(TestModel(["Hello."]), runtime=runtime) as agent:
        unpriced = TurnCard.from_events(agent.stream("Hi"))
    assert "cost" not in unpriced._repr_markdown_()


def test_a_reply_cut_by_its_token_cap_says_so() -> None:
    builder = CardBuilder()
    message = AssistantMessage("It is sunny in")
    for event in (
        TokenDelta("It is sunny in"),
        Finished("length", None, LlmResponse(message, "length")),
    ):
        builder.add(event)
    card = builder.card()
    assert card.answer == "It is sunny in"
    assert card.stop == "the reply was cut off by its token cap"


def test_the_live_card_grows_with_the_reply_and_starts_over_after_a_call() -> None:
    builder = CardBuilder()
    events = [
        TokenDelta("Let me "),
        TokenDelta("check."),
        ToolCallRequested(ToolCall("c1", "get_weather", {"city": "Paris"})),
        TokenDelta("Sunny."),
    ]
    cards = list(builder.follow(events))
    assert [c.answer for c in cards] == ["Let me ", "Let me check.", "", "Sunny."]
    assert all(c.working for c in cards)
    assert "working…" in cards[-1]._repr_markdown_()
    assert [c.call.name for c in cards[-1].calls] == ["get_weather"]


def test_a_long_tool_result_shows_its_head_and_how_much_was_left_out() -> None:
    result = ToolMessage("c1", "read", "x" * (RESULT_SHOWN + 500))
    card = TurnCard(calls=(CardCall(ToolCall("c1", "read"), result),))
    assert f"{'x' * RESULT_SHOWN}… (500 more characters)" in card._repr_markdown_()


def test_an_answer_with_an_open_code_block_does_not_swallow_the_footer() -> None:
    card = TurnCard("Code:\n```python\nprint(1 < 2)", usage=TokenUsage(3, 4, 7))
    assert card._repr_markdown_() == (
        "Code:\n```python\nprint(1 < 2)\n```\n\n*7 tokens (3 in, 4 out)*\n"
    )


def test_markup_in_arguments_and_names_is_escaped_in_html() -> None:
    weird = ToolCall("c1", "<b>name</b>", {"q": "`a` <i>"})
    card = TurnCard(calls=(CardCall(weird),))
    assert _read(card._repr_html_()).tags == ["div", "div", "code", "code"]
    assert 'calling `<b>name</b>` ``{"q": "`a` <i>"}``' in card._repr_markdown_()
