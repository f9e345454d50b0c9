"""The finish check: one hidden question when the model stops; an unfinished turn goes on."""

from __future__ import annotations

from agent_smith import Agent, AgentConfig, UserMessage
from agent_smith.agent.finish_check import CONTINUE_NOTE, QUESTION
from agent_smith.llm.client import LlmClient
from tests.support.llm_server import Raw, ScriptedLlmServer, Text


def test_an_unfinished_task_goes_on_and_the_question_is_never_recorded(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("Step one done."), Text("NO"), Text("All done."), Text("YES"))
    agent = Agent(llm, config=AgentConfig(finish_check=True))
    answer = agent.send("Do both steps.")
    assert answer.content == "All done."
    assert [m.content for m in agent.history] == [
        "Do both steps.",
        "Step one done.",
        CONTINUE_NOTE.content,
        "All done.",
    ]
    question = llm_server.requests[1]
    assert question["messages"][-1] == {"role": "user", "content": QUESTION}
    assert "tools" not in question and question["max_tokens"] == 8
    assert answer.usage is not None and answer.usage.total == 4 * 15  # the checks count


def test_the_checks_are_bounded_and_a_failed_check_lets_the_answer_stand(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("a"), Text("no"), Text("b"), Text("no"), Text("c"))
    agent = Agent(llm, config=AgentConfig(finish_check=True))
    assert agent.send("go").content == "c"  # two checks said no; the third answer stands
    llm_server.script(Text("d"), Raw(500, "down"))
    assert agent.send("again").content == "d"


def test_off_by_default(llm: LlmClient, llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Text("done"))
    agent = Agent(llm)
    agent.send("go")
    assert len(llm_server.requests) == 1
    assert agent.history == [UserMessage("go"), agent.history[1]]
