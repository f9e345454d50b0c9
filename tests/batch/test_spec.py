from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest

from agent_smith import (
    AgentConfig,
    AgentSpec,
    ConfigError,
    SamplingParams,
    ServerConfig,
)
from tests.support.batch import Verdict
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

EXAMPLE_SERVER = Path(__file__).resolve().parents[2] / "examples" / "mcp_server_example.py"

FULL = {
    "base_url": "http://127.0.0.1:8080",
    "model": "qwen",
    "api_key_env": "BATCH_TEST_KEY",
    "system_prompt": "Be brief.",
    "tools": ["tests.support.batch:worker_pid", "tests.support.batch:ShoutTool"],
    "mcp_servers": [{"alias": "demo", "command": ["python", "server.py"]}],
    "config": {"max_iterations": 4, "deadline": 30},
    "sampling": {"temperature": 0, "stop": ["\n\n"], "extra": {"seed": 1}},
    "request_timeout": 20,
    "output_type": "tests.support.batch:Verdict",
    "approver": "tests.support.batch:deny_everything",
}


def test_a_spec_loads_from_json_and_round_trips() -> None:
    spec = AgentSpec.from_json(json.dumps(FULL))
    assert spec.tools == ("tests.support.batch:worker_pid", "tests.support.batch:ShoutTool")
    assert spec.mcp_servers == (ServerConfig(alias="demo", command=("python", "server.py")),)
    assert spec.config == AgentConfig(max_iterations=4, deadline=30.0)
    assert spec.sampling == SamplingParams(temperature=0.0, stop=("\n\n",), extra={"seed": 1})
    assert spec.request_timeout == 20.0
    assert AgentSpec.from_dict(spec.to_dict()) == spec
    assert json.loads(json.dumps(spec.to_dict())) == spec.to_dict()


def test_a_spec_pickles_and_its_key_is_stable() -> None:
    spec = AgentSpec.from_dict(FULL)
    copy = pickle.loads(pickle.dumps(spec))
    assert copy == spec
    assert copy.key == spec.key
    other = AgentSpec.from_dict({**FULL, "system_prompt": "Be long."})
    assert other.key != spec.key


