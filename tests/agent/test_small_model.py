"""A small model's requests: short descriptions, and no tools once a result is in."""

from __future__ import annotations

from agent_smith import Agent, AgentConfig, LlmClient, Runtime, Skill, tool
from agent_smith.agent.small_model import (
    DESCRIPTION_CHARS,
    LONG_NOTE,
    RESULT_CHARS,
    short_schema,
)
from agent_smith.agent.text_tool_calls import ANSWER_NOTE
from agent_smith.agent.tool_choice import WORDS_GRAMMAR
from agent_smith.tools.base import ToolSchema
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

CALL = '{"name": "calculator", "arguments": {"expression": "17 * 23"}}'
CHOICE = '{"tool": "calculator", "arguments": {"expression": "17 * 23"}}'
ANSWER = '{"tool": "answer", "arguments": {"text": "Hello."}}'


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression. It knows + - * / and ^, and parentheses.

    Args:
        expression: the expression, such as the user wrote it.
    """
    return {"17 * 23": "391"}.get(expression, "?")


def small_agent(llm: LlmClient, runtime: Runtime) -> Agent:
    return Agent(
        llm, "Use tools.", [calculator], config=AgentConfig(small_model=True), runtime=runtime
    )


def test_a_small_model_sees_each_tools_first_sentence_without_parameter_descriptions(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Text(ANSWER))
    small_agent(llm, runtime).send("Hi")
    sent = llm_server.requests[0]
    assert (
        "- calculator(expression): Evaluate an arithmetic expression.\n"
        in (sent["messages"][0]["content"])
    )
    (call, _) = sent["response_format"]["json_schema"]["schema"]["anyOf"]
    assert call["properties"]["arguments"]["properties"] == {"expression": {"type": "string"}}


def test_a_long_first_sentence_is_cut() -> None:
    schema = short_schema(ToolSchema("t", "word " * 100))
    assert len(schema.description) == DESCRIPTION_CHARS
    assert schema.description.endswith("…")


def test_after_a_tool_result_a_small_model_is_told_the_result_and_asked_for_words(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Text(CHOICE), Text("17 times 23 is 391."))
    agent = small_agent(llm, runtime)
    assert agent.send("What is 17 times 23?").content == "17 times 23 is 391."
    follow_up = llm_server.requests[1]
    assert "tools" not in follow_up and "response_format" not in follow_up
    assert follow_up["grammar"] == WORDS_GRAMMAR
    system, question, told = follow_up["messages"]
    assert system == {"role": "system", "content": "Use tools."}  # no tools listed
    assert question == {"role": "user", "content": "What is 17 times 23?"}
    note = ANSWER_NOTE.format("What is 17 times 23?")
    assert told == {  # a short result: no note about its length
        "role": "user",
        "content": f'calculator(expression="17 * 23") returned:\n391\n\n{note}',
    }
    assert [m.role for m in agent.history] == ["user", "assistant", "tool", "assistant"]


def test_a_small_model_that_writes_the_call_again_gets_the_result_as_its_answer(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("calculator", {"expression": "17 * 23"})), Text(CALL))
    agent = small_agent(llm, runtime)
    assert agent.send("What is 17 times 23?").content == "391"
    assert len(llm_server.requests) == 2  # no note round: the request carried it


def test_a_bigger_model_keeps_full_descriptions_and_its_tools_after_a_result(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("calculator", {"expression": "17 * 23"})), Text("391."))
    Agent(llm, "Use tools.", [calculator], runtime=runtime).send("What is 17 times 23?")
    follow_up = llm_server.requests[1]
    assert follow_up["tool_choice"] == "auto"
    assert "parentheses" in follow_up["tools"][0]["function"]["description"]


def test_a_small_model_is_sent_the_start_of_a_big_result_and_the_history_keeps_it_whole(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return "".join(f"shelf {n}: a box of steel screws\n" for n in range(1000))

    llm_server.script(
        Text('{"name": "read_file", "arguments": {"path": "big.txt"}}'), Text("Screws.")
    )
    config = AgentConfig(small_model=True)
    agent = Agent(llm, "Use tools.", [read_file], config=config, runtime=runtime)
    agent.send("What is in big.txt?")
    told = llm_server.requests[1]["messages"][-1]["content"]  # the result, then the note
    sent = told.split("returned:\n", 1)[1].split("\n\n" + ANSWER_NOTE[:20], 1)[0]
    assert len(sent) < RESULT_CHARS + 60
    assert sent.startswith("shelf 0: a box of steel screws\n")
    assert sent.endswith("characters]") and "…[the first " in sent
    assert told.endswith(LONG_NOTE)  # summarise, not copy
    assert len(agent.history[2].content) > 30_000  # type: ignore[union-attr]


def test_a_small_model_sees_the_active_skills_tools_first(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    def now() -> str:
        """The current time."""
        return "12:00"

    llm_server.script(Text(ANSWER), Text(ANSWER))
    agent = small_agent(llm, runtime)
    agent.send("Hi")
    agent.activate(Skill(name="clock", tools=(now,)))
    agent.send("Hi")
    before, after = (request["messages"][0]["content"] for request in llm_server.requests)
    assert "clock__now" not in before
    assert after.index("- clock__now(") < after.index("- calculator(")
    assert agent.tools == ["calculator", "clock__now"]  # the agent's own order is unchanged
