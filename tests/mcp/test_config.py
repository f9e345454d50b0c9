from __future__ import annotations

import pytest

from agent_smith import ConfigError, ServerConfig


def test_from_dict_builds_a_stdio_config_with_tuples() -> None:
    config = ServerConfig.from_dict(
        {
            "alias": "fs",
            "command": ["python", "server.py"],
            "env": {"A": "1"},
            "cwd": "/tmp",
            "request_timeout": 5,
            "allow_tools": ["read"],
            "deny_tools": ["write"],
            "tools_required": False,
            "reconnect": False,
        }
    )
    assert config.command == ("python", "server.py")
    assert config.allow_tools == ("read",)
    assert config.request_timeout == 5.0
    assert config.env == {"A": "1"}
    assert not config.tools_required and not config.reconnect
    assert config.protocol_version == "2025-06-18"


def test_from_dict_builds_an_http_config() -> None:
    config = ServerConfig.from_dict(
        {
            "alias": "web",
            "url": "http://127.0.0.1:1/mcp",
            "bearer_token": "t",
            "headers": {"X": "y"},
        }
    )
    assert config.url == "http://127.0.0.1:1/mcp"
    assert config.headers == {"X": "y"}


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"alias": "a", "command": ["x"], "bogus": 1}, "bogus"),
        ({"alias": "a", "command": "python server.py"}, "command"),
        ({"alias": "a", "command": ["x"], "request_timeout": "30"}, "request_timeout"),
        ({"alias": "a", "command": ["x"], "reconnect": "yes"}, "reconnect"),
        ({"alias": "a", "command": ["x"], "env": {"A": 1}}, "env"),
        ({"alias": "a", "url": 5}, "url"),
        ({"alias": "a", "command": ["x"], "deny_tools": [1]}, "deny_tools"),
    ],
)
def test_from_dict_names_the_bad_key(data: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        ServerConfig.from_dict(data)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"command": ("x",), "url": "http://127.0.0.1/mcp"},
        {"command": ("x",), "request_timeout": 0},
        {"command": ("x",), "protocol_version": "2024-11-05"},
        {"url": "ftp://host"},
    ],
)
def test_invalid_configs_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        ServerConfig(alias="a", **fields)  # type: ignore[arg-type]


def test_missing_alias_is_refused() -> None:
    with pytest.raises(ConfigError, match="alias"):
        ServerConfig.from_dict({"command": ["x"]})


def test_deny_wins_over_allow_and_empty_allow_allows_all() -> None:
    config = ServerConfig(alias="a", command=("x",), allow_tools=("a", "b"), deny_tools=("b",))
    assert config.allows("a")
    assert not config.allows("b")
    assert not config.allows("c")
    assert ServerConfig(alias="a", command=("x",), deny_tools=("b",)).allows("c")


def test_require_approval_marks_every_tool_or_the_named_ones() -> None:
    every = ServerConfig(alias="a", url="http://127.0.0.1:1/mcp", require_approval=True)
    named = ServerConfig.from_dict(
        {"alias": "b", "url": "http://127.0.0.1:1/mcp", "require_approval": ["write"]}
    )
    assert every.needs_approval("anything")
    assert named.require_approval == ("write",)
    assert named.needs_approval("write") and not named.needs_approval("read")
    assert not ServerConfig(alias="c", url="http://127.0.0.1:1/mcp").needs_approval("write")


@pytest.mark.parametrize("value", ["yes", [1], {"write": True}])
def test_require_approval_must_be_a_flag_or_tool_names(value: object) -> None:
    with pytest.raises(ConfigError, match="require_approval"):
        ServerConfig.from_dict(
            {"alias": "a", "url": "http://127.0.0.1:1/mcp", "require_approval": value}
        )
    with pytest.raises(ConfigError, match="require_approval"):
        ServerConfig(alias="a", url="http://127.0.0.1:1/mcp", require_approval=value)  # type: ignore[arg-type]


def test_the_discover_wait_is_short_over_stdio_only_and_configurable() -> None:
    stdio = ServerConfig(alias="a", command=("x",))
    assert stdio.discover_wait == 5.0
    assert ServerConfig(alias="a", command=("x",), request_timeout=2).discover_wait == 2
    assert ServerConfig(alias="a", url="http://127.0.0.1:1/mcp").discover_wait == 30
    given = ServerConfig.from_dict({"alias": "a", "command": ["x"], "discover_timeout": 1})
    assert given.discover_wait == 1.0
    with pytest.raises(ConfigError, match="discover_timeout"):
        ServerConfig(alias="a", command=("x",), discover_timeout=0)