def test_load_names_the_file_and_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text('{"model": "m"}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"spec\.json: agent spec: missing key 'base_url'"):
        AgentSpec.load(path)
    for text in ("{not json", "[" * 100_000):  # the second: deeper than the parser goes
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match="not valid JSON"):
            AgentSpec.load(path)
    with pytest.raises(ConfigError, match="cannot read agent spec"):
        AgentSpec.load(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bogus": 1}, "unknown key 'bogus'"),
        ({"base_url": "localhost:8080"}, "http"),
        ({"base_url": 8080}, "'base_url' must be a string"),
        ({"api_key_env": "sk-123 secret"}, "api_key_env must name an environment variable"),
        ({"tools": "tests.support.batch:add"}, "'tools' must be a list"),
        ({"tools": ["tests.support.batch.add"]}, r"tools\[0\] must be an importable name"),
        ({"output_type": "Verdict"}, "output_type must be an importable name"),
        ({"config": {"max_iterations": "8"}}, "config.max_iterations must be an integer"),
        ({"config": {"max_iterations": 0}}, "max_iterations must be positive"),
        ({"config": {"stream": "yes"}}, "config.stream must be true or false"),
        ({"config": {"nope": 1}}, "config: unknown key 'nope'"),
        ({"config": []}, "config must be an object"),
        ({"sampling": {"temperature": "hot"}}, "sampling.temperature must be a number"),
        ({"sampling": {"stop": [1]}}, r"sampling.stop\[0\] must be a string"),
        ({"mcp_servers": [{"alias": "a"}]}, r"mcp_servers\[0\]: .*exactly one of"),
        ({"mcp_servers": {"alias": "a"}}, "must be a list of MCP server objects"),
        ({"request_timeout": 0}, "request_timeout must be a positive number"),
        ({"request_timeout": "60"}, "'request_timeout' must be a number"),
    ],
)
def test_bad_values_name_the_key(change: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        AgentSpec.from_dict({"base_url": "http://127.0.0.1:8080", **change})


def test_an_mcp_server_with_oauth_cannot_travel_in_a_spec() -> None:
    server = {"alias": "web", "url": "http://127.0.0.1:1/mcp", "auth": {"client_id": "me"}}
    with pytest.raises(ConfigError, match="'web' uses OAuth"):
        AgentSpec.from_dict({"base_url": "http://h", "mcp_servers": [server]})


def test_the_approver_decides_on_calls_that_need_approval() -> None:
    with ScriptedLlmServer() as server:
        server.script(Calls(("delete_record", {"name": "x"})), Text("done"))
        spec = AgentSpec(
            server.url,
            tools=("tests.support.batch:delete_record",),
            approver="tests.support.batch:deny_everything",
        )
        with spec.build() as agent:
            agent.send("delete x")
    (result,) = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert '"denied":true' in result["content"].replace(" ", "")
    with pytest.raises(ConfigError, match="is not a function"):
        AgentSpec("http://h", approver="tests.support.batch:NOT_A_TOOL").resolve_approver()


def test_two_mcp_servers_may_not_share_an_alias() -> None:
    server = {"alias": "a", "command": ["x"]}
    with pytest.raises(ConfigError, match="same alias"):
        AgentSpec.from_dict({"base_url": "http://h", "mcp_servers": [server, server]})


def test_tools_resolve_from_objects_classes_and_functions() -> None:
    spec = AgentSpec(
        "http://127.0.0.1:1",
        tools=(
            "tests.support.batch:worker_pid",
            "tests.support.batch:ShoutTool",
            "tests.support.batch:add",
        ),
    )
    assert [t.name for t in spec.resolve_tools()] == ["worker_pid", "shout", "add"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("tests.support.nowhere:tool", "cannot import 'tests.support.nowhere'"),
        ("tests.support.batch:missing", "has no 'missing'"),
        ("tests.support.batch:NOT_A_TOOL", "is not a tool, a Tool class or a function"),
    ],
)
def test_a_tool_that_does_not_resolve_is_a_config_error(name: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        AgentSpec("http://127.0.0.1:1", tools=(name,)).resolve_tools()


def test_the_output_type_resolves_to_a_type() -> None:
    spec = AgentSpec("http://h", output_type="tests.support.batch:Verdict")
    assert spec.resolve_output_type() is Verdict
    generic = AgentSpec("http://h", output_type="tests.support.batch:Verdicts")
    assert generic.resolve_output_type() == list["Verdict"]
    assert AgentSpec("http://h").resolve_output_type() is None
    with pytest.raises(ConfigError, match="is not a type"):
        AgentSpec("http://h", output_type="tests.support.batch:NOT_A_TOOL").resolve_output_type()


def test_the_api_key_comes_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = AgentSpec("http://h", api_key_env="BATCH_TEST_KEY")
    monkeypatch.delenv("BATCH_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="BATCH_TEST_KEY is not set"):
        spec.api_key()
    monkeypatch.setenv("BATCH_TEST_KEY", "sk-secret")
    assert spec.api_key() == "sk-secret"
    assert "sk-secret" not in json.dumps(spec.to_dict())
    assert b"sk-secret" not in pickle.dumps(spec)


def test_build_makes_a_working_agent_with_the_key_and_sampling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BATCH_TEST_KEY", "sk-secret")
    with ScriptedLlmServer() as server:
        server.script(Calls(("shout", {"text": "hi"})), Text("done"))
        spec = AgentSpec(
            server.url,
            model="m",
            api_key_env="BATCH_TEST_KEY",
            system_prompt="Be loud.",
            tools=("tests.support.batch:ShoutTool",),
            sampling=SamplingParams(temperature=0.0),
        )
        with spec.build() as agent:
            assert agent.send("shout hi").content == "done"
    first, second = server.requests
    assert first["model"] == "m" and first["temperature"] == 0.0
    assert first["messages"][0] == {"role": "system", "content": "Be loud."}
    assert server.headers[0]["Authorization"] == "Bearer sk-secret"
    assert second["messages"][-1]["content"] == "HI"


def test_build_connects_the_mcp_servers_and_the_agent_closes_them(no_thread_leak: None) -> None:
    server = ServerConfig(alias="demo", command=(sys.executable, str(EXAMPLE_SERVER)))
    spec = AgentSpec("http://127.0.0.1:1", mcp_servers=(server,))
    agent = spec.build()
    try:
        assert "mcp_demo__echo" in agent.tools
    finally:
        agent.close()


def test_build_gives_the_agent_its_output_type() -> None:
    spec = AgentSpec("http://127.0.0.1:1", output_type="tests.support.batch:Verdict")
    agent = spec.build()
    try:
        assert agent.output_type is Verdict
    finally:
        agent.close()
    unusable = AgentSpec("http://127.0.0.1:1", output_type="tests.support.batch:Verdicts")
    with pytest.raises(ConfigError, match="output_type"):
        unusable.build()  # list["Verdict"]: a forward reference has no JSON schema
