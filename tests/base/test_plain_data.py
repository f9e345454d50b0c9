from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pytest

from agent_smith import ConfigError
from agent_smith.base.plain_data import from_plain


@dataclass(frozen=True)
class Settings:
    count: int = 1
    ratio: float = 0.5
    on: bool = True
    name: str = ""
    limit: int | None = None
    words: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ConfigError("count must not be negative")


def test_values_are_checked_and_converted() -> None:
    settings = from_plain(
        Settings,
        {"count": 2, "ratio": 1, "on": False, "limit": None, "words": ["a"], "extra": {"k": [1]}},
        where="s",
    )
    assert settings == Settings(2, 1.0, False, "", None, ("a",), {"k": [1]})
    assert isinstance(settings.ratio, float)
    assert from_plain(Settings, asdict(settings), where="s") == settings


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"count": True}, "s.count must be an integer, got a boolean"),
        ({"count": 1.5}, "s.count must be an integer, got a number"),
        ({"ratio": "1"}, "s.ratio must be a number, got a string"),
        ({"on": 1}, "s.on must be true or false"),
        ({"name": None}, "s.name must be a string, got null"),
        ({"limit": "3"}, "s.limit must be an integer"),
        ({"words": "a"}, "s.words must be a list"),
        ({"words": [1]}, r"s.words\[0\] must be a string"),
        ({"extra": []}, "s.extra must be an object"),
        ({"other": 1}, "s: unknown key 'other'"),
        ({"count": -1}, "s: count must not be negative"),
    ],
)
def test_a_bad_value_names_its_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_plain(Settings, data, where="s")


def test_a_non_object_is_refused() -> None:
    with pytest.raises(ConfigError, match="s must be an object, got a list"):
        from_plain(Settings, [1], where="s")


def test_usage_limits_and_compaction_come_from_json() -> None:
    from agent_smith import AgentConfig, Compaction, ModelPrice, UsageLimits

    config = from_plain(
        AgentConfig,
        {
            "usage_limits": {"max_cost": 2, "prices": {"m": {"input": 1, "output": 2}}},
            "compaction": {"threshold": 0.7},
        },
        where="spec.config",
    )
    assert config.usage_limits == UsageLimits(
        max_cost=2.0, prices={"m": ModelPrice(input=1.0, output=2.0)}
    )
    assert config.compaction == Compaction(threshold=0.7)
    with pytest.raises(ConfigError, match=r"spec\.config\.usage_limits\.prices\.m\.input"):
        from_plain(
            AgentConfig, {"usage_limits": {"prices": {"m": {"input": "x"}}}}, where="spec.config"
        )


def test_a_policy_mode_comes_from_json_and_a_wrong_one_is_named() -> None:
    from agent_smith import AgentConfig

    assert from_plain(AgentConfig, {"mode": "read"}, where="c").mode == "read"
    with pytest.raises(ConfigError, match=r"c\.mode must be one of"):
        from_plain(AgentConfig, {"mode": "admin"}, where="c")
